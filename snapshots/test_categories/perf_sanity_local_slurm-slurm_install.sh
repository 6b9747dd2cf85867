#!/bin/bash
# Fixture stand-in for the perf install script.
set -euo pipefail
cd "$llmSrcNode"
pip install -e .
