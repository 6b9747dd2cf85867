"""Container image references: docker's reference grammar, and enroot's `registry#image` form.

docker (distribution/reference): `[domain[:port]/]path[:tag][@digest]`, path components of
lowercase alphanumerics joined by `.`, `_`, `__` or dashes; enroot (and so pyxis):
`[user@][registry#]image[:tag]`. A value outside both (a leading `-` above all, which docker or
srun would read as an option) is refused with the part that does not fit.
"""

from __future__ import annotations

import functools
import re

from scriptast.errors import InputError

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_PATH = rf"{_COMPONENT}(?:/{_COMPONENT})*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[0-9a-fA-F:.]+\])"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
DOCKER_REFERENCE = re.compile(rf"(?:{_DOMAIN}/)?{_PATH}(?::{_TAG})?(?:@{_DIGEST})?\Z")
ENROOT_REFERENCE = re.compile(
    rf"(?:[A-Za-z0-9._-]+@)?{_DOMAIN}#{_PATH}(?::{_TAG})?(?:@{_DIGEST})?\Z"
)
MAX_LENGTH = 255 + 128 + 100
"""A name of at most 255 characters (docker's limit) plus a tag and a digest."""


SQUASHFS = re.compile(r"/[^\s,:]+\.(?:sqsh|squashfs)\Z")
"""An absolute path to a squashfs image file, which pyxis (not docker) also takes."""


def check_image(image: str, what: str, *, squashfs: bool = False) -> str:
    """`image` if docker's grammar or enroot's `registry#image` form reads it (or, with
    `squashfs`, it is an absolute `.sqsh` path), else InputError."""
    if squashfs and SQUASHFS.match(image):
        return image
    problem = image_problem(image)
    if problem is not None:
        raise InputError(
            f"{what} {image!r} is not an image reference: {problem}; give "
            "registry/path:tag (docker) or registry#path:tag (enroot)"
        )
    return image


@functools.lru_cache(maxsize=256)
def image_problem(image: str) -> str | None:
    """Why `image` is not a reference, or None (remembered: a sweep names few images)."""
    if not image:
        return "it is empty"
    if image.startswith("-"):
        return "it starts with '-', so docker and srun would read it as an option"
    if len(image) > MAX_LENGTH:
        return f"it is {len(image)} characters long"
    if " " in image or not image.isprintable():  # the only printable white space is " "
        bad = next(c for c in image if c.isspace() or not c.isprintable())
        return f"it holds {bad!r} at offset {image.index(bad)}"
    pattern = ENROOT_REFERENCE if "#" in image else DOCKER_REFERENCE
    if pattern.match(image):
        return None
    if "#" not in image and any(c.isupper() for c in image.split("/")[-1].split(":")[0]):
        return "a repository path is lowercase"
    return "it does not match [registry[:port]/]path[:tag][@digest]"
