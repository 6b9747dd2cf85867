"""`python -m scriptast`: the console script's entry, the same fast paths included."""

from scriptast.cli.entry import main

main()
