"""The container image: the caller's, or the repo's image-tags properties key for the arch;
canonical `registry/path:tag` for job_spec and docker, enroot's `registry#path:tag` for pyxis."""

from __future__ import annotations

import functools
from pathlib import Path

import msgspec

from scriptast.common.text_files import read_text_file
from scriptast.errors import ResolveError
from scriptast.model.image_ref import check_image

ARCH_KEYS = {"aarch64": "LLM_SBSA_DOCKER_IMAGE", "x86_64": "LLM_DOCKER_IMAGE"}
PROPERTIES = "jenkins/current_image_tags.properties"


class Image(msgspec.Struct, frozen=True):
    """Both spellings of the image, and where it came from."""

    canonical: str
    enroot: str
    source: str


def read_properties(path: Path) -> dict[str, str]:
    """Plain `KEY=VALUE` lines; `#` and `!` start comments; the first `=` or `:` separates."""
    return dict(_properties(read_text_file(path, "image-tags properties file")))


@functools.lru_cache(maxsize=16)
def _properties(text: str) -> tuple[tuple[str, str], ...]:
    values: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        separator = min((i for i in (stripped.find("="), stripped.find(":")) if i > 0), default=-1)
        if separator < 0:
            continue
        values[stripped[:separator].strip()] = stripped[separator + 1 :].strip()
    return tuple(values.items())


def _is_registry(component: str) -> bool:
    return "." in component or ":" in component or component == "localhost"


def canonical_form(image: str) -> str:
    """`registry#path:tag` -> `registry/path:tag`; canonical input is kept."""
    return image.replace("#", "/", 1) if "#" in image else image


def enroot_form(image: str) -> str:
    """`registry/path:tag` -> `registry#path:tag` (pyxis needs the `#` for a registry host)."""
    if "#" in image:
        return image
    head, slash, rest = image.partition("/")
    if slash and _is_registry(head):
        return f"{head}#{rest}"
    return image


def resolve_image(
    container_image: str | None, repo_root: str, arch: str, *, squashfs: bool = False
) -> Image:
    """Step 1: `container_image` wins, else the properties key for `arch`. With `squashfs`
    (Slurm jobs: pyxis reads it) an absolute `.sqsh` path is an image too."""
    if container_image:
        image = check_image(container_image.strip(), "container_image", squashfs=squashfs)
        return Image(canonical_form(image), enroot_form(image), "input container_image")
    key = ARCH_KEYS.get(arch)
    if key is None:
        raise ResolveError(
            f"no image key for arch {arch!r} (known: {', '.join(ARCH_KEYS)}); "
            "pass --container-image",
            field="container_image",
        )
    jenkins = Path(repo_root) / "jenkins"
    main = Path(repo_root) / PROPERTIES
    candidates = [main] if main.is_file() else sorted(jenkins.glob("**/*.properties"))
    for path in candidates:
        value = read_properties(path).get(key)
        if value:
            check_image(value, f"{key} in {path}")
            return Image(
                canonical_form(value), enroot_form(value), f"properties key {key} in {path}"
            )
    where = str(main) if main.is_file() else f"{main} (absent) or any *.properties under {jenkins}"
    raise ResolveError(
        f"no docker image: key {key} (arch {arch}) not found in {where}; "
        "pass --container-image or add the key",
        field="container_image",
    )
