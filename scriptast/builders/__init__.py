"""Builders, by stage: the request (request/), resolution (resolution/), and one folder per
workflow category (categories/) that says what its job runs as backend-neutral steps."""
