"""A log reader that looks at whole blocks of lines, not line by line: a block without any of
its keywords costs a few substring scans in C, and only the lines holding one are decoded and
read. Following a job, the figure readers so cost next to nothing beside the scanner's own
per-line work (bench/figures_bench.py)."""

from __future__ import annotations


class KeywordLines:
    """A reader of the lines that hold one of its keywords; `line` reads one such line. A
    block is looked at only when it holds one of `watch` (fewer keywords, scanned first)."""

    def __init__(self, keywords: tuple[bytes, ...], watch: tuple[bytes, ...] = ()) -> None:
        self.keywords = keywords
        self.watch = watch or keywords

    def block(self, data: bytes, source: str, first_line: int) -> None:
        """Take complete lines of the log (no trailing newline), the first being `first_line`."""
        if not any(keyword in data for keyword in self.watch):
            return
        spans: dict[int, int] = {}
        for keyword in self.keywords:
            found = data.find(keyword)
            while found >= 0:
                begin = data.rfind(b"\n", 0, found) + 1
                end = data.find(b"\n", found)
                end = len(data) if end < 0 else end
                spans[begin] = end
                found = data.find(keyword, end)
        for begin in sorted(spans):
            number = first_line + data.count(b"\n", 0, begin)
            text = data[begin : spans[begin]].decode("utf-8", "replace").rstrip("\r")
            self.line(text, source, number)

    def line(self, text: str, source: str, number: int) -> None:
        """Take one line of the log that holds a keyword."""
        raise NotImplementedError
