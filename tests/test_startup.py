"""Start-up: what `import scriptast` loads, and the bashlex table cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HEAVY = ("typer", "rich", "pydantic", "bashlex", "click", "yaml")


def _loaded_after(
    code: str, env: dict[str, str] | None = None, base: dict[str, str] | None = None
) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**(dict(os.environ) if base is None else base), **(env or {})},
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_scriptast_loads_no_heavy_module() -> None:
    assert not _loaded_after("import scriptast") & set(HEAVY)


def test_building_and_emitting_without_verification_loads_no_heavy_module() -> None:
    code = (
        "from scriptast import Script, cmd, emit, SrunStep, Payload, PyxisContainer\n"
        "emit(Script(body=(SrunStep(container=PyxisContainer(image='i'), "
        "payload=Payload(body=(cmd('true'),))),)), verify=False)"
    )
    assert not _loaded_after(code) & set(HEAVY)


def test_version_does_not_import_typer() -> None:
    code = "import sys\nsys.argv = ['scriptast', '--version']\nfrom scriptast.cli.entry import main\nmain()"
    assert "typer" not in _loaded_after(code)


def test_plain_emit_runs_without_typer(tmp_path: Path) -> None:
    request = Path(__file__).resolve().parent.parent / "examples" / "bench_local_slurm.json"
    code = (
        "import sys, io\n"
        f"sys.argv = ['scriptast', 'emit', '--request', {str(request)!r}, '--stdout']\n"
        "from scriptast.cli.entry import main\n"
        "sys.stdout = io.StringIO()\n"
        "main()\n"
        "assert sys.stdout.getvalue().startswith('#!/bin/bash')\n"
        "sys.stdout = sys.__stdout__"
    )
    loaded = _loaded_after(code)
    assert "bashlex" in loaded  # verification ran
    assert not loaded & {"typer", "click", "rich", "pydantic"}


def test_cached_bashlex_tables_equal_freshly_built_ones(tmp_path: Path) -> None:
    code = (
        "import json\n"
        "from scriptast.readers.roundtrip.bashlex_loader import import_bashlex\n"
        "b = import_bashlex()\n"
        "p = b.parser.yaccparser\n"
        'text = "for a in x; do if [ \\"$a\\" != y ]; then echo \'q\'\\"$a\\"; fi; done"\n'
        "print(json.dumps([{str(k): dict(v) for k, v in p.action.items()}, "
        "{str(k): dict(v) for k, v in p.goto.items()}, b.parse(text)[0].dump()], sort_keys=True))\n"
    )
    # a bashlex whose grammar the shipped tables do not match: they are built and cached
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path),
        "SCRIPTAST_BASHLEX_TABLES": str(tmp_path / "none.json"),
    }

    def run(extra: dict[str, str]) -> str:
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**env, **extra},
        )
        return result.stdout.strip().splitlines()[-1]

    plain = run({"SCRIPTAST_BASHLEX_CACHE": "0"})
    assert not (tmp_path / "scriptast").exists()
    first = run({})
    cache = next((tmp_path / "scriptast").glob("bashlex-tables-*.json"))
    assert cached_tables(cache)["key"]
    second = run({})
    assert plain == first == second


def test_a_stale_cache_is_ignored(tmp_path: Path) -> None:
    folder = tmp_path / "scriptast"
    folder.mkdir()
    tag = sys.implementation.cache_tag
    (folder / f"bashlex-tables-{tag}.json").write_text(
        json.dumps({"key": "stale", "action": {}, "goto": {}})
    )
    code = "from scriptast.readers.roundtrip.bashlex_loader import import_bashlex\nprint(len(import_bashlex().parse('echo hi')))"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "XDG_CACHE_HOME": str(tmp_path),
            "SCRIPTAST_BASHLEX_TABLES": str(tmp_path / "none.json"),
        },
    )
    assert result.stdout.strip() == "1"
    assert cached_tables(folder / f"bashlex-tables-{tag}.json")["key"] != "stale"


def test_shipped_tables_equal_a_fresh_build(tmp_path: Path) -> None:
    from scriptast.readers.roundtrip.bashlex_loader import shipped_path

    code = (
        "import sys\n"
        "from scriptast.readers.roundtrip.bashlex_loader import build_fresh\n"
        "sys.stdout.buffer.write(build_fresh())"
    )
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert fresh == shipped_path().read_bytes(), (
        "bashlex's grammar changed: run python -m scriptast.readers.roundtrip.bashlex_loader"
    )


def test_first_emit_after_install_writes_nothing_into_the_user_cache(tmp_path: Path) -> None:
    from tests.test_cli import console_script

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    result = subprocess.run(
        [
            console_script(),
            "emit",
            "--request",
            str(root / "examples/bench_local_slurm.json"),
            "--stdout",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("#!/bin/bash")
    assert not (tmp_path / "cache").exists() and not (tmp_path / ".cache").exists()


def cached_tables(path: Path) -> dict[str, Any]:
    """The JSON body of a table cache, after its CRC line."""
    data: dict[str, Any] = json.loads(path.read_bytes().partition(b"\n")[2])
    return data


def _corruptions(good: bytes) -> dict[str, bytes]:
    import zlib

    head, _, body = good.partition(b"\n")
    data = json.loads(body)
    state = next(iter(data["action"]))
    torn = dict(data, action={**data["action"], state: {"WORD": "x"}})
    torn_body = json.dumps(torn).encode()
    header = head.rsplit(b" ", 1)[0] + b" "
    return {
        "edited_row_old_crc": head + b"\n" + torn_body,
        "edited_row_new_crc": header + str(zlib.crc32(torn_body)).encode() + b"\n" + torn_body,
        "truncated": good[: len(good) // 2],
        "json_without_header": body,
        "empty_tables": header
        + str(zlib.crc32(b'{"key":"k","action":{},"goto":{}}')).encode()
        + b'\n{"key":"k","action":{},"goto":{}}',
    }


def test_a_corrupt_cache_that_is_valid_json_is_rebuilt(tmp_path: Path) -> None:
    code = (
        "from scriptast.readers.roundtrip.bashlex_loader import import_bashlex\n"
        "print(import_bashlex().parse('for a in x; do echo \"$a\" >&2; done')[0].dump())"
    )
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path),
        "SCRIPTAST_BASHLEX_TABLES": str(tmp_path / "none.json"),
    }

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)

    reference = run()
    assert reference.returncode == 0
    cache = next((tmp_path / "scriptast").glob("bashlex-tables-*.json"))
    good = cache.read_bytes()
    for name, corrupt in _corruptions(good).items():
        cache.write_bytes(corrupt)
        again = run()
        assert again.returncode == 0, (name, again.stderr)
        assert again.stdout == reference.stdout, name
        assert cache.read_bytes() == good, name  # rebuilt and written again


def test_sweep_emits_every_line_and_reports_bad_ones(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from scriptast.cli.app import app

    root = Path(__file__).resolve().parent.parent
    base = json.loads((root / "examples/bench_local_slurm.json").read_text())
    lines = [
        json.dumps(
            {
                **base,
                "work_dir": str(tmp_path / f"w{i}"),
                "bench_cmd": f"trtllm-bench --model org/M{i} throughput --tp {1 + i % 2}",
            }
        )
        for i in range(40)
    ]
    lines.insert(5, "{not json")
    lines.insert(9, json.dumps({**base, "work_dir": str(tmp_path / "bad"), "partition": "nope"}))
    sweep = tmp_path / "sweep.jsonl"
    sweep.write_text("\n".join(lines) + "\n")
    old = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(app, ["emit", "--requests", str(sweep)])
    finally:
        os.chdir(old)
    assert result.exit_code == 1
    assert "Generated 40 of 42 jobs" in result.stdout and "; 2 failed" in result.stdout
    errors = result.stderr.splitlines()
    assert (
        len(errors) == 2
        and f"{sweep} line 6: error: not JSON" in errors[0]
        and f"{sweep} line 10: error: partition 'nope'" in errors[1]
    )
    assert all((tmp_path / f"w{i}" / "job_spec.json").is_file() for i in range(40))
    assert not (tmp_path / "bad").exists()
    spec = json.loads((tmp_path / "w1" / "job_spec.json").read_text())
    assert spec["model_name"] == "m1" and spec["slurm_params"]["ntasks"] == 2


def test_plain_verify_runs_without_typer(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun --mpi=pmix hostname\n")
    code = (
        "import sys, io\n"
        f"sys.argv = ['scriptast', 'verify', {str(script)!r}]\n"
        "from scriptast.cli.entry import main\n"
        "sys.stdout = io.StringIO()\n"
        "try:\n    main()\nexcept SystemExit as done:\n    assert done.code == 0, done.code\n"
        f"assert sys.stdout.getvalue() == {f'{script}: ok' + chr(10)!r}, sys.stdout.getvalue()\n"
        "sys.stdout = sys.__stdout__"
    )
    loaded = _loaded_after(code)
    assert "bashlex" in loaded  # the script was parsed
    assert not loaded & {"typer", "click", "rich", "pydantic"}


@pytest.mark.parametrize(
    ("arguments", "read"),
    [
        (["a.sh"], (["a.sh"], None)),
        (["a.sh", "b.sh", "--slurm-env-file", "e.json"], (["a.sh", "b.sh"], "e.json")),
        (["--slurm-env-file=e.json", "a.sh"], (["a.sh"], "e.json")),
        (["--help"], None),
        (["a.sh", "--slurm-env"], None),
        (["a.sh", "--slurm-env-file"], None),
        (["--slurm-env-file", "e.json"], None),
        (["a.sh", "--slurm-env-file=x", "--slurm-env-file=y"], None),
        ([], None),
    ],
)
def test_the_verify_fast_path_takes_only_what_is_certain(
    arguments: list[str], read: tuple[list[str], str | None] | None
) -> None:
    from scriptast.cli.entry import _plain_verify

    found = _plain_verify(arguments)
    if read is None:
        assert found is None
    else:
        assert found is not None
        assert ([str(p) for p in found[0]], None if found[1] is None else str(found[1])) == read
