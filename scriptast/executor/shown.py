"""A job's text made safe to show: every control character but newline and tab (terminal escape
sequences, carriage returns that would repaint a line, C1 controls) shown as `\\xNN`, so that
nothing a job prints can move the cursor, recolour the screen or rewrite its own verdict."""

from __future__ import annotations

import codecs
import re

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escaped(found: re.Match[str]) -> str:
    return f"\\x{ord(found.group()):02x}"


def shown(text: str) -> str:
    """`text` with its control characters escaped (a line's ending `\\r` of CRLF dropped)."""
    text = text.replace("\r\n", "\n")
    return CONTROLS.sub(_escaped, text) if CONTROLS.search(text) else text


class ShownStream:
    """Bytes of a log, as they come, turned into bytes safe for a terminal: decoded as UTF-8
    across chunk boundaries (a bad byte shown as U+FFFD), controls escaped. A CR that ends a
    chunk is held until the next, where a newline may follow it."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._held_cr = False

    def __call__(self, data: bytes, final: bool = False) -> bytes:
        text = self._decoder.decode(data, final)
        if self._held_cr:
            text = "\r" + text
        self._held_cr = text.endswith("\r") and not final
        if self._held_cr:
            text = text[:-1]
        return shown(text).encode()

    def flush(self) -> bytes:
        """What is still held (a last CR, an incomplete UTF-8 sequence)."""
        return self(b"", final=True)
