"""Category 4, perf_sanity: submit.py's plan, and the eval it takes over (a multi-node
one, or one given a disaggregated config) with its accuracy config."""
