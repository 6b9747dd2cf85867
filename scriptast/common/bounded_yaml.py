"""YAML read within bounds: an alias bomb (anchors referring to anchors, a billion entries from a
few KB) is refused before anything walks it, by counting the nodes the document would hold with
every alias expanded; a document that refers to itself is refused too. The lines of each
mapping's keys are kept, so that an error can name the line of the key it is about."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from scriptast.common.text_files import yaml_problem

if TYPE_CHECKING:  # imported when a document is read: a run that reads none never pays for it
    import yaml

MOST_NODES = 1_000_000
"""Nodes a document may hold with its aliases expanded: far above any TensorRT-LLM test-db,
reference or request file (the largest test-db holds some tens of thousands)."""


class BoundedYamlError(ValueError):
    """Not YAML, or YAML past the bounds; the message says which, in one line."""


class KeyLines:
    """The line (1-based) of each key of each mapping a document held, by the mapping."""

    def __init__(self) -> None:
        self._lines: dict[int, dict[str, int]] = {}
        self._kept: list[object] = []  # the mappings stay alive while their ids are keys

    def note(self, mapping: dict[Any, Any], lines: dict[str, int]) -> None:
        self._kept.append(mapping)
        self._lines[id(mapping)] = lines

    def of(self, mapping: object, key: str) -> int | None:
        """The line of `key` in `mapping`, when it was read from the document."""
        return self._lines.get(id(mapping), {}).get(key)


@functools.cache
def _loader_class() -> Any:
    """PyYAML's safe loader, keeping the line of each mapping's keys (made once)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: str | bytes) -> None:
            super().__init__(stream)
            self.key_lines = KeyLines()

        def construct_lined_map(self, node: yaml.MappingNode) -> Iterator[dict[Any, Any]]:
            data: dict[Any, Any] = {}
            yield data
            data.update(self.construct_mapping(node))
            lines = {str(k.value): k.start_mark.line + 1 for k, _ in node.value
                     if isinstance(k, yaml.ScalarNode)}  # fmt: skip
            self.key_lines.note(data, lines)

    Loader.add_constructor("tag:yaml.org,2002:map", Loader.construct_lined_map)
    return Loader


def compose_bounded(text: str | bytes, most_nodes: int = MOST_NODES) -> yaml.Node | None:
    """The document's node tree (None: empty), checked to expand to at most `most_nodes`."""
    loader = _loader_class()(text)
    try:
        node = _composed(loader)
    finally:
        loader.dispose()
    if node is not None:
        check_size(node, most_nodes)
    return node


def load_bounded(text: str | bytes, most_nodes: int = MOST_NODES) -> tuple[Any, KeyLines]:
    """The document's data and the lines of its keys; BoundedYamlError when it is not YAML,
    nests too deeply, refers to itself or expands past `most_nodes` nodes."""
    import yaml

    loader = _loader_class()(text)
    try:
        node = _composed(loader)
        if node is None:
            return None, loader.key_lines
        check_size(node, most_nodes)
        try:
            return loader.construct_document(node), loader.key_lines
        except yaml.YAMLError as error:
            raise BoundedYamlError(yaml_problem(error)) from None
        except RecursionError:
            raise BoundedYamlError("it nests too deeply") from None
    finally:
        loader.dispose()


def _composed(loader: Any) -> yaml.Node | None:
    import yaml

    try:
        node: yaml.Node | None = loader.get_single_node()
    except yaml.YAMLError as error:
        raise BoundedYamlError(yaml_problem(error)) from None
    except RecursionError:
        raise BoundedYamlError("it nests too deeply") from None
    return node


def check_size(root: yaml.Node, most_nodes: int) -> None:
    """BoundedYamlError when the tree under `root`, every alias expanded, holds more than
    `most_nodes` nodes, or holds itself. Linear in the distinct nodes: each one's expanded size
    is counted once."""
    sizes: dict[int, int] = {}
    pending: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while pending:
        node, children_done = pending.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(key)
            total = 1 + sum(sizes[id(child)] for child in children)
            if total > most_nodes:
                line = node.start_mark.line + 1
                raise BoundedYamlError(
                    f"line {line}: its aliases expand to more than {most_nodes:,} nodes "
                    "(an alias bomb?); it is not read"
                )
            sizes[key] = total
            continue
        if key in open_nodes:
            line = node.start_mark.line + 1
            raise BoundedYamlError(f"line {line}: an alias refers to the node that holds it")
        open_nodes.add(key)
        pending.append((node, True))
        pending += [(child, False) for child in children if id(child) not in sizes]


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
