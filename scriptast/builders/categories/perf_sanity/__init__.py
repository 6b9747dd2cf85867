"""Category 4, perf_sanity: its part of the request, submit.py's plan, and the multi-node
eval fallback's accuracy config."""
