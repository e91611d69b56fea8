"""In-memory storage (the empty stack's) and `ScopedStorage`, the reach enforcer.

`ScopedStorage` decorates any `Storage`: relative paths resolve against the session's
working directory, the inner storage canonicalises them (folding `..`, following
symlinks), and only then is reach checked, so `../`, absolute paths and symlinks that
point outside the allowed roots are all refused the same way.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from seam.contracts.storage import ALWAYS_DENY, AccessDenied, NotFound, Reach, StorageEntry
from seam.contracts.storage import Storage as StorageProtocol

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


def _valid(path: str) -> str:
    if not path or "\x00" in path:
        raise AccessDenied(f"invalid path {path!r}")
    return path


class ScopedStorage:
    """Checks every path against the session's `Reach` before the inner storage sees it.

    A path is refused when it is denied as written (folded, relative to the working dir)
    or where it really points: a link named `notes` that points at `~/.bashrc` is refused,
    and so is a `.bashrc` that is a link into a dotfiles repository.
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
        self.working_dir = inner.resolve(working_dir)
        write_roots = tuple(dict.fromkeys(self._root(r) for r in write))
        read_roots = tuple(dict.fromkeys(self._root(r) for r in read))
        self.reach = Reach(read=read_roots, write=write_roots, deny=(*ALWAYS_DENY, *deny))

    def _root(self, root: str) -> str:
        return self._inner.resolve(posixpath.join(self.working_dir, root))

    def _lexical(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.working_dir, path))

    def _check(self, path: str, write: bool) -> str:
        _valid(path)
        return self._allow(path, self._lexical(path), self.resolve(path), write)

    def _allow(self, path: str, lexical: str, real: str, write: bool) -> str:
        reach = self.reach
        verb = "write" if write else "read"
        for seen in dict.fromkeys((real, lexical)):
            if reach.denied(seen):
                raise AccessDenied(f"{verb} {path!r} refused: {seen} is always denied")
        if not (reach.writable(real) if write else reach.readable(real)):
            roots = reach.write if write else tuple(dict.fromkeys((*reach.read, *reach.write)))
            allowed = ", ".join(roots) or "nothing"
            raise AccessDenied(
                f"{verb} {path!r} refused: {real} is outside the allowed {verb} roots ({allowed})"
            )
        return real

    def resolve(self, path: str) -> str:
        return self._inner.resolve(posixpath.join(self.working_dir, path))

    async def read_text(self, path: str) -> str:
        return await self._inner.read_text(self._check(path, False))

    async def write_text(self, path: str, text: str) -> None:
        await self._inner.write_text(self._check(path, True), text)

    async def list_dir(self, path: str) -> list[StorageEntry]:
        return await self._inner.list_dir(self._check(path, False))

    async def exists(self, path: str) -> bool:
        return await self._inner.exists(self._check(path, False))

    async def remove(self, path: str) -> None:
        """Removes the entry itself: a symlink is unlinked, never the file it points to."""
        full = self._lexical(_valid(path))
        head, name = posixpath.split(full)
        entry = posixpath.join(self._inner.resolve(head), name)
        await self._inner.remove(self._allow(path, full, entry, True))
