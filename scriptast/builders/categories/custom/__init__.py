"""Category 3, custom: its part of the request, its rule and its steps (a generated runner
script)."""
