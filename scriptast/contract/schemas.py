"""The JSON Schema of a contract type, as `scriptast schema` prints it: msgspec's, with the
scenario values listed from PLACEMENTS (the seed's three and any a registered backend adds)."""

from __future__ import annotations

from typing import Any

import msgspec

from scriptast.contract.axes import PLACEMENTS


def json_schema(kind: type) -> dict[str, Any]:
    """`kind`'s JSON Schema; each `execution_scenario` property lists the scenarios."""
    schema: dict[str, Any] = msgspec.json.schema(kind)
    for definition in schema.get("$defs", {}).values():
        found = definition.get("properties", {}).get("execution_scenario")
        if found is not None:
            for variant in [found, *found.get("anyOf", [])]:
                if variant.get("type") == "string":
                    variant["enum"] = list(PLACEMENTS)
    return schema
