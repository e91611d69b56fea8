"""In-memory storage (the empty stack's) and `ScopedStorage`, the reach enforcer.

`ScopedStorage` decorates any `Storage`: relative paths resolve against the session's
working directory, the inner storage canonicalises them (folding `..`, following
symlinks), and only then is reach checked, so `../`, absolute paths and symlinks that
point outside the allowed roots are all refused the same way. Over the real filesystem
the checked path is then opened beneath its reach root (`BeneathStorage`), never by name.
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar, cast

from seam.contracts.storage import (
    ALWAYS_DENY,
    AccessDenied,
    BeneathStorage,
    NotFound,
    PathChanged,
    Reach,
    StorageEntry,
)
from seam.contracts.storage import Storage as StorageProtocol

T = TypeVar("T")
# Checks of one path per call while a link keeps being swapped in under it, then refused.
OPEN_ATTEMPTS = 4
# What makes a storage a `BeneathStorage`; looked up by name (see `_beneath_of`).
_BENEATH_METHODS = (
    "read_beneath",
    "write_beneath",
    "list_beneath",
    "exists_beneath",
    "remove_beneath",
)

__all__ = ["ALWAYS_DENY", "InMemoryStorage", "ScopedStorage"]


class InMemoryStorage:
    """A flat dict of absolute POSIX paths; directories are implied by their files."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self._files: dict[str, str] = {}
        for path, text in (files or {}).items():
            self._files[self.resolve(path)] = text

    def resolve(self, path: str) -> str:
        return posixpath.normpath(posixpath.join("/", path))

    async def read_text(self, path: str) -> str:
        try:
            return self._files[self.resolve(path)]
        except KeyError:
            raise NotFound(f"no such file: {path}") from None

    async def write_text(self, path: str, text: str) -> None:
        self._files[self.resolve(path)] = text

    async def list_dir(self, path: str) -> list[StorageEntry]:
        base = self.resolve(path)
        prefix = base.rstrip("/") + "/"
        entries: dict[str, StorageEntry] = {}
        for file_path, text in self._files.items():
            if not file_path.startswith(prefix):
                continue
            head, sep, _ = file_path[len(prefix) :].partition("/")
            full = prefix + head
            entries[head] = StorageEntry(head, full, is_dir=bool(sep), size=0 if sep else len(text))
        if not entries and base in self._files:
            raise NotFound(f"not a directory: {path}")
        if not entries and base != "/":
            raise NotFound(f"no such directory: {path}")
        return [entries[k] for k in sorted(entries)]

    async def exists(self, path: str) -> bool:
        p = self.resolve(path)
        if p in self._files:
            return True
        prefix = p.rstrip("/") + "/"
        return any(k.startswith(prefix) for k in self._files)

    async def remove(self, path: str) -> None:
        p = self.resolve(path)
        if self._files.pop(p, None) is None:
            raise NotFound(f"no such file: {path}")


def _beneath_of(inner: StorageProtocol) -> BeneathStorage | None:
    """`inner` when it is a `BeneathStorage`, the test the runtime-checkable protocol
    makes (every method present, none None) without its cost: a `ScopedStorage` is built
    for every turn, and `isinstance` against a protocol takes tens of microseconds."""
    if all(getattr(inner, name, None) is not None for name in _BENEATH_METHODS):
        return cast(BeneathStorage, inner)
    return None


def _valid(path: str) -> str:
    if not path or "\x00" in path:
        raise AccessDenied(f"invalid path {path!r}")
    return path


class ScopedStorage:
    """Checks every path against the session's `Reach` before the inner storage sees it.

    A path is refused when it is denied as written (folded, relative to the working dir)
    or where it really points: a link named `notes` that points at `~/.bashrc` is refused,
    and so is a `.bashrc` that is a link into a dotfiles repository. Writes are refused
    on the write-protected list too (git hooks and config).

    Over a `BeneathStorage` (the real filesystem) the checked path is then opened beneath
    the reach root holding it with no symlink followed, so a link swapped in after the
    check is never followed: the path is resolved and checked again (a few times), and
    refused if it keeps changing.
    """

    def __init__(
        self,
        inner: StorageProtocol,
        *,
        working_dir: str,
        read: Iterable[str] = (".",),
        write: Iterable[str] = (".",),
        deny: Iterable[str] = (),
    ) -> None:
        self._inner = inner
        self._beneath = _beneath_of(inner)
        self.working_dir = inner.resolve(working_dir)
        # Built for every turn: each distinct root is resolved once, and "." (the usual
        # root) is the working directory just resolved.
        resolved: dict[str, str] = {".": self.working_dir}
        write_roots = tuple(dict.fromkeys(self._root(r, resolved) for r in write))
        read_roots = tuple(dict.fromkeys(self._root(r, resolved) for r in read))
        self.reach = Reach(read=read_roots, write=write_roots, deny=(*ALWAYS_DENY, *deny))

    @property
    def view(self) -> tuple[int, str, Reach]:
        """What decides what a path reads here: the inner storage, the working directory
        and the reach. Two scoped storages with the same view read the same files."""
        return (id(self._inner), self.working_dir, self.reach)

    def _root(self, root: str, resolved: dict[str, str]) -> str:
        found = resolved.get(root)
        if found is None:
            found = resolved[root] = self._inner.resolve(posixpath.join(self.working_dir, root))
        return found

    def _lexical(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.working_dir, path))

    def _check(self, path: str, write: bool) -> str:
        _valid(path)
        return self._allow(path, self._lexical(path), self.resolve(path), write)

    def _allow(self, path: str, lexical: str, real: str, write: bool) -> str:
        verb = "write" if write else "read"
        for seen in dict.fromkeys((real, lexical)):
            why = self.reach.refusal(seen, write) if seen == real else self._named(seen, write)
            if why is not None:
                raise AccessDenied(f"{verb} {path!r} refused: {why}")
        return real

    def _named(self, lexical: str, write: bool) -> str | None:
        """A refusal for the path as written (only the protected lists: roots are judged
        where the path really points)."""
        if self.reach.denied(lexical):
            return f"{lexical} is always denied"
        return (
            self.reach.refusal(lexical, write) if write and self.reach.protected(lexical) else None
        )

    def resolve(self, path: str) -> str:
        return self._inner.resolve(posixpath.join(self.working_dir, path))

    async def _opened(self, path: str, write: bool, op: Callable[[str, str], Awaitable[T]]) -> T:
        """`op(root, rel)` on the checked path, checked again while it keeps changing."""
        real = path
        for _ in range(OPEN_ATTEMPTS):
            real = self._check(path, write)
            root = self.reach.root_of(real)
            assert root is not None  # `_check` passed: some root holds it
            try:
                return await op(root, real[len(root) :].strip("/"))
            except PathChanged:
                continue
        verb = "write" if write else "read"
        raise AccessDenied(
            f"{verb} {path!r} refused: {real} kept changing while it was opened "
            "(a symlink swapped in); nothing was read or written"
        )

    async def read_text(self, path: str) -> str:
        if self._beneath is not None:
            return await self._opened(path, False, self._beneath.read_beneath)
        return await self._inner.read_text(self._check(path, False))

    async def write_text(self, path: str, text: str) -> None:
        if self._beneath is not None:
            beneath = self._beneath

            async def write(root: str, rel: str) -> None:
                await beneath.write_beneath(root, rel, text)

            await self._opened(path, True, write)
            return
        await self._inner.write_text(self._check(path, True), text)

    async def list_dir(self, path: str) -> list[StorageEntry]:
        if self._beneath is not None:
            return await self._opened(path, False, self._beneath.list_beneath)
        return await self._inner.list_dir(self._check(path, False))

    async def exists(self, path: str) -> bool:
        if self._beneath is not None:
            return await self._opened(path, False, self._beneath.exists_beneath)
        return await self._inner.exists(self._check(path, False))

    async def remove(self, path: str) -> None:
        """Removes the entry itself: a symlink is unlinked, never the file it points to."""
        full = self._lexical(_valid(path))
        head, name = posixpath.split(full)
        for _ in range(OPEN_ATTEMPTS):
            entry = self._allow(path, full, posixpath.join(self._inner.resolve(head), name), True)
            if self._beneath is None:
                await self._inner.remove(entry)
                return
            root = self.reach.root_of(entry)
            assert root is not None  # `_allow` passed: some root holds it
            try:
                await self._beneath.remove_beneath(root, entry[len(root) :].strip("/"))
                return
            except PathChanged:
                continue
        raise AccessDenied(f"remove {path!r} refused: it kept changing while it was opened")
