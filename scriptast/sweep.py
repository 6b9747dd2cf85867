"""Sweeps: many requests (one JSON object a line) emitted in one process pool, each into its
own work_dir, so start-up is paid once and every core is used."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from scriptast.errors import ScriptastError

SERIAL_BELOW = 32


def emit_line(origin: str, line: str, flags: dict[str, Any]) -> str | None:
    """Emit one request line; the error message, or None on success."""
    from scriptast.builders.request import build_request
    from scriptast.pipeline import generate, write_outputs

    try:
        try:
            fields = json.loads(line)
        except ValueError as error:
            raise ScriptastError(f"not JSON: {error}") from None
        if not isinstance(fields, dict):
            raise ScriptastError("each line must be one JSON object of request fields")
        write_outputs(generate(build_request(fields, flags, origin=origin)))
    except ScriptastError as error:
        return str(error)
    return None


def _emit_packed(packed: tuple[str, str, dict[str, Any]]) -> str | None:
    return emit_line(*packed)


def run_sweep(
    path: str, lines: list[tuple[int, str]], flags: dict[str, Any]
) -> Iterator[tuple[int, str | None]]:
    """(line number, error or None) for each line, in order; parallel for larger sweeps."""
    work = [(f"{path} line {number}", line, flags) for number, line in lines]
    workers = min(os.cpu_count() or 1, 8)
    if len(work) < SERIAL_BELOW or workers == 1:
        for (number, _), item in zip(lines, work, strict=True):
            yield number, _emit_packed(item)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        chunk = max(1, len(work) // (workers * 8))
        results = pool.map(_emit_packed, work, chunksize=chunk)
        for (number, _), error in zip(lines, results, strict=True):
            yield number, error
