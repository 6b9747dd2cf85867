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
    if columns is None or len({len(column) for column in columns}) != 1:
        raise StoreError(f"run {run_id}'s figures in the results store are damaged "
                         "(not what scriptast packs)")  # fmt: skip
    return columns


def unpack_figures(value: object, run_id: object) -> list[PackedFigure]:
    """The figures packed with a run, a figure each."""
    return list(zip(*unpack_columns(value, run_id), strict=True))
