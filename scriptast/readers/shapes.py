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

from scriptast.bashlex_limits import confuses_bashlex
from scriptast.node import RESERVED_WORDS

_PARAM = r"\$\{!?[A-Za-z_][A-Za-z0-9_]*(?::-[A-Za-z0-9_@%+=:,./-]*|@)?\}"
_TOKEN = re.compile(
    r"""(?P<comment>(?<![^ \t\n;&|()<>])\#[^\n]*)
      | (?P<between>[ \t]+|\n|&&|\|\||;;|>>|>&|<&|&>|[;&|()<>])
      | (?P<plain>[A-Za-z0-9_./=,:+@%#-]+)
      | (?P<single>'[^']*')
      | (?P<ansi>\$'(?:[^'\\]|\\.)*')
      | (?P<escape>\\.)
      | (?P<double>"(?:[^"\\$`]|\\[^\n]|\$[?\#@!$*0-9-]|"""
    + _PARAM
    + r""")*")
      | (?P<param>"""
    + _PARAM
    + r""")
      | (?P<kept>[!{}\[\]])
    """,
    re.VERBOSE | re.DOTALL,
)
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
    tokens: list[tuple[str, int, int]] = []
    expected = 0
    for match in _TOKEN.finditer(text):
        if match.start() != expected:
            return None
        kind = match.lastgroup
        assert kind is not None
        if kind == "escape" and match.group() == "\\\n" and tokens and tokens[-1][0] != "between":
            return None  # a line continuation inside a word
        tokens.append((kind, match.start(), match.end()))
        expected = match.end()
    if expected != len(text):
        return None
    return _build(text, tokens)


def _build(text: str, tokens: list[tuple[str, int, int]]) -> Shape:
    out: list[str] = []
    replaced: list[tuple[int, int, int, int]] = []
    size = 0
    index = 0
    while index < len(tokens):
        kind, start, end = tokens[index]
        if kind in ("between", "comment"):
            piece = "#" if kind == "comment" else text[start:end]
            if kind == "comment":
                replaced.append((size, size + 1, start, end))
            out.append(piece)
            size += len(piece)
            index += 1
            continue
        last = index
        while last + 1 < len(tokens) and tokens[last + 1][0] not in ("between", "comment"):
            last += 1
        word = tokens[index : last + 1]
        before = text[tokens[index - 1][1] : tokens[index - 1][2]] if index else ""
        after = text[tokens[last + 1][1] : tokens[last + 1][2]] if last + 1 < len(tokens) else ""
        keep = (
            before in _REDIRECTIONS
            or after[:1] in ("<", ">")
            or text[start : word[-1][2]] in RESERVED_WORDS
            or any(piece_kind == "kept" for piece_kind, _, _ in word)
        )
        for piece_kind, piece_start, piece_end in word:
            standin = None if keep else _STANDIN.get(piece_kind)
            if standin is not None and confuses_bashlex(text[piece_start:piece_end]):
                standin = None  # bashlex misreads it even in quotes: it must see it as it is
            if standin is None:
                out.append(text[piece_start:piece_end])
                size += piece_end - piece_start
            else:
                replaced.append((size, size + len(standin), piece_start, piece_end))
                out.append(standin)
                size += len(standin)
        index = last + 1
    return Shape("".join(out), tuple(r[0] for r in replaced), tuple(replaced))
