"""The script model: frozen, typed nodes (words, statements, Slurm pieces, docker run, the
script) and their rules. Imports only scriptast.errors and scriptast.common."""
