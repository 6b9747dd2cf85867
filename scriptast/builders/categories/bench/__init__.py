"""Category 6, bench: its rule (tp/pp/ep of the last trtllm-bench)
and its steps (prepare, run)."""
