"""Builders, in rooms from the bottom: the request (request/), the shared rules and the resolved
job (resolution/), the category record (category.py), one folder per workflow category
(categories/) saying what its job runs as backend-neutral steps; on top, reading a request
(read_request.py) and resolving it (resolve.py)."""
