"""One directory's shadow repository: snapshots and diffs.

The repository lives at `<root>/<hash of the directory's real path>/` with the directory
as its work tree. A snapshot is a parentless commit (so dropping one session's
checkpoints frees what only they held) named by a ref per session,
`refs/seam/<hex of the session key>/<commit>`. Contents are shared between commits by
git's own content addressing, and the index keeps the stat cache, so a later snapshot
reads only the files that changed.

What is kept: every file, tracked by the project or not, except names in the ignore list
(gitignore patterns, `CheckpointSettings.ignore`) and files over `max_file_mb`. The
project's own `.gitignore` files are *not* honoured: a `.env` the agent deletes must come
back on undo.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from seam.contracts.checkpoints import CheckpointError, CheckpointSettings, Diff, FileChange
from seam.services.checkpoints.git import Git

_REFS = "refs/seam/"
_LAST = "seam-last"  # "<commit> <tree>" of the last snapshot: reuse without a git call
_EXCLUDE = "seam-exclude"
_WORKDIR = "seam-workdir"  # the directory this repository shadows, for people and doctor
_BULK = 500  # files in one update from which objects go into a pack
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n"


def session_ref_prefix(session_key: str) -> str:
    return f"{_REFS}{session_key.encode().hex()}/"


def session_from_ref(ref: str) -> str | None:
    """The session key a `refs/seam/<hex>/<commit>` ref belongs to (None: not ours)."""
    parts = ref.split("/")
    if len(parts) != 4 or ref[: len(_REFS)] != _REFS:
        return None
    try:
        return bytes.fromhex(parts[2]).decode()
    except ValueError:
        return None


class ShadowRepo:
    """Snapshots of one directory. Not safe for concurrent use: the engine holds a lock
    per repository around every call (git's index lock covers other processes)."""

    def __init__(
        self,
        git_dir: Path,
        work_tree: Path,
        settings: CheckpointSettings,
        base_env: Mapping[str, str],
    ) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.settings = settings
        self.git = Git(git_dir, work_tree, base_env)
        self._ready = False

    async def snapshot(self, session_key: str, label: str = "") -> str:
        """The directory kept as a commit; its id (an unchanged tree reuses the last)."""
        tree = await self.write_tree()
        last = await asyncio.to_thread(self._read_last)
        if last is not None and last[1] == tree:
            commit = last[0]
        else:
            message = (label or "seam checkpoint").encode()
            commit = (await self.git("commit-tree", tree, stdin=message)).decode().strip()
        await asyncio.to_thread(self._note, session_ref_prefix(session_key) + commit, commit, tree)
        return commit

    async def write_tree(self) -> str:
        """The directory as a tree object (the index brought up to date first)."""
        await self._ensure()
        ignore = str(self.git_dir / _EXCLUDE)
        # New files (but ignored names), and kept ones changed or deleted since (by their
        # stat data in the index): one walk of the directory.
        listed = await self.git(
            "ls-files", "-z", "--others", "--modified", "--deleted", f"--exclude-from={ignore}"
        )
        paths = list(dict.fromkeys(p for p in _split(listed) if not p.endswith("/")))
        if len(paths) > self.settings.max_files:
            raise CheckpointError(
                f"{len(paths):,} files to keep in {self.work_tree} (more than"
                f" {self.settings.max_files:,}); add its big folders to [checkpoints] ignore"
            )
        if paths:
            keep, drop = await asyncio.to_thread(self._by_size, paths)
            if drop:
                await self.git("update-index", "--force-remove", "-z", "--stdin", stdin=_z(drop))
            if keep:
                # Many files at once (a first checkpoint) go straight into one pack
                # rather than a file per object; a few stay loose (no pack per turn).
                bulk = ("core.bigFileThreshold=1",) if len(keep) > _BULK else ()
                await self.git(
                    "update-index",
                    "--add",
                    "--remove",
                    "-z",
                    "--stdin",
                    stdin=_z(keep),
                    config=bulk,
                )
        return (await self.git("write-tree")).decode().strip()

    async def diff(self, a: str, b: str | None) -> Diff:
        """Changes from `a` to `b` (None: the directory now), as names and unified text."""
        await self._ensure()
        await self.check(a)
        if b is not None:
            await self.check(b)
        target = b if b is not None else await self.write_tree()
        names = await self.git("diff", "--name-status", "-z", "--no-renames", a, target)
        changes = _changes(_split(names))
        text = await self.git("diff", "--no-color", "--no-ext-diff", "--no-renames", a, target)
        return Diff(changes=changes, text=text.decode(errors="replace"))

    async def refs(self) -> list[tuple[str, int]]:
        """Every session ref with its commit time, oldest first."""
        if not await asyncio.to_thread((self.git_dir / "HEAD").exists):
            return []
        out = await self.git(
            "for-each-ref",
            "--sort=committerdate",
            "--format=%(refname) %(committerdate:unix)",
            _REFS,
        )
        rows = [line.rsplit(" ", 1) for line in out.decode().splitlines() if line]
        return [(ref, int(when or 0)) for ref, when in rows]

    async def copy_refs(self, old_prefix: str, new_prefix: str) -> int:
        """Name every commit under `old_prefix` under `new_prefix` too (a session's
        checkpoints, for its new key); returns how many refs were copied."""
        if not await asyncio.to_thread((self.git_dir / "HEAD").exists):
            return 0
        out = await self.git("for-each-ref", "--format=%(refname) %(objectname)", old_prefix)
        rows = [line.rsplit(" ", 1) for line in out.decode().splitlines() if line]
        lines = [f"create {new_prefix}{ref[len(old_prefix) :]} {commit}\n" for ref, commit in rows]
        if lines:
            await self.git("update-ref", "--stdin", stdin="".join(lines).encode())
        return len(lines)

    async def drop(self, refs: Sequence[str]) -> None:
        """Delete these refs and the objects only they held."""
        if not refs:
            return
        await self.git(
            "update-ref", "--stdin", stdin="".join(f"delete {r}\n" for r in refs).encode()
        )
        await self.git("gc", "--prune=now", "--quiet")
        # The last-snapshot shortcut and the stat cache may name objects gc just freed.
        await asyncio.to_thread(self._forget)

    async def check(self, checkpoint: str) -> None:
        """Raise `CheckpointError` unless `checkpoint` is a snapshot of this directory."""
        await self._ensure()
        self._check_id(checkpoint)
        try:
            await self.git("cat-file", "-e", f"{checkpoint}^{{commit}}")
        except CheckpointError:
            raise CheckpointError(f"no checkpoint {checkpoint[:12]} of {self.work_tree}") from None

    def _check_id(self, checkpoint: str) -> None:
        if not checkpoint or not all(c in "0123456789abcdef" for c in checkpoint):
            raise CheckpointError(f"not a checkpoint id: {checkpoint!r}")

    def _forget(self) -> None:
        for name in (_LAST, "index"):
            (self.git_dir / name).unlink(missing_ok=True)

    async def _ensure(self) -> None:
        if self._ready:
            return
        if not await asyncio.to_thread(self.work_tree.is_dir):
            raise CheckpointError(f"no such directory: {self.work_tree}")
        if not await asyncio.to_thread((self.git_dir / "HEAD").exists):
            await asyncio.to_thread(self.git_dir.mkdir, parents=True, exist_ok=True)
            await self.git("init", "--quiet")
        await asyncio.to_thread(self._write_settings)
        self._ready = True

    def _write_settings(self) -> None:
        patterns = "".join(f"{name}\n" for name in self.settings.ignore)
        (self.git_dir / _EXCLUDE).write_text(patterns)
        # Over the project's own .gitattributes: no line-ending conversion, filter or
        # keyword expansion, so what is kept (and restored) is the bytes on disk.
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(_ATTRIBUTES)
        (self.git_dir / _WORKDIR).write_text(f"{self.work_tree}\n")

    def _read_last(self) -> tuple[str, str] | None:
        try:
            commit, tree = (self.git_dir / _LAST).read_text().split()
        except (OSError, ValueError):
            return None
        return commit, tree

    def _note(self, ref: str, commit: str, tree: str) -> None:
        """Remember the last snapshot, and name it for its session: a loose ref written
        as git writes one (a file holding the id, renamed into place)."""
        _replace(self.git_dir / _LAST, f"{commit} {tree}\n")
        path = self.git_dir / ref
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            _replace(path, f"{commit}\n")

    def _by_size(self, paths: list[str]) -> tuple[list[str], list[str]]:
        """(paths to keep or drop from the index as they are, paths now over the limit)."""
        limit = self.settings.max_file_bytes
        keep: list[str] = []
        drop: list[str] = []
        for path in paths:
            try:
                size = os.lstat(self.work_tree / path).st_size
            except OSError:
                size = 0  # deleted: --remove takes it out
            (drop if size > limit else keep).append(path)
        return keep, drop


def _replace(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text)
    temp.replace(path)


def _split(out: bytes) -> list[str]:
    return [p.decode(errors="surrogateescape") for p in out.split(b"\0") if p]


def _z(paths: Sequence[str]) -> bytes:
    return b"".join(p.encode(errors="surrogateescape") + b"\0" for p in paths)


def _changes(fields: list[str]) -> tuple[FileChange, ...]:
    """`--name-status -z` output: status, path, status, path, ..."""
    out: list[FileChange] = []
    for status, path in zip(fields[::2], fields[1::2], strict=True):
        kind = status[:1]
        out.append(FileChange(kind="A" if kind == "A" else "D" if kind == "D" else "M", path=path))
    return tuple(out)
