"""Category 5, eval: its rule (single node, else handed to perf_sanity)
and its steps."""
