#!/bin/bash
# Fixture stand-in for the perf run script.
exec bash -c "$pytestCommand"
