"""The workflow categories, one folder each, and the registry that names them.

A new category is a folder (its `Work` and rule, its steps, its `Category` record), its part of
the request in `scriptast.builders.request.parts`, and one line below. Categories never import
each other (`Category` and `HandOver` are in `scriptast.builders.category`).
"""

from __future__ import annotations

from scriptast.builders.categories.bench.category import CATEGORY as BENCH
from scriptast.builders.categories.custom.category import CATEGORY as CUSTOM
from scriptast.builders.categories.eval.category import CATEGORY as EVAL
from scriptast.builders.categories.perf_sanity.category import CATEGORY as PERF_SANITY
from scriptast.builders.categories.pytest.category import CATEGORY as PYTEST
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


register(PYTEST)
register(EVAL)
register(BENCH)
register(CUSTOM)
register(PERF_SANITY)


def category(name: str) -> Category:
    """The registered category `name`."""
    found = CATEGORIES.get(name)
    if found is None:
        known = ", ".join(CATEGORIES)
        raise ResolveError(f"no workflow category {name!r}; known: {known}", field="workflow_type")
    return found


__all__ = ["CATEGORIES", "Category", "category", "register"]
