"""The install step's two modes, as TRT-LLM's slurm_install.sh has them: from source, or from a
prebuilt wheel (the given one, else the first build/tensorrt_llm-*.whl), with pip retries."""

from __future__ import annotations

import pytest

from scriptast.errors import ResolveError
from tests.shim_recorder import Shims
from tests.site import Site
from tests.test_run_scripts import emit_case, run


def _pip(shims: Shims) -> list[list[str]]:
    return [r["argv"] for r in shims.records("pip")]


def test_source_mode_is_the_default(site: Site, shims: Shims) -> None:
    assert run(emit_case(site, "bench_tp1_no_prepare"), shims).returncode == 0
    assert _pip(shims) == [
        ["install", "--retries", "10", "-e", "."],
        ["install", "--retries", "10", "-r", "requirements-dev.txt"],
    ]


def test_wheel_mode_installs_the_first_built_wheel(site: Site, shims: Shims) -> None:
    build = site.repo / "build"
    build.mkdir()
    for name in ("tensorrt_llm-1.2.0-cp312-linux_x86_64.whl", "tensorrt_llm-1.1.0-cp312.whl"):
        (build / name).write_text("")
    result = run(emit_case(site, "bench_wheel_install"), shims)
    assert result.returncode == 0, result.stderr
    assert _pip(shims)[:2] == [
        ["install", "--retries", "10", "--find-links=build", "build/tensorrt_llm-1.1.0-cp312.whl"],
        ["install", "--retries", "10", "-r", "requirements-dev.txt"],
    ]
    assert shims.records("pip")[0]["cwd"] == str(site.repo)


def test_wheel_mode_without_a_wheel_stops_with_a_message(site: Site, shims: Shims) -> None:
    result = run(emit_case(site, "bench_wheel_install"), shims)
    assert result.returncode == 1
    assert f"error: no build/tensorrt_llm-*.whl in {site.repo}: build the wheel first" in (
        result.stdout + result.stderr
    )
    assert _pip(shims) == [] and shims.records("trtllm-bench") == []


def test_wheel_path_is_installed_as_given(site: Site, shims: Shims) -> None:
    wheel = "/wheels/tensorrt_llm-1.2.0-cp312-linux_x86_64.whl"
    output = emit_case(site, "bench_wheel_install", wheel_path=wheel)
    assert run(output, shims).returncode == 0
    assert _pip(shims)[0] == ["install", "--retries", "10", "--find-links=/wheels", wheel]


def test_wheel_path_needs_wheel_mode(site: Site) -> None:
    with pytest.raises(ResolveError, match="add --install-mode wheel"):
        emit_case(site, "bench_tp1_no_prepare", wheel_path="/w/x.whl")


def test_an_unknown_mode_is_refused(site: Site) -> None:
    from scriptast.errors import InputError

    with pytest.raises(InputError, match="install_mode"):
        emit_case(site, "bench_tp1_no_prepare", install_mode="conda")
