"""Import bashlex without rebuilding its LALR tables in every process.

bashlex 0.18 vendors a PLY yacc that has no table-loading path: every `import bashlex` runs
`LRTable(grammar)` (~140 ms). The tables depend only on the grammar's productions and
precedence, so they ship with the package (`scriptast/readers/roundtrip/bashlex_tables.json`,
written by `python -m scriptast.readers.roundtrip.bashlex_loader`, checked by a test to equal a
fresh build); on import yacc gets a table object holding those action/goto maps. When the
installed bashlex has another grammar, the tables are built once and kept in the user's cache
folder instead.
The grammar itself is still built by bashlex; tables that do not match it are ignored.
Set SCRIPTAST_BASHLEX_CACHE=0 to import bashlex the plain way.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import importlib.abc

_cached: list[dict[str, Any]] = []
_hits: list[bool] = []
_built_keys: list[str] = []


def shipped_path() -> Path:
    """The tables shipped with the package (SCRIPTAST_BASHLEX_TABLES names another file)."""
    override = os.environ.get("SCRIPTAST_BASHLEX_TABLES")
    return Path(override) if override else Path(__file__).resolve().parent / SHIPPED


SHIPPED = "bashlex_tables.json"


def cache_path() -> Path:
    """`$XDG_CACHE_HOME/scriptast/bashlex-<python>.json` (or ~/.cache/...)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = f"{sys.implementation.cache_tag}"
    return Path(base) / "scriptast" / f"bashlex-tables-{tag}.json"


def _grammar_key(grammar: Any) -> str:
    """The grammar as text: every production with its precedence, then the precedence table."""
    productions = [f"{p} {p.prec}" for p in grammar.Productions]
    precedence = [f"{name} {rule}" for name, rule in sorted(grammar.Precedence.items())]
    return "\n".join([*productions, "", *precedence])


_HEADER = b"scriptast-bashlex-tables 2 "


def _read_cache(path: Path) -> dict[str, Any] | None:
    """The tables in `path`, or None when the file is missing, torn, edited or of another
    shape: its first line carries a CRC-32 of the rest, and every table entry is typed."""
    import zlib

    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head, _, body = raw.partition(b"\n")
    if not head.startswith(_HEADER) or head[len(_HEADER) :] != str(zlib.crc32(body)).encode():
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if _well_formed(data) else None


def _well_formed(data: Any) -> bool:
    if not isinstance(data, dict) or not isinstance(data.get("key"), str):
        return False
    for name in ("action", "goto"):
        table = data.get(name)
        if not isinstance(table, dict) or not table:
            return False
        for state, row in table.items():
            if not state.isdigit() or not isinstance(row, dict):
                return False
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in row.values()):
                return False
    return True


class _CachedTable:
    """What yacc's LRParser reads from an LRTable, filled from the cache."""

    def __init__(self, grammar: Any, action: dict[int, Any], goto: dict[int, Any]) -> None:
        self.grammar = grammar
        self.lr_action = action
        self.lr_goto = goto
        self.lr_productions = grammar.Productions
        self.sr_conflicts: list[Any] = []
        self.rr_conflicts: list[Any] = []

    def bind_callables(self, pdict: dict[str, Any]) -> None:
        for production in self.lr_productions:
            production.bind(pdict)


def _int_keys(table: dict[str, dict[str, int]]) -> dict[int, dict[str, int]]:
    return {int(state): dict(row) for state, row in table.items()}


def _patch(yacc: ModuleType) -> None:
    original = yacc.LRTable

    def table(grammar: Any, log: Any = None) -> Any:
        key = _grammar_key(grammar)
        for cached in _cached:
            if cached.get("key") == key:
                _hits.append(True)
                action, goto = _int_keys(cached["action"]), _int_keys(cached["goto"])
                return _CachedTable(grammar, action, goto)
        _built_keys.append(key)
        return original(grammar, log)

    yacc.LRTable = table  # type: ignore[attr-defined]
    yacc._scriptast_original_table = original  # type: ignore[attr-defined]


class _YaccPatcher:
    """A meta-path finder and loader for bashlex.yacc alone (duck-typed: importlib.abc costs
    5 ms to import)."""

    def __init__(self) -> None:
        self.spec: importlib.machinery.ModuleSpec | None = None

    def find_spec(
        self, name: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != "bashlex.yacc":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, path)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        self.spec = spec
        loader = cast("importlib.abc.Loader", self)
        return importlib.machinery.ModuleSpec(name, loader, origin=spec.origin)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        assert self.spec is not None and self.spec.loader is not None
        module.__file__ = self.spec.origin
        self.spec.loader.exec_module(module)
        _patch(module)


def import_bashlex() -> ModuleType:
    """bashlex, with its parser tables from the shipped file or the user's cache when they
    match its grammar (the cache is read, and written, only when the shipped file does not)."""
    if "bashlex.parser" in sys.modules or os.environ.get("SCRIPTAST_BASHLEX_CACHE") == "0":
        return importlib.import_module("bashlex")
    _cached[:] = [found for found in (_read_cache(shipped_path()),) if found is not None]
    if not _cached or os.environ.get("SCRIPTAST_BASHLEX_TABLES"):
        _cached.extend(found for found in (_read_cache(cache_path()),) if found is not None)
    parser = _import_patched()
    bashlex = sys.modules["bashlex"]
    if not _hits and _built_keys:
        with contextlib.suppress(OSError):
            write_tables(parser, _built_keys[-1], cache_path())
    return bashlex


def _import_patched() -> ModuleType:
    """Import bashlex with yacc's LRTable replaced while it builds its parser; the parser
    module."""
    patcher = _YaccPatcher()
    sys.meta_path.insert(0, patcher)
    try:
        importlib.import_module("bashlex")
    finally:
        sys.meta_path.remove(patcher)
    yacc = sys.modules["bashlex.yacc"]
    yacc.LRTable = getattr(yacc, "_scriptast_original_table", yacc.LRTable)  # type: ignore[attr-defined]
    return sys.modules["bashlex.parser"]


def tables_text(parser: ModuleType, grammar_key: str) -> bytes:
    """The built parser's tables as the file format: a CRC line, then compact JSON."""
    import zlib

    built = parser.yaccparser
    data = {
        "key": grammar_key,
        "action": {str(k): dict(v) for k, v in built.action.items()},
        "goto": {str(k): dict(v) for k, v in built.goto.items()},
    }
    body = json.dumps(data, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return _HEADER + str(zlib.crc32(body)).encode() + b"\n" + body


def write_tables(parser: ModuleType, grammar_key: str, path: Path) -> None:
    """Write the tables to `path` atomically (a temporary beside it, then a rename)."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".bashlex-", dir=path.parent)
    with os.fdopen(handle, "wb") as stream:
        stream.write(tables_text(parser, grammar_key))
    os.replace(temporary, path)


def build_fresh() -> bytes:
    """Tables built by bashlex's own yacc, in the file format (in a process that has not
    imported bashlex yet)."""
    _cached.clear()
    parser = _import_patched()
    return tables_text(parser, _built_keys[-1])


if __name__ == "__main__":
    target = shipped_path()
    target.write_bytes(build_fresh())
    sys.stdout.write(f"wrote {target}\n")
