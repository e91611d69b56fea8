"""`ReadThrough`: an attribute a wrapper reads from the object it wraps, declared in one
line instead of a hand-written property per attribute (a checked tool, a lazy model)."""

from __future__ import annotations

from typing import Generic, TypeVar, overload

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
