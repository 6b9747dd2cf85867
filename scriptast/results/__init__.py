"""What a finished job measured and what it is held against: figures read from its logs and
files, references, and the store that keeps every run. Imports the contract, readers and below;
the executor records into it."""
