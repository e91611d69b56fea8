"""Two small helpers for the objects of the hot path.

`ReadThrough`: an attribute a wrapper reads from the object it wraps, declared in one
line instead of a hand-written property per attribute (a checked tool, a lazy model).

`replaced`: `dataclasses.replace` for the frozen records a turn copies (its submission row
and session row at every write to the in-memory store, its tool context at every tool
call). `dataclasses.replace` walks the class's fields and checks each one on every call,
then calls the constructor with keywords; `replaced` builds, once per class, a function
that passes every field positionally (the changed ones given), which is the same value at
about half the cost.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class ReadThrough(Generic[T]):
    """`name: ReadThrough[str] = ReadThrough("tool")` reads `self.tool.name` on every
    access (never cached: a wrapped object that changes is seen as it is now)."""

    __slots__ = ("_name", "_via")

    def __init__(self, via: str) -> None:
        self._via = via
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type) -> ReadThrough[T]: ...

    @overload
    def __get__(self, obj: object, owner: type) -> T: ...

    def __get__(self, obj: object | None, owner: type) -> ReadThrough[T] | T:
        if obj is None:
            return self
        value: T = getattr(getattr(obj, self._via), self._name)
        return value


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
