"""`ShadowCheckpoints`: the `CheckpointEngine` over shadow git repositories.

    engine = ShadowCheckpoints(Path("~/.seam/checkpoints"), CheckpointSettings())
    before = await engine.snapshot("/home/me/project", session_key=key)
    ...  # the agent changes files
    diff = await engine.diff("/home/me/project", before)        # to the directory now
    await engine.restore("/home/me/project", before, [c.path for c in diff.changes])

One repository per directory (`<root>/<sha256 of its real path>[:24]`), shared by every
session working there, so the same unchanged files are stored once. Calls on one
repository are serialised by a lock here (and by git's index lock across processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from seam.contracts.checkpoints import CheckpointError, CheckpointSettings, Diff
from seam.services.checkpoints.repo import ShadowRepo, session_from_ref, session_ref_prefix
from seam.services.checkpoints.restore import restore


class ShadowCheckpoints:
    """A `CheckpointEngine`; `root` is where the repositories live (wiring passes
    `$SEAM_HOME/checkpoints`), `base_env` the environment git starts from (its `GIT_*`
    variables are dropped; wiring passes the process's own)."""

    def __init__(
        self,
        root: Path,
        settings: CheckpointSettings | None = None,
        *,
        base_env: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.settings = settings or CheckpointSettings()
        self._env = dict(base_env if base_env is not None else {"PATH": os.defpath})
        self._repos: dict[str, ShadowRepo] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def git_dir_for(self, work_dir: str) -> Path:
        real = os.path.realpath(work_dir)
        return self.root / hashlib.sha256(real.encode()).hexdigest()[:24]

    async def snapshot(self, work_dir: str, *, session_key: str, label: str = "") -> str:
        repo = self._repo(work_dir)
        async with self._lock(repo):
            return await repo.snapshot(session_key, label)

    async def diff(self, work_dir: str, a: str, b: str | None = None) -> Diff:
        repo = self._repo(work_dir)
        async with self._lock(repo):
            return await repo.diff(a, b)

    async def restore(self, work_dir: str, checkpoint: str, paths: Sequence[str]) -> None:
        repo = self._repo(work_dir)
        async with self._lock(repo):
            await repo.check(checkpoint)
            await restore(repo.git, repo.work_tree, checkpoint, paths)

    async def disk_usage(self) -> int:
        return await asyncio.to_thread(_du, self.root)

    async def sessions(self) -> list[str]:
        keys: set[str] = set()
        for repo in await self._all_repos():
            for ref, _ in await repo.refs():
                key = session_from_ref(ref)
                if key is not None:
                    keys.add(key)
        return sorted(keys)

    async def link_session(self, old: str, new: str) -> None:
        """The checkpoints of session `old` kept under `new` as well (a rename: `prune`
        of the key that lost drops the other names)."""
        for repo in await self._all_repos():
            async with self._lock(repo):
                await repo.copy_refs(session_ref_prefix(old), session_ref_prefix(new))

    async def prune(self, session_keys: Sequence[str]) -> int:
        before = await self.disk_usage()
        prefixes = tuple(session_ref_prefix(k) for k in session_keys)
        for repo in await self._all_repos():
            async with self._lock(repo):
                held = [ref for ref, _ in await repo.refs()]
                await repo.drop([ref for ref in held if ref.startswith(prefixes)])
                if all(ref.startswith(prefixes) for ref in held):
                    await self._forget_if_gone(repo)
        return max(0, before - await self.disk_usage())

    async def _forget_if_gone(self, repo: ShadowRepo) -> None:
        """A repository with no checkpoint left whose directory is gone goes entirely."""
        if not await asyncio.to_thread(repo.work_tree.exists):
            await asyncio.to_thread(shutil.rmtree, repo.git_dir, True)
            self._repos.pop(str(repo.git_dir), None)

    async def prune_to_budget(self, keep: Sequence[str] = ()) -> int:
        before = used = await self.disk_usage()
        while used > self.settings.budget_bytes:
            oldest = await self._oldest_sessions(set(keep))
            if not oldest:
                break
            # Half of what is left at a time: each round costs a gc per repository.
            await self.prune(oldest[: max(1, len(oldest) // 2)])
            used = await self.disk_usage()
        return max(0, before - used)

    async def _oldest_sessions(self, keep: set[str]) -> list[str]:
        """Sessions (not in `keep`) by their newest checkpoint, oldest first."""
        newest: dict[str, int] = {}
        for repo in await self._all_repos():
            for ref, when in await repo.refs():
                key = session_from_ref(ref)
                if key is not None and key not in keep:
                    newest[key] = max(newest.get(key, 0), when)
        return sorted(newest, key=lambda k: (newest[k], k))

    def _repo(self, work_dir: str) -> ShadowRepo:
        if not Path(work_dir).is_absolute():
            raise CheckpointError(f"not an absolute directory: {work_dir!r}")
        git_dir = self.git_dir_for(work_dir)
        repo = self._repos.get(str(git_dir))
        if repo is None:
            real = Path(os.path.realpath(work_dir))
            repo = self._repos[str(git_dir)] = ShadowRepo(git_dir, real, self.settings, self._env)
        return repo

    async def _all_repos(self) -> list[ShadowRepo]:
        """Every repository under the root, including other processes' (read from disk)."""
        found = await asyncio.to_thread(_repo_dirs, self.root)
        repos = []
        for git_dir, work_dir in found:
            repo = self._repos.get(str(git_dir))
            if repo is None:
                repo = ShadowRepo(git_dir, Path(work_dir), self.settings, self._env)
                self._repos[str(git_dir)] = repo
            repos.append(repo)
        return repos

    def _lock(self, repo: ShadowRepo) -> asyncio.Lock:
        return self._locks.setdefault(str(repo.git_dir), asyncio.Lock())


def _repo_dirs(root: Path) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    try:
        children = sorted(root.iterdir())
    except OSError:
        return out
    for child in children:
        try:
            work_dir = (child / "seam-workdir").read_text().strip()
        except OSError:
            continue
        out.append((child, work_dir))
    return out


def _du(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(folder) / name).lstat().st_size
    return total
