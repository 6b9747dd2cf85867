"""Quoting: every string survives each context exactly, or is refused with QuoteError."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, strategies as st

from scriptast import Lit, Mount, Payload, Script, cmd, emit
from scriptast.emitters import quote
from scriptast.errors import QuoteError
from scriptast.readers.roundtrip.readback import read_word, sbatch_tokens

SHELL_SPECIALS = "'\"$`\\!*?[]{}()<>|&;#~=%,:"
NASTY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(blacklist_categories=("Cs", "Cc")),
        st.sampled_from(SHELL_SPECIALS + " \t\n"),
    )
)
WITH_CONTROLS = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=1, max_codepoint=0x1F), st.sampled_from(SHELL_SPECIALS)
    ),
    min_size=1,
)
BASH = ["bash", "--norc", "--noprofile"]


def run_bash(script: str) -> bytes:
    result = subprocess.run([*BASH, "-c", script], capture_output=True, check=True)
    return result.stdout


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", "plain"),
        ("/abs/path-1.2_x", "/abs/path-1.2_x"),
        ("--opt=a,b:c@d%e+f", "--opt=a,b:c@d%e+f"),
        ("", "''"),
        ("a b", "'a b'"),
        ("it's", '"it\'s"'),
        ("it's $HOME", "'it'\\''s $HOME'"),
        ("line1\nline2", "'line1\nline2'"),
        ("bell\x07", "$'bell\\x07'"),
        ("#comment", "'#comment'"),
        ("a#b", "a#b"),
        ("~user", "'~user'"),
        ("x=~/y", "'x=~/y'"),
        ("tp4[x]", "'tp4[x]'"),
    ],
)
def test_bash_word_table(value: str, expected: str) -> None:
    assert quote.bash_word(value) == expected


@pytest.mark.parametrize(("value", "elsewhere"), [("A=b", "A=b"), ("if", "if"), ("done", "done")])
def test_bash_word_in_command_position_is_never_a_keyword_or_assignment(
    value: str, elsewhere: str
) -> None:
    assert quote.bash_word(value, command_position=True) == f"'{value}'"
    assert quote.bash_word(value, command_position=False) == elsewhere


def test_nul_is_refused_with_its_offset() -> None:
    with pytest.raises(QuoteError, match="offset 3"):
        quote.bash_word("abc\0d")


@given(NASTY_TEXT)
def test_any_string_reaches_printf_byte_for_byte(value: str) -> None:
    word = quote.bash_word(value)
    assert run_bash(f"printf '%s\\0' {word}") == value.encode() + b"\0"


@given(WITH_CONTROLS)
def test_control_characters_reach_printf_byte_for_byte(value: str) -> None:
    word = quote.bash_word(value)
    assert run_bash(f"printf '%s\\0' {word}") == value.encode() + b"\0"


@given(NASTY_TEXT)
def test_any_string_survives_one_bash_c_deep(value: str) -> None:
    inner = f"printf '%s\\0' {quote.bash_word(value)}"
    outer = " ".join([*BASH, "-c", quote.bash_word(inner)])
    assert run_bash(outer) == value.encode() + b"\0"


@given(NASTY_TEXT)
def test_emitted_nested_payload_delivers_any_argument(value: str) -> None:
    payload = Payload(body=(cmd("printf", "%s\\0", value),))
    script = Script(body=(cmd(*BASH, "-c", Lit(value=emit(payload))),))
    text = emit(script)
    result = subprocess.run([*BASH, "-s"], input=text.encode(), capture_output=True, check=True)
    assert result.stdout == value.encode() + b"\0"


@given(NASTY_TEXT)
def test_read_word_inverts_bash_word(value: str) -> None:
    parts = read_word(quote.bash_word(value))
    assert "".join(p.value for p in parts if isinstance(p, Lit)) == value


@given(NASTY_TEXT.filter(lambda v: "\n" not in v and "hetjob" not in v))
def test_sbatch_value_reads_back_as_one_token(value: str) -> None:
    line = f" --comment={quote.sbatch_value(value)} # trailing"
    assert sbatch_tokens(line) == [f"--comment={value}"]


@pytest.mark.parametrize("value", ["a\nb", "x hetjob y", "nul\0"])
def test_sbatch_value_refuses_what_sbatch_cannot_read(value: str) -> None:
    with pytest.raises(QuoteError, match="#SBATCH"):
        quote.sbatch_value(value)


@pytest.mark.parametrize(("value", "expected"), [("a#b", '"a#b"'), ('q"\\', '"q\\"\\\\"')])
def test_sbatch_value_table(value: str, expected: str) -> None:
    assert quote.sbatch_value(value) == expected


@given(st.text(), st.sampled_from(" ,:"), st.text())
def test_pyxis_refuses_space_comma_colon_and_names_the_path(head: str, bad: str, tail: str) -> None:
    path = "/" + head + bad + tail
    with pytest.raises(QuoteError) as raised:
        quote.pyxis_mounts([Mount(source=path, target="/dst")])
    assert repr(path) in str(raised.value)


def test_pyxis_mount_list() -> None:
    listed = quote.pyxis_mounts(
        [
            Mount(source="/a", target="/b"),
            Mount(source="/c", target="/d", flags=("ro", "x-create=dir")),
        ]
    )
    assert listed == "/a:/b,/c:/d:ro+x-create=dir"


def _docker_csv_fields(text: str) -> list[str]:
    import csv

    return next(csv.reader([text]))


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"))).map(lambda t: "/" + t))
def test_docker_mount_fields_read_back_as_csv(path: str) -> None:
    fields = _docker_csv_fields(quote.docker_mount(path, "/target", readonly=False))
    assert fields == ["type=bind", f"source={path}", "target=/target"]


def test_docker_mount_refuses_newline() -> None:
    with pytest.raises(QuoteError, match="docker"):
        quote.docker_mount("/a\nb", "/t", readonly=True)


@given(st.text(), st.text())
def test_a_nul_anywhere_is_refused_in_every_context(head: str, tail: str) -> None:
    value = head + "\0" + tail
    for encode in (
        quote.bash_word,
        quote.sbatch_value,
        lambda v: quote.docker_mount("/" + v, "/t", readonly=False),
    ):
        with pytest.raises(QuoteError):
            encode(value)
