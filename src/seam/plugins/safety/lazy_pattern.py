"""A regular expression compiled on first use.

The scanners' patterns are long alternations whose compilation costs milliseconds each:
compiled at import, every process that merely wires a scanner in (a one-shot `seam run`
that never scans anything) would pay for them. A `LazyPattern` compiles when a method is
first asked for, then keeps the compiled pattern's bound methods as its own attributes,
so later calls cost what a compiled pattern's do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any


class LazyPattern:
    """`re.compile(pattern, flags)`, done when a method is first used."""

    def __init__(self, pattern: str, flags: int | re.RegexFlag = 0) -> None:
        self.source = pattern
        self.flags = flags

    @property
    def compiled(self) -> re.Pattern[str]:
        found: re.Pattern[str] | None = self.__dict__.get("_compiled")
        if found is None:
            found = self.__dict__["_compiled"] = re.compile(self.source, self.flags)
        return found

    def __getattr__(self, name: str) -> Any:
        """Only called for what the instance lacks: a pattern method, kept once bound."""
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self.compiled, name)
        setattr(self, name, method)
        return method

    if TYPE_CHECKING:  # what callers use, typed as `re.Pattern`'s

        def search(self, string: str, pos: int = 0, endpos: int = ...) -> re.Match[str] | None: ...
        def finditer(
            self, string: str, pos: int = 0, endpos: int = ...
        ) -> Iterator[re.Match[str]]: ...
        def findall(self, string: str, pos: int = 0, endpos: int = ...) -> list[Any]: ...
        def sub(
            self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
        ) -> str: ...
        def match(self, string: str, pos: int = 0, endpos: int = ...) -> re.Match[str] | None: ...
        def fullmatch(
            self, string: str, pos: int = 0, endpos: int = ...
        ) -> re.Match[str] | None: ...
