"""A run's record as the store keeps it: run.json's text compressed (zlib), and read back as
text within a bound (a store may be another user's: a record that inflates past it is refused);
and its figures packed in one value (MessagePack: name, value, unit, which way) for the
queries that read every figure of many runs."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import msgspec

from scriptast.errors import StoreError

PackedFigure = tuple[str, float, str, bool | None]
"""A figure's name, value, unit and which way it regresses (None: neither)."""
Columns = tuple[tuple[str, ...], tuple[float, ...], tuple[str, ...], tuple[bool | None, ...]]
"""A run's figures a column each: names, values, units, which ways (runs of one setup share
their names, so a comparison adds a run's values in one step)."""
_FIGURES_DECODER = msgspec.msgpack.Decoder(Columns)
_SPLIT_DECODER = msgspec.msgpack.Decoder(
    tuple[msgspec.Raw, tuple[float, ...], msgspec.Raw, msgspec.Raw]
)
_NAMES_DECODER = msgspec.msgpack.Decoder(tuple[str, ...])
_WAYS_DECODER = msgspec.msgpack.Decoder(tuple[bool | None, ...])

MOST_RECORD_BYTES = 16 << 20
"""The largest record read back (run.json keeps bounded lists: a real one is a few KB)."""


def pack_record(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), 9)


def unpack_record(value: object, run_id: object) -> str:
    """The record's text; StoreError when it is not a record this store wrote."""
    data = bytes(value) if isinstance(value, bytes | bytearray | memoryview) else None
    if data is None:
        raise StoreError(f"run {run_id}'s record in the results store is not one scriptast "
                         "wrote (not compressed bytes)")  # fmt: skip
    inflater = zlib.decompressobj()
    pieces: list[bytes] = []
    size = 0
    try:
        while not inflater.eof and size <= MOST_RECORD_BYTES:
            piece = inflater.decompress(inflater.unconsumed_tail or data, 1 << 20)
            if not piece and not inflater.unconsumed_tail:
                break  # the input ended before the stream did
            pieces.append(piece)
            size += len(piece)
            data = b""
    except zlib.error:
        raise StoreError(f"run {run_id}'s record in the results store is damaged "
                         "(not zlib data)") from None  # fmt: skip
    if size > MOST_RECORD_BYTES or not inflater.eof:
        most = MOST_RECORD_BYTES >> 20
        raise StoreError(f"run {run_id}'s record in the results store inflates past {most} MiB "
                         "or is cut short: it is not read")  # fmt: skip
    text = b"".join(pieces)
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        raise StoreError(f"run {run_id}'s record in the results store is not UTF-8 "
                         "text") from None  # fmt: skip


def pack_figures(figures: Sequence[PackedFigure]) -> bytes:
    return msgspec.msgpack.encode([list(column) for column in zip(*figures, strict=True)]
                                  if figures else [[], [], [], []])  # fmt: skip


def unpack_columns(value: object, run_id: object) -> Columns:
    """The figures packed with a run, a column each; StoreError when the value is not what
    pack_figures wrote."""
    if not isinstance(value, bytes | bytearray | memoryview):
        raise StoreError(f"run {run_id}'s figures in the results store are not packed bytes")
    try:
        columns = _FIGURES_DECODER.decode(value)
    except (msgspec.DecodeError, msgspec.ValidationError):
        columns = None
    if columns is None or not (len(columns[0]) == len(columns[1]) == len(columns[2])
                               == len(columns[3])):  # fmt: skip
        raise StoreError(f"run {run_id}'s figures in the results store are damaged "
                         "(not what scriptast packs)")  # fmt: skip
    return columns


MOST_SHARED = 4096
"""Lists of figure names a reader keeps decoded (a store whose every run names its figures
differently costs a decode a run, never memory a run)."""


class ColumnsReader:
    """Reads many runs' packed figures: the names, units and ways that runs of one setup share
    are decoded once, and returned as the same tuples (so they key a dict cheaply); each run's
    values are decoded on their own. Refuses what pack_figures did not write, as
    unpack_columns does."""

    def __init__(self) -> None:
        self._shared: dict[bytes, tuple[tuple[str, ...], tuple[str, ...],
                                        tuple[bool | None, ...]]] = {}  # fmt: skip

    def read(self, value: object, run_id: object) -> Columns:
        if not isinstance(value, bytes | bytearray | memoryview):
            raise StoreError(f"run {run_id}'s figures in the results store are not packed bytes")
        try:
            names_raw, numbers, units_raw, ways_raw = _SPLIT_DECODER.decode(value)
            key = b"".join((names_raw, units_raw, ways_raw))
            shared = self._shared.get(key)
            if shared is None:
                shared = (_NAMES_DECODER.decode(names_raw), _NAMES_DECODER.decode(units_raw),
                          _WAYS_DECODER.decode(ways_raw))  # fmt: skip
                if len(self._shared) < MOST_SHARED:
                    self._shared[key] = shared
        except (msgspec.DecodeError, msgspec.ValidationError):
            shared = None
        if shared is None or not (len(shared[0]) == len(numbers) == len(shared[1])
                                  == len(shared[2])):  # fmt: skip
            raise StoreError(f"run {run_id}'s figures in the results store are damaged "
                             "(not what scriptast packs)")  # fmt: skip
        return shared[0], numbers, shared[1], shared[2]


def unpack_figures(value: object, run_id: object) -> list[PackedFigure]:
    """The figures packed with a run, a figure each."""
    return list(zip(*unpack_columns(value, run_id), strict=True))
