"""Category 2, pytest: its rule and steps, and the readers of test
files (selection, marks, what a test body demands)."""
