"""File access for tools, always through this seam so reach can be enforced.

Paths are strings. `resolve` returns the canonical path (absolute, `..` folded,
symlinks followed) so `ScopedStorage` can check reach against where a path really
points, not what it claims.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class StorageError(Exception):
    pass


class NotFound(StorageError):
    pass


class AccessDenied(StorageError):
    pass


@dataclass(frozen=True, slots=True)
class StorageEntry:
    name: str
    path: str
    is_dir: bool
    size: int = 0


@runtime_checkable
class Storage(Protocol):
    def resolve(self, path: str) -> str: ...

    async def read_text(self, path: str) -> str: ...

    async def write_text(self, path: str, text: str) -> None: ...

    async def list_dir(self, path: str) -> list[StorageEntry]: ...

    async def exists(self, path: str) -> bool: ...

    async def remove(self, path: str) -> None: ...
