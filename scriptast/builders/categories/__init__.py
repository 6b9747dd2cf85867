"""The workflow categories, one module each, and the registry that names them.

A new category is a module that defines its `Work` and a `Category` record, plus one line
below. `Category` (the record) is defined in `scriptast.builders.category` so that the modules
here can build theirs without importing this registry.
"""

from __future__ import annotations

from scriptast.builders.categories import bench, custom, eval, perf_sanity, pytest
from scriptast.builders.category import Category
from scriptast.errors import ResolveError

CATEGORIES: dict[str, Category] = {}
"""Each category by name, in the order the command line lists them."""


def register(category: Category) -> Category:
    """Add `category` to the registry (its name and command-line name must be new)."""
    taken = {c.cli_name for c in CATEGORIES.values()}
    if category.name in CATEGORIES or category.cli_name in taken:
        raise ValueError(f"a category named {category.name!r} is registered already")
    CATEGORIES[category.name] = category
    return category


register(pytest.CATEGORY)
register(eval.CATEGORY)
register(bench.CATEGORY)
register(custom.CATEGORY)
register(perf_sanity.CATEGORY)


def category(name: str) -> Category:
    """The registered category `name`."""
    found = CATEGORIES.get(name)
    if found is None:
        known = ", ".join(CATEGORIES)
        raise ResolveError(f"no workflow category {name!r}; known: {known}", field="workflow_type")
    return found


__all__ = ["CATEGORIES", "Category", "category", "register"]
