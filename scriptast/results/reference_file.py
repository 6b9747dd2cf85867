"""A team's references file (`--reference FILE`, TOML or YAML): for a model, a place (a
partition or a GPU type) and a figure, a reference value and a lower and/or upper tolerance, as
ReFrame's `(value, lower, upper, unit)` tuples; read whole and checked before any job is judged
by it, and the one reference that applies to a figure chosen by model, then place."""

from __future__ import annotations

import tomllib
from typing import Any

import msgspec

from scriptast.common.numbers import is_finite
from scriptast.common.text_files import decode_utf8, regular_file_bytes
from scriptast.contract.measured import Check, Figure
from scriptast.errors import InputError
from scriptast.results.accuracy import load_yaml, model_tail

ANY = "*"


class Reference(msgspec.Struct, frozen=True):
    """A figure's reference: its value, the tolerances below and above it as fractions of the
    value (-0.1: 10% under it still passes; None: no bound that side) and its unit."""

    value: float
    lower: float | None
    upper: float | None
    unit: str | None = None

    def bounds(self) -> tuple[float | None, float | None]:
        """The lowest and the highest value that pass."""
        size = abs(self.value)
        low = None if self.lower is None else self.value + size * self.lower
        high = None if self.upper is None else self.value + size * self.upper
        return low, high


class References(msgspec.Struct, frozen=True):
    """The whole file: model (or `*`) → place (partition, GPU type or `*`) → figure → reference."""

    path: str
    table: dict[str, dict[str, dict[str, Reference]]]


class Where(msgspec.Struct, frozen=True):
    """What a reference is chosen by: the model as the command names it, the partition and
    the GPU type the job ran on."""

    model: str | None
    partition: str | None
    gpu_type: str | None


def read_references(path: str) -> References:
    """The references file at `path`, checked whole; InputError naming the first thing wrong."""
    try:
        data, _ = regular_file_bytes(path)
    except OSError as error:
        raise InputError(f"cannot read references file {path}: {error.strerror}") from None
    text = decode_utf8(data, f"references file {path}")
    loaded = _parse(text, path)
    if not isinstance(loaded, dict) or not loaded:
        raise InputError(
            f"references file {path} must map models to places to figures; see docs/references.md"
        )
    table: dict[str, dict[str, dict[str, Reference]]] = {}
    for model, places in loaded.items():
        where = f"references file {path}: {model}"
        table[str(model)] = {
            str(place): {
                str(name): _reference(value, f"{where} / {place} / {name}")
                for name, value in _mapping(figures, f"{where} / {place}").items()
            }
            for place, figures in _mapping(places, where).items()
        }
    return References(path=path, table=table)


def _parse(text: str, path: str) -> Any:
    if path.endswith(".toml"):
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise InputError(f"references file {path} is not valid TOML: {error}") from None

    try:
        return load_yaml(text.encode())
    except ValueError as error:
        raise InputError(f"references file {path} is not valid YAML: {error}") from None


def _mapping(value: object, where: str) -> dict[Any, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where} must be a mapping, not {type(value).__name__}")
    return value


def _reference(value: object, where: str) -> Reference:
    """A reference from `[value, lower, upper, unit]` (unit optional) or a mapping of them."""
    if isinstance(value, list):
        if not 3 <= len(value) <= 4:
            raise InputError(
                f"{where} must be [value, lower, upper] or [value, lower, upper, unit]"
            )
        value = dict(zip(("value", "lower", "upper", "unit"), value, strict=False))
    if not isinstance(value, dict):
        raise InputError(f"{where} must be [value, lower, upper, unit] or a mapping with value")
    unknown = set(value) - {"value", "lower", "upper", "unit"}
    if unknown:
        raise InputError(
            f"{where} has unknown keys {sorted(unknown)}: use value, lower, upper, unit"
        )
    number = value.get("value")
    if not is_finite(number):
        raise InputError(f"{where} has no value: give the reference as a number")
    lower, upper = value.get("lower"), value.get("upper")
    if lower is None and upper is None:
        raise InputError(f"{where} has neither a lower nor an upper tolerance")
    if lower is not None and not (is_finite(lower) and -1 <= lower <= 0):
        raise InputError(f"{where}: lower must be a fraction from -1 to 0 (-0.1 is 10% under)")
    if upper is not None and not (is_finite(upper) and upper >= 0):
        raise InputError(f"{where}: upper must be a fraction of 0 or more (0.1 is 10% over)")
    unit = value.get("unit")
    if unit is not None and not isinstance(unit, str):
        raise InputError(f"{where}: unit must be text")
    return Reference(float(number), _float(lower), _float(upper), unit)


def _float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def choose(references: References, where: Where, figure: str) -> tuple[Reference, str] | str:
    """The reference for one figure and the words saying which it is, or why none applies.
    The model named exactly comes first, then the one whose last part is the model's (a local
    path's folder), then `*`; within a model, the partition, then the GPU type, then `*`."""
    table = references.table
    models = []
    if where.model:
        tail = model_tail(where.model)
        models += [m for m in table if m == where.model]
        models += [m for m in table if m != where.model and model_tail(m) == tail]
    models += [ANY] if ANY in table else []
    places = [p for p in (where.partition, where.gpu_type, ANY) if p]
    for model in models:
        for place in places:
            found = table[model].get(place, {}).get(figure)
            if found is not None:
                return found, f"{references.path}: {model} / {place}"
    return (
        f"{references.path} has no {figure} for model {where.model or '(none)'} "
        f"on {' or '.join(places)}"
    )


def check(figure: Figure, reference: Reference, origin: str) -> Figure:
    """The figure held against its reference: ok when inside both bounds; the margin is the
    distance to the nearer bound (negative outside)."""
    low, high = reference.bounds()
    margins = []
    if low is not None:
        margins.append(figure.value - low)
    if high is not None:
        margins.append(high - figure.value)
    margin = min(margins)
    verdict = Check(
        reference=reference.value,
        lower=None if low is None else round(low, 4),
        upper=None if high is None else round(high, 4),
        origin=origin,
        margin=round(margin, 4),
        ok=margin >= 0,
    )
    return msgspec.structs.replace(figure, check=verdict)
