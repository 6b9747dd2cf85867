"""The results store: every judged run with its figures, kept across runs (SQLite by default,
PostgreSQL for a team), and what is asked of it (list, show, compare, export, plot)."""
