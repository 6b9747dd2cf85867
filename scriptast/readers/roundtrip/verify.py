"""The verifier: parse emitted bash with bashlex and check it says what the model says.

Checks: the text parses (payloads too, recursively); no `#SBATCH` line after the first command;
each directive reads back (by sbatch's tokenizer) as the model's; each command's words, read back
from their raw text, equal the model's; each srun argv parses back into the model's step.
"""

from __future__ import annotations

import contextlib
import functools
import signal
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import msgspec

from scriptast.common.memo import Memo
from scriptast.errors import VerifyError
from scriptast.model.composition import Composition
from scriptast.model.docker import DockerRun
from scriptast.model.script import Script, Statement
from scriptast.model.slurm import SbatchDirective, SrunStep
from scriptast.model.statements import (
    AndOr,
    Assign,
    Blank,
    Command,
    Comment,
    Export,
    For,
    If,
    Payload,
    Unset,
)
from scriptast.model.words import Lit, Word, WordPart, concat
from scriptast.readers.roundtrip.readback import (
    has_raw_shell,
    literal_value,
    normalize,
    read_word,
    sbatch_tokens,
)
from scriptast.readers.roundtrip.sbatch_header import scan_header
from scriptast.readers.roundtrip.srun_argv import parse_srun


class _Expected(msgspec.Struct, frozen=True):
    words: tuple[Word, ...]
    redirects: tuple[tuple[str, str, str], ...] = ()
    payload: Payload | None = None
    srun: SrunStep | None = None


class _Actual(msgspec.Struct, frozen=True):
    words: tuple[str, ...]
    redirects: tuple[tuple[str, str, str], ...]


class Composer(Protocol):
    """What the verifier asks of the emitter whose text it checks: how it composes a script
    (its head and statement texts, directive lines, argv lines, words and payloads)."""

    def compose(self, node: Script | Payload) -> Composition: ...
    def directive(self, directive: SbatchDirective) -> str: ...
    def srun_lines(self, step: SrunStep) -> tuple[tuple[Word, ...], ...]: ...
    def docker_lines(self, run: DockerRun) -> tuple[tuple[Word, ...], ...]: ...
    def word(self, word: Word, *, command_position: bool = False) -> str: ...


def verify_emitted(
    text: str, node: Script | Payload, emitter: Composer, composition: Composition | None = None
) -> None:
    """Raise VerifyError unless `text` reads back as `node` as `emitter` composes it.

    When `text` is exactly the node's statements joined by newlines (under comment-only head
    lines), each statement's text is parsed and compared on its own, and a verified pair is
    remembered: statements repeat across the steps and jobs of a sweep. A piece that could
    reach into the next one (a trailing backslash, a here-document) sends the whole text
    through one parse instead, as does text that is not the emitter's composition.
    `composition` is `emitter.compose(node)` when the caller has it already."""
    if isinstance(node, Script):
        _check_directives(text, node, emitter)
    composed = emitter.compose(node) if composition is None else composition
    if not _piecewise(text, composed):
        _verify_statements(text, node.body, emitter)
        return
    for piece, statement, encoded in zip(composed.texts, node.body, composed.keys, strict=True):
        key = None if encoded is None else (piece, encoded)
        if key is not None and VERIFIED.get(key):
            continue
        _verify_statements(piece, (statement,), emitter)
        if key is not None:
            VERIFIED.put(key, True)


VERIFIED: Memo[bool] = Memo(4096)
"""(statement text, statement encoding) pairs already verified."""


def _piecewise(text: str, composed: Composition) -> bool:
    """Whether `text` can be checked statement by statement: it is the composition, its head
    lines are comments, and no statement's text could reach into the next one."""
    if any(line and not line.startswith("#") for line in composed.head):
        return False
    if any(piece.endswith("\\") or "<<" in piece for piece in composed.texts):
        return False
    return composed.text == text


def _verify_statements(text: str, statements: tuple[Statement, ...], emitter: Composer) -> None:
    expected: list[_Expected] = []
    for statement in statements:
        expected.extend(_expected(statement, emitter))
    actual = parse_commands(text)
    if len(actual) != len(expected):
        raise VerifyError(
            f"emitted text has {len(actual)} commands where the model has {len(expected)}"
        )
    for want, got in zip(expected, actual, strict=True):
        _compare(want, got, emitter)


PARSE_SECONDS = 10


class _ParseTimeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Bound a parse (bashlex loops on some inputs); only the main thread can set an alarm."""

    def expire(signum: int, frame: object) -> None:
        raise _ParseTimeout

    try:
        previous = signal.signal(signal.SIGALRM, expire)
    except ValueError:  # not the main thread
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def parse_commands(text: str) -> list[_Actual]:
    """Every simple command of `text` in source order, as raw word texts and redirects.

    The text's shape (readers/roundtrip/shapes.py: its literal pieces replaced by stand-ins)
    is what bashlex parses, once per shape; word positions in the shape map back to the text.
    Text without a shape is parsed whole."""
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.split("\n")):
        return []
    from scriptast.readers.roundtrip.shapes import shape_of

    shape = shape_of(text) if FAST_PATH else None
    if shape is None:
        return _materialize(_parse_spans(text), text, lambda offset: offset)
    found = SHAPES.get(shape.text)
    if found is None:
        found = _parse_spans(shape.text)
        SHAPES.put(shape.text, found)
    return _materialize(found, text, shape.position)


FAST_PATH = True
"""False parses every text whole (the property tests compare the two verdicts)."""
SHAPES: Memo[tuple[_Found, ...]] = Memo(4096)
"""Parsed structure of each shape seen, in the shape's offsets."""


Span = tuple[int, int]


class _Found(msgspec.Struct, frozen=True):
    """A simple command as bashlex read it: word spans, and redirects as (fd, type, target
    span or the literal target bashlex gives for `>&2`/`>&-`)."""

    words: tuple[Span | str, ...]
    redirects: tuple[tuple[str, str, Span | str], ...]


def _parse_spans(text: str) -> tuple[_Found, ...]:
    from scriptast.readers.roundtrip.bashlex_loader import import_bashlex

    bashlex = import_bashlex()
    try:
        with _time_limit(PARSE_SECONDS):
            trees = bashlex.parse(text)
    except _ParseTimeout:
        raise VerifyError(f"bashlex did not finish parsing within {PARSE_SECONDS} s") from None
    except Exception as error:
        raise VerifyError(f"emitted text does not parse: {error}") from None
    found: list[_Found] = []
    for tree in trees:
        _collect(tree, found)
    return tuple(found)


def _materialize(
    found: tuple[_Found, ...], text: str, position: Callable[[int], int]
) -> list[_Actual]:
    def raw(span: Span | str) -> str:
        if isinstance(span, str):
            return span
        return text[position(span[0]) : position(span[1])]

    actual = []
    for command in found:
        words = tuple(raw(word) for word in command.words)
        redirects = tuple(
            (fd, kind, target if isinstance(target, str) else literal_value(read_word(raw(target))))
            for fd, kind, target in command.redirects
        )
        actual.append(_Actual(words, redirects))
    return actual


def _collect(node: Any, found: list[_Found]) -> None:
    kind = node.kind
    if kind == "command":
        words: list[Span | str] = []
        redirects: list[tuple[str, str, Span | str]] = []
        for part in node.parts:
            if part.kind in ("word", "assignment"):
                words.append((part.pos[0], part.pos[1]))
            elif part.kind == "redirect":
                redirects.append(_redirect(part))
            else:
                raise VerifyError(f"unexpected {part.kind} in a command")
        found.append(_Found(tuple(words), tuple(redirects)))
        return
    if kind == "for":
        items: list[Span | str] = []
        seen_in = False
        for part in node.parts:
            if part.kind == "reservedword" and part.word == "in":
                seen_in = True
            elif part.kind == "word" and seen_in:
                items.append((part.pos[0], part.pos[1]))
            elif part.kind == "reservedword" and seen_in:
                break
        variable = next(p for p in node.parts if p.kind == "word")
        head: tuple[Span | str, ...] = ("for", (variable.pos[0], variable.pos[1]), "in")
        found.append(_Found((*head, *items), ()))
    for child in getattr(node, "parts", []) or getattr(node, "list", []):
        if kind == "for" and child.kind == "word":
            continue
        _collect(child, found)


def _redirect(part: Any) -> tuple[str, str, Span | str]:
    fd = "" if part.input is None else str(part.input)
    target = part.output
    if isinstance(target, int | str):  # `>&2`, and `>&-` (bashlex gives the text)
        return (fd, part.type, str(target))
    return (fd, part.type, (target.pos[0], target.pos[1]))


def _lit(value: str) -> Word:
    return Lit(value=value)


def _expected(statement: Statement, emitter: Composer) -> list[_Expected]:
    match statement:
        case Command():
            words = tuple(concat(f"{a.name}=", a.value) for a in statement.assigns)
            redirects = tuple(
                (
                    "" if r.fd is None else str(r.fd),
                    r.op,
                    literal_value(normalize(r.target)),
                )
                for r in statement.redirects
            )
            return [_Expected(words + statement.argv, redirects)]
        case Assign():
            return [_Expected((concat(f"{statement.name}=", statement.value),))]
        case Export():
            if statement.value is None:
                return [_Expected((_lit("export"), _lit(statement.name)))]
            return [_Expected((_lit("export"), concat(f"{statement.name}=", statement.value)))]
        case Unset():
            return [_Expected((_lit("unset"), *statement.names))]
        case AndOr():
            left = statement.left
            return [*_expected(left, emitter), *_expected(statement.right, emitter)]
        case If():
            found = _expected(statement.condition, emitter)
            for inner in statement.then + statement.orelse:
                found.extend(_expected(inner, emitter))
            return found
        case For():
            head = (_lit("for"), _lit(statement.var), _lit("in"), *statement.items)
            found = [_Expected(head)]
            for inner in statement.body:
                found.extend(_expected(inner, emitter))
            return found
        case Comment() | Blank():
            return []
        case SrunStep():
            lines = emitter.srun_lines(statement)
            return [_Expected(_flat(lines), payload=statement.payload, srun=statement)]
        case DockerRun():
            lines = emitter.docker_lines(statement)
            return [_Expected(_flat(lines), payload=statement.payload)]
        case _:
            raise TypeError(f"verifier has no rule for {type(statement).__name__}")


def _flat(lines: tuple[tuple[Word, ...], ...]) -> tuple[Word, ...]:
    return tuple(word for line in lines for word in line)


def _compare(want: _Expected, got: _Actual, emitter: Composer) -> None:
    if len(want.words) != len(got.words):
        raise VerifyError(
            f"command {got.words[:3]} reads back with {len(got.words)} words, "
            f"the model has {len(want.words)}"
        )
    read: list[tuple[WordPart, ...]] = []
    for model_word, raw in zip(want.words, got.words, strict=True):
        if has_raw_shell(model_word):
            if emitter.word(model_word) != raw:
                raise VerifyError(f"raw shell word {raw!r} is not what the model holds")
            read.append(normalize(model_word))
            continue
        parts = read_word(raw)
        if parts != normalize(model_word):
            raise VerifyError(
                f"word {raw!r} reads back as {parts!r}, not {normalize(model_word)!r}"
            )
        read.append(parts)
    if want.redirects != got.redirects:
        raise VerifyError(f"redirects {got.redirects} differ from the model's {want.redirects}")
    if want.srun is not None:
        argv = [literal_value(parts) for parts in read]
        parsed = parse_srun(argv)
        expected = msgspec.structs.replace(want.srun, payload=None, command=parsed.command)
        if parsed != expected:
            raise VerifyError(f"srun step reads back as {parsed!r}, not {expected!r}")
    if want.payload is not None:
        payload_text = literal_value(read[-1])
        composed = emitter.compose(want.payload)
        if payload_text != composed.text:
            raise VerifyError("a payload does not read back as the text emitted for it")
        verify_emitted(payload_text, want.payload, emitter, composed)


def _check_directives(text: str, script: Script, emitter: Composer) -> None:
    header = scan_header(text)
    if header.late:
        late = list(header.late)
        raise VerifyError(
            f"#SBATCH on line(s) {late} come after the first command; sbatch ignores them"
        )
    got = [line for _, line in header.directives]
    if [_directive_line_tokens(line) for line in got] != [
        _directive_tokens(d.option, d.value) for d in script.directives
    ]:
        want = [emitter.directive(d) for d in script.directives]
        raise VerifyError(f"#SBATCH lines {got} do not read back as the model's {want}")


@functools.lru_cache(maxsize=1024)
def _directive_line_tokens(line: str) -> tuple[str, ...]:
    """The tokens sbatch reads from an `#SBATCH` line (remembered: jobs share most lines)."""
    return tuple(sbatch_tokens(line[len("#SBATCH") :]))


def _directive_tokens(option: str, value: str | int | None) -> tuple[str, ...]:
    return (f"--{option}" if value is None else f"--{option}={value}",)
