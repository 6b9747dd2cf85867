"""Readers that several callers share read as the tools they stand for: pyxis's mount entries,
Slurm's gres lists, sbatch's header, and bash's quoting for user commands and emitted words."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from scriptast.builders.resolution.mounts import parse_mount_entry
from scriptast.errors import ResolveError, VerifyError
from scriptast.model.slurm import Mount, split_mount
from scriptast.model.slurm_options import gres_gpus
from scriptast.model.words import Lit, Param
from scriptast.readers.linter.lint import lint_text
from scriptast.readers.roundtrip.readback import Unterminated, WordReader, read_word, scan_word
from scriptast.readers.roundtrip.sbatch_header import scan_header
from scriptast.readers.roundtrip.srun_argv import parse_mounts
from scriptast.readers.shellwords import tokenize


@pytest.mark.parametrize(
    ("entry", "parts"),
    [
        ("/data", ("/data", "/data", ())),
        ("/a:/b", ("/a", "/b", ())),
        ("/a:/b:", ("/a", "/b", ())),  # pyxis: empty flags are none
        ("/a:/b:ro+x-create=dir", ("/a", "/b", ("ro", "x-create=dir"))),
        (":/b", None),  # pyxis: invalid format
        ("/a:", None),
        ("/a:/b:ro:x", None),
    ],
)
def test_a_mount_entry_reads_as_pyxis_reads_it(
    entry: str, parts: tuple[str, str, tuple[str, ...]] | None
) -> None:
    assert split_mount(entry) == parts


def test_both_mount_readers_use_it() -> None:
    assert parse_mounts("/a:/b:,/c") == (
        Mount(source="/a", target="/b"),
        Mount(source="/c", target="/c"),
    )
    assert parse_mount_entry("/a:/b:") == Mount(source="/a", target="/b")
    with pytest.raises(VerifyError, match="is not SRC:DST"):
        parse_mounts(":/b")
    with pytest.raises(
        ResolveError, match=r"slurm_env.mounts entry ':/b' is not SRC:DST\[:FLAGS\]"
    ):
        parse_mount_entry(":/b")


@pytest.mark.parametrize(
    ("gres", "gpus"),
    [
        ("gpu:8", 8),
        ("gpu:h100:8(IDX:0-7)", 8),
        ("craynetwork:4,gpu:4", 4),
        ("gpu:a100:4(S:0-1),shard:2", 4),
        ("(null)", None),
        ("", None),
        (None, None),
        ("mygpu:3", None),
    ],
)
def test_the_gpu_count_of_a_gres_list(gres: str | None, gpus: int | None) -> None:
    assert gres_gpus(gres) == gpus


def test_the_header_is_what_sbatch_reads() -> None:
    """sbatch ignores an #SBATCH line after the first command; one inside a multi-line string
    (line 8) is the text of another script being written, so it is not this file's mistake."""
    text = "#!/bin/bash\n#SBATCH -N 1\n# note\n  #SBATCH --ntasks=2\necho hi\n#SBATCH --time=1\nx='\n#SBATCH --gres=gpu:1'\n"
    header = scan_header(text)
    assert header.directives == ((2, "#SBATCH -N 1"), (4, "#SBATCH --ntasks=2"))
    assert header.first_command == 5 and header.late == (6, 8)
    late = [
        f.where for f in lint_text(text, context="s").findings if "after the first" in f.message
    ]
    assert late == ["s:6"]


def test_a_script_without_a_command_has_no_late_lines() -> None:
    header = scan_header("#!/bin/bash\n#SBATCH --nodes=1")
    assert header.first_command is None and header.late == ()


@pytest.mark.parametrize(
    ("text", "value", "expands"),
    [
        ("a'b c'\"d\"", "ab cd", False),
        ('"x\\$y"', "x$y", False),
        ("$HOME/x", "$HOME/x", True),
        ('"$HOME"', "$HOME", True),
        ("a*", "a*", True),
        ("$'a'", "$a", True),
        ("a\\\nb", "ab", True),
    ],
)
def test_a_command_word_is_scanned_with_its_expansions_as_written(
    text: str, value: str, expands: bool
) -> None:
    assert scan_word(text, 0) == (value, expands, len(text))


def test_scanning_stops_where_bash_ends_the_word() -> None:
    assert scan_word("ab;cd", 0) == ("ab", False, 2)
    assert [t.value for t in tokenize("x 'a;b' | y")] == ["x", "a;b", "|", "y"]


def test_an_emitted_word_is_read_with_its_parameters() -> None:
    assert read_word("'a b'\"${HOME}\"x") == (Lit(value="a b"), Param(name="HOME"), Lit(value="x"))
    with pytest.raises(VerifyError, match="backquote substitution"):
        read_word("`x`")


@given(st.text(alphabet="ab '\"\\$;", max_size=12))
def test_both_readings_agree_on_plain_words(text: str) -> None:
    """Where a scanned word is plain (no expansion) and whole, the strict reading of the
    same text gives the same literal."""
    try:
        value, expands, end = scan_word(text, 0)
    except Unterminated:
        return
    if expands or end != len(text):
        return
    parts = read_word(text)
    assert "".join(p.value for p in parts if isinstance(p, Lit)) == value


def _scanned_by_characters(text: str, pos: int) -> tuple[str, bool, int] | str:
    reader = WordReader(text, pos, scanning=True)
    try:
        reader.read()
    except Unterminated as error:
        return error.quote
    value = "".join(part.value for part in reader.parts if isinstance(part, Lit))
    return value, reader.expands, reader.pos


@given(st.text(alphabet="ab1-=/ \t\n;&|<>()'\"\\$`~*?[]{}\r\xa0", max_size=16), st.integers(0, 16))
def test_a_plain_run_is_scanned_as_the_character_reader_scans_it(text: str, pos: int) -> None:
    """scan_word takes a word of plain characters by pattern; every text reads the same as
    through the character reader."""
    pos = min(pos, len(text))
    try:
        fast: tuple[str, bool, int] | str = scan_word(text, pos)
    except Unterminated as error:
        fast = error.quote
    assert fast == _scanned_by_characters(text, pos)
