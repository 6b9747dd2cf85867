"""The bash emitter: a Script or Payload as deterministic bash text (it only writes).

`BashEmitter().emit(node)` dispatches on the node's type, one private method per node class, and
ends in a loud default. Quoting is delegated to `scriptast.emitters.quote`; reading the text back
is `scriptast.readers.roundtrip.verify`'s, and `scriptast.pipeline.verified_emit.emit` does both.
"""

from __future__ import annotations

from scriptast.common.memo import Memo, node_key
from scriptast.emitters.argv_lines import (
    ArgvLines,
    docker_option_lines,
    run_lines,
    srun_option_lines,
)
from scriptast.emitters.quote import bash_word, dup_target, sbatch_value
from scriptast.errors import UnsupportedError
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
    Redirect,
    Unset,
)
from scriptast.model.words import Concat, Lit, Param, RawShell, Word

INDENT = "    "
EMITTED: Memo[list[str]] = Memo(2048)
"""Lines of statements already emitted, by emitter class, depth and the node's encoding."""


class BashEmitter:
    """Writes model nodes as bash. Subclass to change a target's spelling, not with `if`s."""

    def emit(self, node: Script | Payload) -> str:
        return self.compose(node).text

    def compose(self, node: Script | Payload) -> Composition:
        """The node's text in its pieces: head lines, and each top-level statement's text."""
        match node:
            case Script():
                head = tuple(self.head_lines(node))
            case Payload():
                head = ()
            case _:
                raise TypeError(f"BashEmitter.emit cannot emit {type(node).__name__}")
        keys = tuple(node_key(statement) for statement in node.body)
        texts = tuple(
            "\n".join(self._remembered(statement, 0, key))
            for statement, key in zip(node.body, keys, strict=True)
        )
        return Composition(head, texts, keys, final_newline=isinstance(node, Script))

    def payload_text(self, payload: Payload) -> str:
        """The payload's text as it goes, quoted, after `bash -c` (no trailing newline)."""
        return self.compose(payload).text

    def head_lines(self, script: Script) -> list[str]:
        """Shebang, header comments, #SBATCH lines and the blank line after them."""
        lines = [script.shebang]
        lines.extend(self._comment(c, 0) for c in script.header)
        lines.extend(self.directive(d) for d in script.directives)
        if script.directives or script.header:
            lines.append("")
        return lines

    def directive(self, directive: SbatchDirective) -> str:
        if directive.value is None:
            return f"#SBATCH --{directive.option}"
        return f"#SBATCH --{directive.option}={sbatch_value(str(directive.value))}"

    def _statements(self, statements: tuple[Statement, ...], depth: int) -> list[str]:
        lines: list[str] = []
        for statement in statements:
            lines.extend(self._remembered(statement, depth, node_key(statement)))
        return lines

    def _remembered(self, statement: Statement, depth: int, encoded: bytes | None) -> list[str]:
        """`statement(...)`, remembered by the statement's encoding: nodes are frozen, and jobs
        built in a loop share most of their statements (preamble, container, install)."""
        if encoded is None:
            return self.statement(statement, depth)
        key = (type(self), depth, encoded)
        lines = EMITTED.get(key)
        if lines is None:
            lines = self.statement(statement, depth)
            EMITTED.put(key, lines)
        return list(lines)

    def statement(self, statement: Statement, depth: int) -> list[str]:
        pad = INDENT * depth
        match statement:
            case Command():
                return [pad + self.command(statement)]
            case Assign():
                return [pad + self.assignment(statement)]
            case Export():
                return [pad + self._export(statement)]
            case Unset():
                return [pad + " ".join(["unset", *(self.word(n) for n in statement.names)])]
            case AndOr():
                return [pad + self.and_or(statement)]
            case If():
                return self._if(statement, depth)
            case For():
                return self._for(statement, depth)
            case Comment():
                return [self._comment(statement, depth)]
            case Blank():
                return [""]
            case SrunStep():
                return self._argv_lines(self.srun_lines(statement), depth)
            case DockerRun():
                return self._argv_lines(self.docker_lines(statement), depth)
            case _:
                raise TypeError(f"BashEmitter has no rule for {type(statement).__name__}")

    def srun_lines(self, step: SrunStep) -> ArgvLines:
        payload = None if step.payload is None else self.payload_text(step.payload)
        return srun_option_lines(step) + run_lines(step.command, payload)

    def docker_lines(self, run: DockerRun) -> ArgvLines:
        payload = None if run.payload is None else self.payload_text(run.payload)
        return docker_option_lines(run) + run_lines(run.command, payload)

    def _argv_lines(self, groups: ArgvLines, depth: int) -> list[str]:
        pad = INDENT * depth
        rendered = []
        for index, group in enumerate(groups):
            words = [
                self.word(w, command_position=index == 0 and i == 0) for i, w in enumerate(group)
            ]
            rendered.append(" ".join(words))
        text = (" \\\n" + pad + INDENT).join(rendered)
        return [pad + text]

    def command(self, command: Command) -> str:
        pieces = [self.assignment(a) for a in command.assigns]
        pieces.extend(self.word(w, command_position=i == 0) for i, w in enumerate(command.argv))
        pieces.extend(self.redirect(r) for r in command.redirects)
        return " ".join(pieces)

    def redirect(self, redirect: Redirect) -> str:
        fd = "" if redirect.fd is None else str(redirect.fd)
        if redirect.op == ">&":
            target = redirect.target
            text = dup_target(target.value) if isinstance(target, Lit) else self.word(target)
            return f"{fd}>&{text}"
        return f"{fd}{redirect.op} {self.word(redirect.target)}"

    def assignment(self, assign: Assign) -> str:
        return f"{assign.name}={self.word(assign.value)}"

    def _export(self, export: Export) -> str:
        if export.value is None:
            return f"export {export.name}"
        return f"export {export.name}={self.word(export.value)}"

    def and_or(self, node: AndOr) -> str:
        left = self.command(node.left) if isinstance(node.left, Command) else self.and_or(node.left)
        return f"{left} {node.op} {self.command(node.right)}"

    def _condition(self, condition: Command | AndOr) -> str:
        return self.command(condition) if isinstance(condition, Command) else self.and_or(condition)

    def _if(self, node: If, depth: int) -> list[str]:
        pad = INDENT * depth
        lines = [f"{pad}if {self._condition(node.condition)}; then"]
        lines.extend(self._statements(node.then, depth + 1))
        if node.orelse:
            lines.append(f"{pad}else")
            lines.extend(self._statements(node.orelse, depth + 1))
        lines.append(f"{pad}fi")
        return lines

    def _for(self, node: For, depth: int) -> list[str]:
        pad = INDENT * depth
        items = " ".join(self.word(w) for w in node.items)
        lines = [f"{pad}for {node.var} in {items}; do"]
        lines.extend(self._statements(node.body, depth + 1))
        lines.append(f"{pad}done")
        return lines

    def _comment(self, comment: Comment, depth: int) -> str:
        pad = INDENT * depth
        return f"{pad}# {comment.text}".rstrip() if comment.text else f"{pad}#"

    def word(self, word: Word, *, command_position: bool = False) -> str:
        match word:
            case Lit():
                return bash_word(word.value, command_position=command_position)
            case Param():
                return self.param(word)
            case RawShell():
                return word.text
            case Concat():
                rendered = []
                for index, part in enumerate(word.parts):
                    if isinstance(part, Lit) and not part.value:
                        continue
                    rendered.append(
                        self.word(part, command_position=command_position and index == 0)
                    )
                return "".join(rendered) or "''"
            case _:
                raise UnsupportedError(f"bash has no word form for {type(word).__name__}")

    def param(self, param: Param) -> str:
        if param.form == "prefix_names":
            return f'"${{!{param.name}@}}"'
        if param.form == "default":
            return f'"${{{param.name}:-{param.default}}}"'
        if len(param.name) == 1 and not param.name.isalpha():
            return f'"${param.name}"'
        return f'"${{{param.name}}}"'
