"""Running git against a shadow repository, and nothing else.

Every call names the repository, the work tree and the index explicitly and inherits no
`GIT_*` variable, no user or system config and no hooks, so a checkpoint can never read
or write the project's own `.git`, run the project's hooks, or pick up a `GIT_DIR` the
agent's shell exported. Calls are `asyncio` subprocesses: a snapshot never blocks the
event loop (and so never the other sessions).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path

from seam.contracts.checkpoints import CheckpointError

# Settings every call carries: no hooks, no filters or line-ending rewriting (restore
# must be byte-exact), no background gc (prune runs it when asked), a fixed identity.
_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "core.quotepath=off",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.untrackedCache=false",
    "gc.auto=0",
    "core.logAllRefUpdates=false",
    "commit.gpgSign=false",
    "user.name=seam",
    "user.email=seam@localhost",
)
# Another process snapshotting the same directory holds the index lock for a moment.
_LOCK_RETRIES = 40
_LOCK_WAIT = 0.05


def git_env(git_dir: Path, work_tree: Path, base: Mapping[str, str]) -> dict[str, str]:
    """`base` without any `GIT_*` variable, plus the shadow repository's own."""
    env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_WORK_TREE=str(work_tree),
        GIT_INDEX_FILE=str(git_dir / "index"),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_OPTIONAL_LOCKS="0",
        LC_ALL="C",
    )
    return env


class Git:
    """git for one shadow repository: `await git("write-tree")` -> its stdout."""

    def __init__(self, git_dir: Path, work_tree: Path, base_env: Mapping[str, str]) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self._env = git_env(git_dir, work_tree, base_env)
        self._prefix = ["git"] + [part for item in _CONFIG for part in ("-c", item)]

    async def __call__(
        self, *args: str, stdin: bytes | None = None, ok: int = 0, config: tuple[str, ...] = ()
    ) -> bytes:
        """Run one git command (`config`: more `-c` settings for it alone); raises
        `CheckpointError` with git's first line of error when it exits with more than
        `ok`."""
        argv = tuple(part for item in config for part in ("-c", item)) + args
        for _ in range(_LOCK_RETRIES):
            code, out, err = await self._run(argv, stdin)
            if code <= ok:
                return out
            if b".lock" not in err:
                break
            await asyncio.sleep(_LOCK_WAIT)
        first = err.decode(errors="replace").strip().splitlines() or [f"exit {code}"]
        raise CheckpointError(f"git {args[0]}: {first[0]}")

    async def _run(self, args: tuple[str, ...], stdin: bytes | None) -> tuple[int, bytes, bytes]:
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._prefix,
                *args,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
                cwd=str(self.work_tree) if self.work_tree.is_dir() else str(self.git_dir),
            )
        except OSError as exc:
            raise CheckpointError(f"cannot run git: {exc.strerror or exc}") from None
        out, err = await proc.communicate(stdin)
        return proc.returncode or 0, out, err
