"""How emitted text is made of a node's pieces: head lines and one text per statement.

The emitter writes a script as its head lines and its statements' texts joined by newlines; the
verifier checks each statement's text on its own when the whole text is exactly that join.
"""

from __future__ import annotations

import msgspec


class Composition(msgspec.Struct, frozen=True):
    """A node as an emitter composed it: the head lines (a script's shebang, comments and
    directives), each top-level statement's text, the statement's encoding (None for one
    msgspec cannot encode) and whether the text ends in a newline (a script's does)."""

    head: tuple[str, ...]
    texts: tuple[str, ...]
    keys: tuple[bytes | None, ...]
    final_newline: bool

    @property
    def text(self) -> str:
        """The emitted text."""
        return "\n".join((*self.head, *self.texts)) + ("\n" if self.final_newline else "")
