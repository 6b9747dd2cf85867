"""Category 5, eval: its part of the request, its rule (single node, else the perf-sanity
fallback) and its steps."""
