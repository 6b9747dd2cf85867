"""Shell statements: commands, assignments, exports, unset, if, for, and/or lists, comments.

`ShellStatement` is the tagged union of `Command`, `Assign`, `Export`, `Unset`, `If`, `For`,
`AndOr`, `Comment` and `Blank`. A `Payload` is a small script of these that runs inside
`bash -c`; the emitter writes it as text, then quotes that text as one word.
"""

from __future__ import annotations

from typing import Literal

from scriptast.errors import ModelError
from scriptast.model.node import Node, check_identifier, check_single_line
from scriptast.model.words import Lit, Word, WordLike, as_word, literal_text


class Redirect(Node, frozen=True, kw_only=True, tag="redirect"):
    """A redirection: `[fd]op target`, e.g. `>&2` is op='>&', target=Lit('2')."""

    op: Literal[">", ">>", "<", ">&"]
    target: Word
    fd: int | None = None

    def __post_init__(self) -> None:
        if self.fd is not None and not 0 <= self.fd <= 9:
            raise ModelError(f"redirect file descriptor {self.fd} must be 0..9", field="fd")
        target = self.target
        if (
            self.op == ">&"
            and isinstance(target, Lit)
            and target.value.isdecimal()
            and target.value != str(int(target.value))
        ):
            # bash reads any all-digit target of `>&` as a descriptor number, quoted or not
            raise ModelError(
                f"`>&{target.value}` duplicates descriptor {int(target.value)}: write it as "
                f"{int(target.value)}",
                field="target",
            )


class Command(Node, frozen=True, kw_only=True, tag="command"):
    """A simple command: argv words, with optional leading assignments and redirections."""

    argv: tuple[Word, ...]
    assigns: tuple[Assign, ...] = ()
    redirects: tuple[Redirect, ...] = ()

    def __post_init__(self) -> None:
        if not self.argv:
            raise ModelError("a command needs at least one word", field="argv")


class Assign(Node, frozen=True, kw_only=True, tag="assign"):
    """`NAME=value` as a statement of its own, or a command's leading assignment."""

    name: str
    value: Word

    def __post_init__(self) -> None:
        check_identifier(self.name, "assignment name")


class Export(Node, frozen=True, kw_only=True, tag="export"):
    """`export NAME=value`, or `export NAME` when value is None."""

    name: str
    value: Word | None = None

    def __post_init__(self) -> None:
        check_identifier(self.name, "exported name")


class Unset(Node, frozen=True, kw_only=True, tag="unset"):
    """`unset WORD...`; literal words must be identifiers, expansions are taken as they come."""

    names: tuple[Word, ...]

    def __post_init__(self) -> None:
        if not self.names:
            raise ModelError("unset needs at least one name", field="names")
        for name in self.names:
            text = literal_text(name)
            if text is not None:
                check_identifier(text, "unset name")


class AndOr(Node, frozen=True, kw_only=True, tag="and_or"):
    """`left && right` or `left || right`; chains nest on the left."""

    op: Literal["&&", "||"]
    left: Command | AndOr
    right: Command


class If(Node, frozen=True, kw_only=True, tag="if"):
    """`if condition; then ...; [else ...;] fi`."""

    condition: Command | AndOr
    then: tuple[ShellStatement, ...]
    orelse: tuple[ShellStatement, ...] = ()

    def __post_init__(self) -> None:
        if not _has_code(self.then):
            raise ModelError("an if needs at least one command in its then branch", field="then")
        if self.orelse and not _has_code(self.orelse):
            raise ModelError("an else branch needs at least one command", field="orelse")


class For(Node, frozen=True, kw_only=True, tag="for"):
    """`for var in items...; do body; done`."""

    var: str
    items: tuple[Word, ...]
    body: tuple[ShellStatement, ...]

    def __post_init__(self) -> None:
        check_identifier(self.var, "loop variable")
        if not self.items:
            raise ModelError("a for loop needs at least one item", field="items")
        if not _has_code(self.body):
            raise ModelError("a for loop needs at least one command in its body", field="body")


class Comment(Node, frozen=True, kw_only=True, tag="comment"):
    """`# text` on a line of its own."""

    text: str

    def __post_init__(self) -> None:
        check_single_line(self.text, "comment")


class Blank(Node, frozen=True, kw_only=True, tag="blank"):
    """An empty line, for readability."""


ShellStatement = Command | Assign | Export | Unset | AndOr | If | For | Comment | Blank
"""A statement of plain shell: `Command` | `Assign` | `Export` | `Unset` | `AndOr` | `If` |
`For` | `Comment` | `Blank`."""


def _has_code(statements: tuple[ShellStatement, ...]) -> bool:
    return any(not isinstance(s, Comment | Blank) for s in statements)


class Payload(Node, frozen=True, kw_only=True, tag="payload"):
    """The script that runs inside `bash -c '<payload>'` (an srun step's or docker run's)."""

    body: tuple[ShellStatement, ...]

    def __post_init__(self) -> None:
        if not _has_code(self.body):
            raise ModelError("a payload needs at least one command", field="body")


def cmd(*argv: WordLike, redirects: tuple[Redirect, ...] = ()) -> Command:
    """A command from words or plain strings: `cmd("echo", "hello world")` is emitted as
    `echo 'hello world'`."""
    return Command(argv=tuple(as_word(a) for a in argv), redirects=redirects)


def to_stderr() -> Redirect:
    """`>&2`."""
    return Redirect(op=">&", target=Lit(value="2"))
