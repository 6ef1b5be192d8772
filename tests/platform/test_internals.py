"""Every touch of a library's private internals in app/ is listed in
app.platform.fast.INTERNALS: a scan of app/ fails on one that is not, and each listed
attribute must still exist in the installed library, at the version TESTED pins."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from importlib import metadata
from pathlib import Path

import pytest

from app.platform import fast

ROOT = Path(__file__).resolve().parents[2]
# Underscored names that their libraries document as public.
PUBLIC = {
    "_asdict",  # namedtuple
    "_replace",  # namedtuple
    "_mapping",  # SQLAlchemy Row
    "_get_current_object",  # werkzeug LocalProxy
    "_serialize",  # marshmallow: a custom field implements these
    "_deserialize",
}
# Keyword arguments of SQLAlchemy's compiler that a @compiles hook reads.
COMPILER_KEYWORDS = {"fromhints"}


@functools.cache
def app_trees() -> tuple[tuple[Path, ast.Module], ...]:
    return tuple(
        (path, ast.parse(path.read_text())) for path in sorted((ROOT / "app").rglob("*.py"))
    )


def defined_in_app() -> set[str]:
    names: set[str] = set()
    for _, tree in app_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def library_base_defines(path: Path, class_name: str, name: str) -> bool:
    """Whether a class of `path` inherits `name` from a class outside app/."""
    module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    cls = getattr(module, class_name)
    return any(
        name in vars(base) for base in cls.__mro__[1:] if not base.__module__.startswith("app")
    )


@functools.cache
def internals_touched() -> frozenset[str]:
    """The private names app/ reads or overrides on library objects."""
    ours = defined_in_app()
    found: set[str] = set()
    for path, tree in app_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in COMPILER_KEYWORDS:
                found.add(str(node.value))
            if isinstance(node, ast.Attribute):
                name = node.attr
                if not name.startswith("_") or name.startswith("__") or name in PUBLIC:
                    continue
                owner = node.value
                mine = (isinstance(owner, ast.Name) and owner.id in {"self", "cls"}) or (
                    isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super"
                )
                if not (mine and name in ours):
                    found.add(name)
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    name = getattr(item, "name", "")
                    if not isinstance(item, ast.FunctionDef) or not name.startswith("_"):
                        continue
                    if name.startswith("__") or name in PUBLIC:
                        continue
                    if library_base_defines(path, node.name, name):
                        found.add(name)
    return frozenset(found)


def listed_names() -> set[str]:
    return {key.split(":")[-1].rsplit(".", 1)[-1] for key in fast.INTERNALS}


def test_every_touch_of_library_internals_is_listed():
    assert internals_touched() - listed_names() == set(), (
        "list it in app.platform.fast.INTERNALS with its reason, or use a public interface"
    )


def test_every_listed_internal_is_still_touched():
    assert listed_names() - internals_touched() == set()


@pytest.mark.parametrize("key", sorted(fast.INTERNALS))
def test_the_installed_library_still_has_it(key):
    path, _, keyword = key.partition(":")
    module_name, *attributes = path.split(".")
    target: object = importlib.import_module(module_name)
    *owners, name = attributes
    for owner in owners:
        try:
            target = getattr(target, owner)
        except AttributeError:  # a submodule its package does not import
            target = importlib.import_module(f"{target.__name__}.{owner}")  # type: ignore[attr-defined]
    if keyword:
        assert keyword in inspect.getsource(getattr(target, name))
    else:  # a method or class attribute, or an attribute its instances set
        assert hasattr(target, name) or f"self.{name}" in inspect.getsource(target)  # type: ignore[arg-type]
    distribution = fast.INTERNALS[key][0]
    assert metadata.version(distribution) == fast.TESTED[distribution]
