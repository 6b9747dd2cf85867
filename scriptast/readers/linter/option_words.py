"""Read the option words of one sbatch or srun command line as Slurm's getopt_long does: long
names exact, abbreviated or in an old spelling, letters bundled (`-lN2`), values written on the
option or in the next word, and each value as Slurm reads it; what only the running script
knows (`--ntasks=$N`, `"${args[@]}"`) is set aside as not checked."""

from __future__ import annotations

import re

import msgspec

from scriptast.readers.linter.sbatch_values import value_problem
from scriptast.readers.linter.slurm_cli import Ambiguous, CliOption, Table, long_option

CLOSE_ENOUGH = 0.8
"""How alike a misspelling and an option's name must be for the name to be suggested."""


class OptionWord(msgspec.Struct, frozen=True):
    """One word as written (`raw`, quotes kept) and its text after quote removal (`text`;
    None when it expands: a variable, an array, a command substitution)."""

    raw: str
    text: str | None


class OptionReading(msgspec.Struct):
    """What the words set: each option by its own name (an old spelling or a prefix resolved)
    with its value (None: it has none, or only the running script knows it), what the command
    refuses (`errors`), what a site's plugin may still accept (`notes`), the words only the
    running script knows, and where the words that are not options begin (`operands_at`; srun:
    its command) or, for a command that reads on past them, those words (`operands`)."""

    options: list[tuple[str, str | None]] = msgspec.field(default_factory=list)
    errors: list[str] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    not_checked: list[str] = msgspec.field(default_factory=list)
    operands_at: int = 0
    operands: list[str] = msgspec.field(default_factory=list)


def literal_words(tokens: list[str]) -> list[OptionWord]:
    """Words whose text is already known (an `#SBATCH` line's, split as sbatch splits it)."""
    return [OptionWord(token, token) for token in tokens]


def read_options(
    options: Table,
    words: list[OptionWord],
    *,
    stop_at_operand: bool,
    plugins_declared: bool,
    dollar_expanded: bool = False,
) -> OptionReading:
    """Read `words` (the words after the command's name). `stop_at_operand`: the first word
    that is not an option ends the options (srun: it is the program to run); otherwise such
    words are collected. `plugins_declared`: the cluster's plugin options are known, so an
    option nobody has is refused rather than noted. `dollar_expanded`: a `$` in a value was
    expanded when the text was written, so such a value is not judged."""
    reader = _Reader(options, words, plugins_declared, dollar_expanded, stop_at_operand)
    reader.run()
    return reader.reading


class _Reader:
    """One pass over the words, getopt_long's way; what it finds goes into `reading`."""

    def __init__(
        self,
        options: Table,
        words: list[OptionWord],
        declared: bool,
        dollar_expanded: bool,
        stop_at_operand: bool,
    ) -> None:
        self.table = options
        self.words = words
        self.declared = declared
        self.dollar_expanded = dollar_expanded
        self.stop_at_operand = stop_at_operand
        self.reading = OptionReading(operands_at=len(words))
        self.index = 0

    def run(self) -> None:
        stop_at_operand = self.stop_at_operand
        words = self.words
        while self.index < len(words):
            word = words[self.index]
            if word.text is None:
                if not self._expanding(word):
                    break
                continue
            if word.text == "--":
                self.index += 1
                self.reading.operands_at = self.index
                if not stop_at_operand:
                    self.reading.operands += [w.raw for w in words[self.index :]]
                return
            if not word.text.startswith("-") or word.text == "-":
                if stop_at_operand:
                    break
                self.reading.operands.append(word.raw)
                self.index += 1
                continue
            self.index += 1
            if word.text.startswith("--"):
                self._long(word)
            else:
                self._letters(word)
        self.reading.operands_at = self.index

    def _expanding(self, word: OptionWord) -> bool:
        """Take an option word that expands; False when it is the program (nothing to take)."""
        written = word.raw.lstrip("\"'")
        if written.startswith(("$", "`")):
            if not self._options_may_follow():
                return False
            self.reading.not_checked.append(word.raw)
            self.index += 1
            return True
        if not written.startswith("-"):
            return False
        self.index += 1
        shown = word.raw
        if written.startswith("--"):
            spelled, equals, _ = written[2:].partition("=")
            option = self._resolve(re.split(r"[$`\"'\\]", spelled)[0], equals == "=")
            required = option is not None and option.arg == "required"
            if required and not equals and self.index < len(self.words):
                shown = f"{shown} {self.words[self.index].raw}"
                self.index += 1
        else:
            self._letter_option(written[1:2], written)
        self.reading.not_checked.append(shown)
        return True

    def _options_may_follow(self) -> bool:
        """Whether the expansion here stands for options rather than the command: an array
        (`"${srunArgs[@]}"`, how scripts gather options) with words after it. Any other word
        that begins with `$` ends the options, as it does for srun once the shell has expanded
        it to a path (`$DIR/gkyl -g input.lua`: `-g` is the program's)."""
        index = self.index
        if index + 1 >= len(self.words):
            return False
        return re.search(r"\[[@*]\]\}", self.words[index].raw) is not None

    def _long(self, word: OptionWord) -> None:
        assert word.text is not None
        spelled, equals, inline = word.text[2:].partition("=")
        option = self._resolve(spelled, equals == "=")
        if option is None:
            self._value_of_unknown(equals == "=")
            return
        command = self.table.command
        if equals and option.arg == "no":
            self.reading.errors.append(
                f"--{option.name} takes no value; {command} refuses {word.text}"
            )
            return
        if equals or option.arg != "required":
            self._take(option, inline if equals else None)
            return
        self._value_in_next_word(option, f"--{option.name}")

    def _value_of_unknown(self, has_value: bool) -> None:
        """In an `#SBATCH` line, the word after an option nobody knows (`--image docker:x`) is
        taken for its value, as the plugin that adds the option would have it."""
        if has_value or self.stop_at_operand or self.index >= len(self.words):
            return
        following = self.words[self.index].text
        if following is not None and not following.startswith("-"):
            self.index += 1

    def _resolve(self, spelled: str, has_value: bool) -> CliOption | None:
        """The option `--spelled` is; None (with an error or a note said) when there is none."""
        found = long_option(self.table, spelled)
        if isinstance(found, CliOption):
            return found
        command = self.table.command
        if isinstance(found, Ambiguous):
            listed = ", ".join(f"--{name}" for name in found.matches)
            self.reading.errors.append(
                f"--{spelled} is ambiguous to {command} ({listed}): it refuses it; write the "
                "whole name"
            )
        elif self.declared:
            self.reading.errors.append(
                f"--{spelled} is not an option of {command} or of this cluster's plugins "
                f"(slurm_env.json plugin_options): {command} there refuses it{self._close(spelled)}"
            )
        else:
            taken = "" if has_value or not self.stop_at_operand else "; read as taking no value"
            self.reading.notes.append(
                f"--{spelled} is not an option of Slurm's {command} or pyxis; a site's SPANK "
                "plugin may add it (check it with --slurm-env-file: probe-slurm records the "
                f"cluster's plugin options){taken}{self._close(spelled)}"
            )
        return None

    def _close(self, spelled: str) -> str:
        import difflib

        names = [option.name for option in self.table.longs]
        close = difflib.get_close_matches(spelled, names, n=1, cutoff=CLOSE_ENOUGH)
        return f" (did you mean --{close[0]}?)" if close else ""

    def _letters(self, word: OptionWord) -> None:
        """`-N2`, `-N 2`, `-lv`: one-letter options, a value written on or after them."""
        assert word.text is not None
        token = word.text
        misspelt = one_dash_long(self.table, token)
        if misspelt is not None:
            self.reading.errors.append(misspelt)
            return
        position = 1
        while position < len(token):
            option = self._letter_option(token[position], token)
            if option is None:
                return
            position += 1
            if option.arg == "no":
                self._take(option, None)
                continue
            attached = token[position:]
            if attached or option.arg == "optional":
                self._take(option, attached or None)
                return
            self._value_in_next_word(option, f"-{token[position - 1]}")
            return

    def _letter_option(self, letter: str, token: str) -> CliOption | None:
        option = self.table.shorts.get(letter)
        if option is None:
            command = self.table.command
            self.reading.errors.append(
                f"{command} has no option -{letter} ({token}); it refuses it"
            )
        return option

    def _value_in_next_word(self, option: CliOption, written: str) -> None:
        command = self.table.command
        if self.index >= len(self.words):
            self.reading.errors.append(f"{written} needs a value; {command} refuses it")
            return
        word = self.words[self.index]
        self.index += 1
        if word.text is None:
            self.reading.not_checked.append(f"{written} {word.raw}")
            return
        self._take(option, word.text)

    def _take(self, option: CliOption, value: str | None) -> None:
        if value is not None and not (self.dollar_expanded and "$" in value):
            problem = value_problem(option.canonical, value, self.table.command)
            if problem is not None:
                self.reading.errors.append(problem)
        self.reading.options.append((option.canonical, value))


def one_dash_long(options: Table, token: str) -> str | None:
    """`-partition=x` or `-pmix`: a long option (or an MPI plugin) written with one dash, which
    getopt reads letter by letter: `-p artition=x`, `-p mix`."""
    body = token[1:]
    name = body.split("=", 1)[0]
    letter = options.shorts.get(body[:1])
    if letter is None or len(body) < 3:
        return None
    full = long_option(options, name)
    plugin = MPI_WORD.match(body) if options.command == "srun" else None
    if not (isinstance(full, CliOption) and full.name == name) and plugin is None:
        return None
    meant = f"--mpi={body}" if plugin is not None else f"-{token}"
    return (
        f"{token} is -{body[0]} {body[1:]} (--{letter.canonical}={body[1:]}) to "
        f"{options.command}, not {meant}: write {meant}"
    )


MPI_WORD = re.compile(r"(?:pmix(?:_v\d+)?|pmi2|cray_shasta)\Z")
