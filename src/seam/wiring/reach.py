"""The deny half of the reach definition that only wiring can write: it names real paths.

`contracts/storage.py` holds the rules and the home-independent list (`ALWAYS_DENY`:
credentials, shell and tool start-up files, system secrets). Here the paths of this
installation are added: all of `$SEAM_HOME` (config, approvals, personalities, the store,
pools, memory: the memory tool writes memory through its own checks, never through
storage), the store wherever `[store] path` puts it, and the person's `~/.config` and
`~/.local` (autostart entries, systemd user units, keyrings, programs on `PATH`). The
file tools check this list and the bubblewrap sandbox masks it, so both agree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from seam.contracts.storage import Storage
from seam.core.storage import ScopedStorage
from seam.wiring.settings import Settings

# Under the person's real home, denied in full (beyond the `*/...` patterns of ALWAYS_DENY).
HOME_DENY: tuple[str, ...] = (".config", ".local")


def user_home(env: Mapping[str, str]) -> Path | None:
    """The person's home directory (canonical), from HOME or the password database."""
    raw = env.get("HOME", "").strip()
    try:
        home = Path(raw) if raw else Path.home()
    except RuntimeError:  # no HOME and no password entry
        return None
    return Path(os.path.realpath(home)) if home.is_absolute() else None


def fs_deny(settings: Settings) -> list[str]:
    """Paths no tool may read or write, whatever a personality's `fs_reach` says."""
    seam_home = Path(os.path.realpath(settings.home))
    deny = [str(seam_home), str(settings.home)]
    db_file = str(settings.store_path)
    deny += [db_file, f"{db_file}-wal", f"{db_file}-shm"]
    real_db = os.path.realpath(db_file)
    deny += [real_db, f"{real_db}-wal", f"{real_db}-shm"]
    home = user_home(settings.env)
    if home is not None:
        deny += [str(home / name) for name in HOME_DENY]
    return list(dict.fromkeys(deny))


class _Denying(Protocol):
    @property
    def fs_deny(self) -> Sequence[str]: ...


class StorageRuntime(Protocol):
    """What `working_dir_storage` needs of a runtime (`wiring.runtime.Runtime` is one):
    its storage and the deny list its loop applies."""

    @property
    def storage(self) -> Storage: ...

    @property
    def loop(self) -> _Denying: ...


def working_dir_storage(runtime: StorageRuntime, working_dir: str) -> ScopedStorage:
    """The runtime's storage confined to `working_dir` and kept off the deny list, for
    what a surface writes there on a person's behalf (documents sent in a chat). A
    sandboxed command can plant links in the working directory; through this storage a
    link that leads out of it (or into `$SEAM_HOME`) is refused, never followed."""
    return ScopedStorage(
        runtime.storage,
        working_dir=working_dir,
        read=(".",),
        write=(".",),
        deny=runtime.loop.fs_deny,
    )


def broad_working_dir(working_dir: Path, env: Mapping[str, str]) -> str | None:
    """Why starting in `working_dir` is risky (the home itself, or `/`), or None."""
    real = Path(os.path.realpath(working_dir))
    if real == Path("/"):
        return "the working directory is / (the whole machine)"
    home = user_home(env)
    if home is not None and real == home:
        return f"the working directory is your home directory ({home})"
    return None


def risky_start(env: Mapping[str, str] | None = None, cwd: Path | None = None) -> str | None:
    """`broad_working_dir` for this process (its environment and current directory)."""
    return broad_working_dir(cwd or Path.cwd(), os.environ if env is None else env)
