"""`replaced`: `dataclasses.replace` for the frozen records the hot path copies.

A turn copies its submission row and its session row at every write it makes to the
in-memory store. `dataclasses.replace` walks the class's fields and checks each one on
every call, then calls the constructor with keywords: about five times the cost of the
construction itself. `replaced` builds, once per class, a function that passes every
field positionally (the changed ones from `changes`), which is the same value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

Copier = Callable[..., Any]
# Per class: its copier, or None where `dataclasses.replace` must do it (a keyword-only
# field, a field the constructor does not take).
_COPIERS: dict[type[Any], Copier | None] = {}
_UNCHANGED: Any = object()


def replaced(obj: T, /, **changes: Any) -> T:
    """`dataclasses.replace(obj, **changes)` for a dataclass instance, faster (a name
    that is no field raises the same TypeError)."""
    cls = type(obj)
    try:
        copy = _COPIERS[cls]
    except KeyError:
        copy = _COPIERS[cls] = _copier(cls)
    if copy is None:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    result: T = copy(obj, **changes)
    return result


def _copier(cls: type[Any]) -> Copier | None:
    """`copy(obj, *, <field>=UNCHANGED, ...)`: the constructor called with each field
    positionally, the given value or the object's own."""
    found = dataclasses.fields(cls)
    if any(f.kw_only or not f.init or not f.name.isidentifier() for f in found):
        return None
    names = [f.name for f in found]
    params = ", ".join(f"{name}=UNCHANGED" for name in names)
    args = ", ".join(f"obj.{name} if {name} is UNCHANGED else {name}" for name in names)
    source = f"def copy(obj, /, *, {params}):\n    return cls({args})\n"
    scope: dict[str, Any] = {"cls": cls, "UNCHANGED": _UNCHANGED}
    exec(source, scope)
    copier: Copier = scope["copy"]
    return copier


__all__ = ["replaced"]
