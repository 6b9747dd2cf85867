"""Inputs that once ended in a traceback (and more like them): each must end in one `error:`
line, exit 1, and leave work_dir as it was. Each case lays out what it needs under `root`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parent.parent.parent


class Case(msgspec.Struct, frozen=True):
    """argv after `scriptast`, standard input, and the files to lay out first."""

    argv: tuple[str, ...]
    stdin: bytes | None = None
    close_stdin: bool = False


def base_fields(root: Path) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads((ROOT / "examples/bench_local_slurm.json").read_text())
    for name in ("repo_root", "slurm_env_file", "models_path"):
        fields[name] = str(ROOT / fields[name])
    fields["work_dir"] = str(root / "work")
    return fields


def _request(root: Path, name: str, data: bytes) -> Case:
    path = root / name
    path.write_bytes(data)
    return Case(("emit", "--request", str(path)))


def _fields(root: Path, **changes: Any) -> bytes:
    return json.dumps({**base_fields(root), **changes}, ensure_ascii=False).encode()


def _with_repo_file(root: Path, relative: str, data: bytes, **changes: Any) -> Case:
    import shutil

    repo = root / "repo"
    if not repo.exists():
        shutil.copytree(ROOT / "tests/fixtures/trtllm", repo)
    (repo / relative).parent.mkdir(parents=True, exist_ok=True)
    (repo / relative).write_bytes(data)
    return _request(root, "r.json", _fields(root, repo_root=str(repo), **changes))


def _verify(root: Path, data: bytes) -> Case:
    path = root / "script.slurm"
    path.write_bytes(data)
    return Case(("verify", str(path)))


def _sweep(root: Path, data: bytes) -> Case:
    path = root / "sweep.jsonl"
    path.write_bytes(data)
    return Case(("emit", "--requests", str(path)))


PYTEST_FILE = "tests/integration/defs/accuracy/test_x.py"
CASES: dict[str, Callable[[Path], Case]] = {
    "request_utf16": lambda r: _request(r, "r.json", _fields(r).decode().encode("utf-16")),
    "request_latin1": lambda r: _request(
        r, "r.json", _fields(r, model_name="café").decode().encode("latin-1")
    ),
    "request_binary": lambda r: _request(r, "r.json", os.urandom(64) + b"\xff"),
    "request_yaml_int_key": lambda r: _request(r, "r.yaml", b"1: bench\n"),
    "request_yaml_null_key": lambda r: _request(r, "r.yaml", b"~: bench\n"),
    "request_yaml_list_key": lambda r: _request(r, "r.yaml", b"? [a, b]\n: x\n"),
    "request_yaml_bad_syntax": lambda r: _request(r, "r.yaml", b"a: [1\nb: }\n"),
    "request_yaml_tab_indent": lambda r: _request(r, "r.yaml", b"a:\n\t- x\n"),
    "request_yaml_date_value": lambda r: _request(
        r, "r.yaml", b"workflow_type: 2024-01-01\nexecution_scenario: local_slurm\n"
    ),
    "request_toml_bad": lambda r: _request(r, "r.toml", b"a = = 1\n"),
    "request_json_nested_depth": lambda r: _request(r, "r.json", b"[" * 100_000),
    "request_is_a_directory": lambda r: Case(("emit", "--request", str(_folder(r, "d.json")))),
    "stdin_closed": lambda r: Case(("emit", "--request", "-"), close_stdin=True),
    "stdin_not_utf8": lambda r: Case(("emit", "--request", "-"), stdin=b"\xff\xfe{\x00"),
    "stdin_empty": lambda r: Case(("emit", "--request", "-"), stdin=b""),
    "sweep_nested_depth": lambda r: _sweep(r, b"[" * 100_000 + b"\n"),
    "slurm_env_nested_depth": lambda r: _request(
        r, "r.json", _fields(r, slurm_env_file=str(_write(r, "env.json", b"[" * 100_000)))
    ),
    "request_yaml_nested_depth": lambda r: _request(r, "r.yaml", b"[" * 100_000),
    "surrogate_in_model_name": lambda r: _request(
        r, "r.json", _fields(r).replace(b'"bench"', b'"bench", "model_name": "\\udc80"', 1)
    ),
    "surrogate_in_flag": lambda r: Case(
        ("emit", "--request", str(_write(r, "r.json", _fields(r))), "--partition", "b\udcffx")
    ),
    "surrogate_in_work_dir": lambda r: Case(
        (
            "emit",
            "--request",
            str(_write(r, "r.json", _fields(r))),
            "--work-dir",
            str(r / "w\udc80"),
        )
    ),
    "nul_in_bench_cmd": lambda r: _request(
        r, "r.json", _fields(r, bench_cmd="trtllm-bench\u0000x")
    ),
    "nul_in_work_dir": lambda r: _request(r, "r.json", _fields(r, work_dir=str(r / "a\u0000b"))),
    "nul_in_env_check": lambda r: _request(
        r,
        "r.json",
        _fields(r, models_path=None, env_check={"default_models_repo": "/m\u0000x"}),
    ),
    "component_over_255_work_dir": lambda r: _request(
        r, "r.json", _fields(r, work_dir=str(r / ("w" * 300)))
    ),
    "component_over_255_repo_root": lambda r: _request(
        r, "r.json", _fields(r, repo_root=str(r / ("x" * 256)))
    ),
    "component_over_255_model_name": lambda r: _request(
        r, "r.json", _fields(r, model_name="m" * 300)
    ),
    "path_over_4096": lambda r: _request(
        r, "r.json", _fields(r, slurm_env_file="/" + "/".join(["d" * 200] * 25))
    ),
    "slurm_env_not_utf8": lambda r: _request(
        r, "r.json", _fields(r, slurm_env_file=str(_write(r, "env.json", b'{"a": "\xe9"}')))
    ),
    "slurm_env_a_list": lambda r: _request(
        r, "r.json", _fields(r, slurm_env_file=str(_write(r, "env.json", b"[]")))
    ),
    "properties_not_utf8": lambda r: _with_repo_file(
        r, "jenkins/current_image_tags.properties", b"LLM_DOCKER_IMAGE=caf\xe9\n"
    ),
    "properties_injected_image": lambda r: _with_repo_file(
        r, "jenkins/current_image_tags.properties", b"LLM_DOCKER_IMAGE=--privileged\n"
    ),
    "test_file_not_utf8": lambda r: _with_repo_file(
        r,
        PYTEST_FILE,
        b"# caf\xe9\ndef test_a(): pass\n",
        workflow_type="pytest",
        test_cmd=f"pytest {PYTEST_FILE}::test_a",
    ),
    "test_file_with_nul": lambda r: _with_repo_file(
        r,
        PYTEST_FILE,
        b"def test_a():\x00 pass\n",
        workflow_type="pytest",
        test_cmd=f"pytest {PYTEST_FILE}::test_a",
    ),
    "custom_script_unreadable_dir": lambda r: _request(
        r,
        "r.json",
        _fields(r, workflow_type="custom", bench_cmd=None, custom_script=str(r)),
    ),
    "image_option_injection": lambda r: _request(
        r, "r.json", _fields(r, container_image="--volume=/:/host")
    ),
    "image_with_space": lambda r: _request(r, "r.json", _fields(r, container_image="a b")),
    "model_name_slash": lambda r: _request(r, "r.json", _fields(r, model_name="/")),
    "model_name_dotdot": lambda r: _request(r, "r.json", _fields(r, model_name="../../..")),
    "work_dir_backslash": lambda r: _request(r, "r.json", _fields(r, work_dir=str(r / "a\\b"))),
    "work_dir_is_a_file": lambda r: _request(
        r, "r.json", _fields(r, work_dir=str(_write(r, "file", b"x")))
    ),
    "job_spec_is_a_directory": lambda r: _request(
        _folder(r, "work/job_spec.json").parent.parent, "r.json", _fields(r)
    ),
    "sweep_not_found": lambda r: Case(("emit", "--requests", str(r / "missing.jsonl"))),
    "sweep_utf16": lambda r: _sweep(r, _fields(r).decode().encode("utf-16")),
    "sweep_surrogate": lambda r: _sweep(r, _fields(r).replace(b'"bench"', b'"\\udc80"', 1)),
    "verify_not_utf8": lambda r: _verify(r, b"#!/bin/bash\necho caf\xe9\n"),
    "verify_crlf": lambda r: _verify(r, b"#!/bin/bash\r\necho hi\r\n"),
    "verify_nul": lambda r: _verify(r, b"#!/bin/bash\necho \x00\n"),
    "verify_missing": lambda r: Case(("verify", str(r / "missing.slurm"))),
}


def _folder(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir(parents=True)
    return path


def _write(root: Path, name: str, data: bytes) -> Path:
    path = root / name
    path.write_bytes(data)
    return path
