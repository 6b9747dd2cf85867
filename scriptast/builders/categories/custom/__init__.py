"""Category 3, custom: its rule and its steps (a generated runner
script)."""
