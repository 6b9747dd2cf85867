"""The scheduler backends, each a folder registered by name (`registry`): how a category's steps
become the scheduler's script, and how run submits, polls and cancels there. Imports builders
and below; never a transport (the transport is handed in)."""
