"""Emit and verify: a model node as bash text, read back and checked before it is returned.

This step sits above `scriptast.emitters` (which only write) and `scriptast.readers` (which only
read), so neither imports the other.
"""

from __future__ import annotations

from scriptast.emitters.bash import BashEmitter
from scriptast.model.script import Script
from scriptast.model.statements import Payload


def emit(node: Script | Payload, *, verify: bool = True) -> str:
    """Bash text of a script or payload; with `verify`, read back and checked against the model."""
    emitter = BashEmitter()
    composition = emitter.compose(node)
    text = composition.text
    if verify:
        from scriptast.readers.roundtrip.verify import verify_emitted

        verify_emitted(text, node, emitter, composition)
    return text
