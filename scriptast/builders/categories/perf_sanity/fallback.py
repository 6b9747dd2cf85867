"""A multi-node eval on the perf-sanity path, made to run what the eval command asks: its task
among the accuracy tasks of the config copy (in the nested form test_perf_sanity.py reads: the
disaggregated config's top-level `accuracy`, or an aggregated server config's
`client_configs[].accuracy_config`), its model the config's, its tp/pp compared with the
config's workers."""

from __future__ import annotations

import copy
import re
from typing import Any

import msgspec

from scriptast.builders.resolution.perf_config import load_config, runtime_mode
from scriptast.errors import ResolveError
from scriptast.readers.shellwords import flag_value, words

_FLAGS = frozenset(
    {"--trust_remote_code", "--disable_kv_cache_reuse", "--enable_chunked_prefill", "--help"}
)
"""trtllm-eval options that take no value."""
ADDABLE_TASKS = {"gsm8k": "gsm8k", "mmlu": "mmlu"}
"""trtllm-eval tasks and the lm_eval task each is (what scriptast adds to a config's tasks)."""


class EvalAsk(msgspec.Struct, frozen=True):
    """What a trtllm-eval command asks for."""

    model: str | None
    task: str | None
    tp: int
    pp: int


def read_eval_ask(eval_cmd: str) -> EvalAsk:
    """`trtllm-eval --model M [options] TASK [task options]`."""
    argv = words(eval_cmd, "eval_cmd")
    start = next((i + 1 for i, w in enumerate(argv) if w.endswith("trtllm-eval")), 0)
    task = None
    index = start
    while index < len(argv):
        word = argv[index]
        if word.startswith("-"):
            index += 1 if "=" in word or word in _FLAGS else 2
            continue
        task = word
        break
    numbers = [_positive(flag_value(argv, name)) for name in ("--tp_size", "--pp_size")]
    return EvalAsk(flag_value(argv, "--model"), task, numbers[0], numbers[1])


def _positive(text: str | None) -> int:
    return int(text) if text and text.isdigit() and int(text) > 0 else 1


def model_key(name: str) -> str:
    """A model name compared loosely: its last path component, letters and digits only, a `v`
    before a version dropped (`llama_v3.1_8b` and `Llama-3.1-8B` are one model)."""
    base = name.rstrip("/").rsplit("/", 1)[-1].lower()
    return re.sub(r"v(?=\d)", "", re.sub(r"[^a-z0-9]", "", base))


class Fallback(msgspec.Struct, frozen=True):
    """The fallback's plan: the server config name (aggregated), the lm_eval task to run, and
    the warnings to give."""

    test_name: str | None
    task: str
    warnings: tuple[str, ...]


def plan_fallback(path: str, ask: EvalAsk, test_name: str | None) -> Fallback:
    """Check the config against the eval command; ResolveError names what does not match."""
    data = load_config(path)
    mode = runtime_mode(data, path)
    server = _server(data, test_name, path) if mode == "aggregated" else None
    models = _config_models(data, server)
    if not models:
        raise ResolveError(
            f"perf_config_yaml {path} has no metadata.model_name, which test_perf_sanity.py "
            "requires to find the model it serves",
            field="perf_config_yaml",
        )
    if ask.model and not any(_same_model(ask.model, name) for name in models):
        raise ResolveError(
            f"eval_cmd's --model {ask.model} is not the model of perf_config_yaml {path} "
            f"({', '.join(models)}): the perf-sanity run serves the config's model; give a "
            "config for that model",
            field="perf_config_yaml",
        )
    tasks = _tasks(data, server)
    task = _task(ask.task, tasks, path)
    workers = _workers(data, server)
    warnings = []
    if workers and all((tp, pp) != (ask.tp, ask.pp) for _, tp, pp in workers):
        running = ", ".join(f"{role} tp {tp} pp {pp}" for role, tp, pp in workers)
        warnings.append(
            f"eval_cmd asks for tp {ask.tp} pp {ask.pp}; the config's workers run {running}: "
            "the perf-sanity run uses the config's parallelism"
        )
    return Fallback(str(server["name"]) if server else None, task, tuple(warnings))


def accuracy_copy(path: str, plan: Fallback) -> dict[str, Any]:
    """The config with accuracy on and the planned task among its tasks, nested."""
    data = copy.deepcopy(load_config(path))
    if plan.test_name is None:
        section = _nested(data.get("accuracy"))
        section["tasks"].setdefault(plan.task, _default_task())
        data["accuracy"] = {**section, "enable_accuracy_test": True}
        return data
    server = next(s for s in data["server_configs"] if s.get("name") == plan.test_name)
    clients = server.setdefault("client_configs", [])
    if not clients:
        clients.append({"name": "accuracy"})
    first = clients[0]
    section = _nested(first.get("accuracy_config"))
    section["tasks"].setdefault(plan.task, _default_task())
    first["accuracy_config"] = {**section, "enable_accuracy_test": True}
    return data


def _default_task() -> dict[str, Any]:
    return {"model": "local-completions", "model_args_extra": "", "extra_kwargs": {}}


def _nested(section: Any) -> dict[str, Any]:
    """An accuracy section in the nested form (`tasks: {name: {...}}`); a flat one (`tasks:
    gsm8k`, `model: ...`) is turned into it, as test_perf_sanity.py reads no other."""
    found: dict[str, Any] = dict(section) if isinstance(section, dict) else {}
    tasks = found.get("tasks")
    if isinstance(tasks, str) and tasks.strip():
        found = {
            **{k: v for k, v in found.items() if k in ("enable_accuracy_test", "env_var")},
            "tasks": {
                tasks.strip(): {
                    "model": found.get("model", "local-completions"),
                    "model_args_extra": found.get("model_args_extra", ""),
                    "extra_kwargs": {},
                }
            },
        }
    elif not isinstance(tasks, dict):
        found["tasks"] = {}
    else:
        found["tasks"] = dict(tasks)
    return found


def _server(data: dict[str, Any], test_name: str | None, path: str) -> dict[str, Any]:
    servers = [s for s in data.get("server_configs") or [] if isinstance(s, dict)]
    names = [str(s.get("name")) for s in servers]
    if test_name is None and len(servers) == 1:
        return servers[0]
    chosen = next((s for s in servers if s.get("name") == test_name), None)
    if chosen is None:
        raise ResolveError(
            f"perf_config_yaml {path} is an aggregated config: name the server config whose "
            f"clients run the accuracy test with perf_test_name (one of: {', '.join(names)})",
            field="perf_test_name",
        )
    return chosen


def _config_models(data: dict[str, Any], server: dict[str, Any] | None) -> list[str]:
    found_metadata = data.get("metadata")
    metadata: dict[str, Any] = found_metadata if isinstance(found_metadata, dict) else {}
    found = [server.get("model_name")] if server else []
    found += [metadata.get("model_name"), metadata.get("model_dir_name")]
    return [str(name) for name in found if isinstance(name, str) and name]


def _same_model(asked: str, configured: str) -> bool:
    one, other = model_key(asked), model_key(configured)
    return bool(one and other) and (one.startswith(other) or other.startswith(one))


def _tasks(data: dict[str, Any], server: dict[str, Any] | None) -> list[str]:
    if server is None:
        return list(_nested(data.get("accuracy"))["tasks"])
    found: list[str] = []
    for client in server.get("client_configs") or []:
        if isinstance(client, dict):
            found += [t for t in _nested(client.get("accuracy_config"))["tasks"] if t not in found]
    return found


def _task(asked: str | None, configured: list[str], path: str) -> str:
    """The lm_eval task the eval's task is: the config's own entry for it, or one scriptast
    adds; else ResolveError naming it."""
    if asked is None:
        raise ResolveError(
            "eval_cmd names no task (trtllm-eval --model M TASK): the perf-sanity run must "
            "know which accuracy task to run",
            field="eval_cmd",
        )
    if asked in configured:
        return asked
    if asked.lower() in ADDABLE_TASKS:
        return ADDABLE_TASKS[asked.lower()]
    raise ResolveError(
        f"eval task {asked!r} cannot run on the perf-sanity path: perf_config_yaml {path} runs "
        f"lm_eval tasks ({', '.join(configured) or 'none'}) and scriptast adds only "
        f"{' or '.join(ADDABLE_TASKS)}; add {asked} to the config's accuracy tasks",
        field="eval_cmd",
    )


def _workers(data: dict[str, Any], server: dict[str, Any] | None) -> list[tuple[str, int, int]]:
    def sizes(section: Any) -> tuple[int, int]:
        section = section if isinstance(section, dict) else {}
        return (
            int(section.get("tensor_parallel_size") or 1),
            int(section.get("pipeline_parallel_size") or 1),
        )

    if server is not None:
        return [("server", *sizes(server))]
    workers = data.get("worker_config")
    if not isinstance(workers, dict):
        return []
    return [(role, *sizes(workers.get(role))) for role in ("ctx", "gen") if role in workers]
