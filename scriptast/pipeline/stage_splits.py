"""`--ci-stage NAME --all-splits`: every split of the stage as its own request and work dir
(`<work_dir>/<family>-<k>`), ready for one `scriptast run` of them all."""

from __future__ import annotations

import posixpath

import msgspec

from scriptast.builders.request.fields import Request
from scriptast.builders.request.parts import PytestRequest
from scriptast.errors import InputError


def split_requests(request: Request) -> list[Request] | None:
    """One request a split of the stage (None: the request asks for one job)."""
    part = request.part(PytestRequest)
    if not (part.ci_stage and part.all_splits):
        return None
    from scriptast.builders.categories.pytest.ci.stages import find_stage, read_stage_list

    if not request.repo_root or not request.work_dir:
        raise InputError("--all-splits needs repo_root (the stage list) and work_dir (a work "
                         "dir a split is written under it)", field="all_splits")  # fmt: skip
    configs, _ = read_stage_list(request.repo_root)
    family = next((c for c in configs if c.name == part.ci_stage), None)
    if family is None:  # a stage of the family (else an error with the closest names)
        family = find_stage(request.repo_root, part.ci_stage).config
    requests = []
    top = posixpath.normpath(request.work_dir)
    for split in range(1, family.splits + 1):
        name = f"{family.name}-{split}"
        folder = posixpath.normpath(posixpath.join(top, name))
        if "/" in name or posixpath.dirname(folder) != top:
            raise InputError(f"stage {name!r} is not a name a folder of {top} can have",
                             field="ci_stage")  # fmt: skip
        one = msgspec.structs.replace(part, ci_stage=name, all_splits=None)
        parts = tuple(one if isinstance(p, PytestRequest) else p for p in request.parts)
        requests.append(msgspec.structs.replace(request, work_dir=folder, parts=parts))
    return requests
