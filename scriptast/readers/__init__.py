"""Readers of shell text, three rooms: `roundtrip/` (emitted text read back and verified against
the model), `linter/` (`scriptast verify` of any script), `shellwords.py` (a user's command
string split into words)."""
