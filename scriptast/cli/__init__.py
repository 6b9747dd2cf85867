"""The command line: the console script, typer commands, the fast paths that skip typer, help.
May import everything below it; nothing imports it (this file imports nothing, for start-up)."""
