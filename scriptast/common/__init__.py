"""Small helpers every layer may use: bounded memories, close-match hints, reading a user's
text files, what bashlex misreads. Imports only scriptast.errors."""
