"""The fields trtllm-case-executor passes the script builder under its own names (its Step 4):
`total_required_devices` feeds required_devices, `skip_install` the install step, and
`required_devices_per_node` is held against the GPUs a node the rules give the job. Where a
caller's value and the request's own disagree, a warning says which one is used."""

from __future__ import annotations

import msgspec

from scriptast.builders.request.fields import Request

SOURCE = "trtllm-case-executor"


class WithCallerFields(msgspec.Struct, frozen=True):
    """The request with the caller's fields taken into its own, and what to say of each:
    (field, value, where it came from) for the trail, and warnings."""

    request: Request
    notes: tuple[tuple[str, object, str], ...]
    warnings: tuple[str, ...]


def take_caller_fields(request: Request) -> WithCallerFields:
    """required_devices from total_required_devices when the request has none (the request's
    own wins on a disagreement); install off when skip_install is true."""
    notes: list[tuple[str, object, str]] = []
    warnings: list[str] = []
    changes: dict[str, object] = {}
    total = request.total_required_devices
    if total is not None:
        given = request.required_devices
        if given is None:
            changes["required_devices"] = total
            notes.append(("total_required_devices", total, f"input ({SOURCE}'s name): taken "
                                                           "as required_devices"))  # fmt: skip
        elif given != total:
            warnings.append(f"total_required_devices = {total} and required_devices = {given} "
                            "disagree: required_devices is used (the seed's field); pass one of "
                            "them")  # fmt: skip
    if request.skip_install is True:
        if request.install:
            changes["install"] = False
        notes.append(("skip_install", True, f"input ({SOURCE}'s name): the install step is off"))
    return WithCallerFields(
        msgspec.structs.replace(request, **changes), tuple(notes), tuple(warnings)
    )


def per_node_disagreement(request: Request, per_node: int, source: str) -> str | None:
    """A warning when the caller's required_devices_per_node is not the GPUs a node the rules
    give the job (`per_node`, from `source`): the rules' count is used."""
    asked = request.required_devices_per_node
    if asked is None or asked == per_node:
        return None
    return (
        f"required_devices_per_node = {asked} ({SOURCE}) differs from the {per_node} "
        f"GPU(s) a node the rules give the job ({source}); {per_node} is used, since the "
        "script is sized by the rules: pass required_devices (or node_count) to change it"
    )
