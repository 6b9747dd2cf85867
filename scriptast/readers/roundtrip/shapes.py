"""The shape of emitted bash: the text with every literal piece of a word replaced by a fixed
stand-in, so scripts that differ only in their literal values have one shape, parsed once.

What a piece may be replaced with keeps bash's reading of the text: inside single quotes (and
in a `$'...'` string, escapes aside) nothing is special, so `'any text'` becomes `'q'`; a word
of plain characters becomes `w` unless it is a reserved word, holds `!`, `{`, `}`, `[` or `]`,
or touches a redirection; a comment becomes `#`. Quotes, escapes, parameter expansions,
operators, blanks and newlines are kept as they are. Text with anything else (command
substitution, backquotes, globs, a here-document) has no shape and is parsed whole.
A quoted piece that bashlex 0.18 misreads even inside quotes (backquotes, `$(`, an unbalanced
`${`) is kept too, so that bashlex's verdict on the shape is its verdict on the text.
`Shape.position` maps offsets in the shape back to the text."""

from __future__ import annotations

import bisect
import re

import msgspec

from scriptast.common.bashlex_limits import confuses_bashlex
from scriptast.model.node import RESERVED_WORDS

_PARAM = r"\$\{!?[A-Za-z_][A-Za-z0-9_]*(?::-[A-Za-z0-9_@%+=:,./-]*|@)?\}"
_PLAIN = r"[A-Za-z0-9_./=,:+@%#-]+"
_SINGLE = r"'[^']*'"
_PIECES = (
    ("plain", _PLAIN),
    ("single", _SINGLE),
    ("ansi", r"\$'(?:[^'\\]|\\.)*'"),
    ("escape", r"\\[^\n]"),
    ("double", r'"(?:[^"\\$`]|\\[^\n]|\$[?\#@!$*0-9-]|' + _PARAM + r')*"'),
    ("param", _PARAM),
    ("kept", r"[!{}\[\]]"),
)
"""The pieces a word is made of, by kind, in the order they are tried."""
_TOKEN = re.compile(
    r"(?P<comment>(?<![^ \t\n;&|()<>])\#[^\n]*)"
    r"|(?P<blank>(?:[ \t]|\\\n)+|\n)"
    r"|(?P<operator>&&|\|\||;;|>>|>&|<&|&>|[;&|()<>])"
    r"|(?P<word>(?:" + "|".join(pattern for _, pattern in _PIECES) + r")+)",
    re.DOTALL,
)
_PIECE = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _PIECES), re.DOTALL)
_WHOLE_PLAIN = re.compile(_PLAIN + r"\Z")
_WHOLE_SINGLE = re.compile(_SINGLE + r"\Z")
_STANDIN = {"plain": "w", "single": "'q'", "ansi": "'q'"}
_REDIRECTIONS = frozenset({">>", ">&", "<&", "&>", "<", ">"})


class Shape(msgspec.Struct, frozen=True):
    """The shape's text and, for each replaced piece in order, its shape start and end and
    its text start and end."""

    text: str
    starts: tuple[int, ...]
    replaced: tuple[tuple[int, int, int, int], ...]

    def position(self, offset: int) -> int:
        """The text offset of a shape offset at a piece boundary (or outside any piece)."""
        index = bisect.bisect_right(self.starts, offset) - 1
        if index < 0:
            return offset
        shape_start, shape_end, text_start, text_end = self.replaced[index]
        if offset >= shape_end:
            return text_end + (offset - shape_end)
        if offset == shape_start:
            return text_start
        raise ValueError(f"offset {offset} is inside a replaced piece")


def shape_of(text: str) -> Shape | None:
    """The shape of `text`, or None when it holds what the stand-ins cannot keep."""
    if "<<" in text or "<(" in text or ">(" in text:
        return None  # here-documents and process substitutions: parsed whole
    tokens: list[tuple[str | None, int, int]] = []
    expected = 0
    for match in _TOKEN.finditer(text):
        start = match.start()
        if start != expected:
            return None
        kind = match.lastgroup
        expected = match.end()
        if kind == "blank" and tokens and tokens[-1][0] == "word" and text[start] == "\\":
            return None  # a line continuation inside a word
        tokens.append((kind, start, expected))
    if expected != len(text):
        return None
    return _build(text, tokens)


def _build(text: str, tokens: list[tuple[str | None, int, int]]) -> Shape:
    out: list[str] = []
    replaced: list[tuple[int, int, int, int]] = []
    size = 0
    last = len(tokens) - 1
    for index, (kind, start, end) in enumerate(tokens):
        if kind != "word":
            if kind == "comment":
                replaced.append((size, size + 1, start, end))
                out.append("#")
                size += 1
            else:
                out.append(text[start:end])
                size += end - start
            continue
        word = text[start:end]
        keep = (
            word in RESERVED_WORDS
            or (index > 0 and text[tokens[index - 1][1] : tokens[index - 1][2]] in _REDIRECTIONS)
            or (index < last and text[tokens[index + 1][1]] in "<>")
        )
        if keep:
            out.append(word)
            size += end - start
            continue
        if _WHOLE_PLAIN.match(word):
            replaced.append((size, size + 1, start, end))
            out.append("w")
            size += 1
            continue
        if _WHOLE_SINGLE.match(word) and not confuses_bashlex(word):
            replaced.append((size, size + 3, start, end))
            out.append("'q'")
            size += 3
            continue
        size = _build_word(text, start, end, out, replaced, size)
    return Shape("".join(out), tuple(r[0] for r in replaced), tuple(replaced))


def _build_word(
    text: str,
    start: int,
    end: int,
    out: list[str],
    replaced: list[tuple[int, int, int, int]],
    size: int,
) -> int:
    """Append the shape of a word of several pieces; return the shape's new size."""
    pieces = [(m.lastgroup, m.start(), m.end()) for m in _PIECE.finditer(text, start, end)]
    if any(kind == "kept" for kind, _, _ in pieces):
        out.append(text[start:end])
        return size + end - start
    for kind, piece_start, piece_end in pieces:
        standin = _STANDIN.get(kind or "")
        if standin is not None and confuses_bashlex(text[piece_start:piece_end]):
            standin = None  # bashlex misreads it even in quotes: it must see it as it is
        if standin is None:
            out.append(text[piece_start:piece_end])
            size += piece_end - piece_start
        else:
            replaced.append((size, size + len(standin), piece_start, piece_end))
            out.append(standin)
            size += len(standin)
    return size
