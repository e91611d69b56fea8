"""File access for tools, always through this seam so reach can be enforced.

Paths are strings. `resolve` returns the canonical path (absolute, `..` folded,
symlinks followed) so `ScopedStorage` can check reach against where a path really
points, not what it claims.

`Reach` is the one definition of what a session may touch: the file tools check it
path by path (`ScopedStorage`) and the bubblewrap sandbox turns the same value into
what a command can see (which roots it mounts, which paths it masks). The matching
rules live here, in the vocabulary, because both sides must use exactly the same ones.

The protected list is defined here once: `ALWAYS_DENY` (credentials, shell and tool
start-up files, autostart, systemd user units, crontabs, system secrets: never read nor
written) and `WRITE_PROTECTED` (git hooks and git config of any repository: readable,
never written). Wiring adds the paths only it knows (all of `$SEAM_HOME`, the store: see
`wiring/reach.py`); the memory tool writes memory through its own backend, never here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import translate
from functools import lru_cache
from typing import Protocol, runtime_checkable

GLOB_CHARS = frozenset("*?[")

# Denied whatever a personality's reach says. A pattern matches a canonical path or any of
# its ancestors (so a directory's entry denies everything in it); `*` also matches `/`.
# Wiring adds what only it knows: all of `$SEAM_HOME`, the store, the real home's `.config`.
CREDENTIALS: tuple[str, ...] = (
    "*/.ssh",  # keys, and `authorized_keys` (who may log in)
    "*/.gnupg",
    "*/.aws",
    "*/.azure",
    "*/.kube",
    "*/.docker/config.json",
    "*/.netrc",
    "*/.pgpass",
    "*/.git-credentials",
    "*/.password-store",
    "*/.config/gcloud",
    "*/.config/gh",
    "*/.local/share/keyrings",
    "*/.pki",
    "*/.mozilla",
    "*/.thunderbird",
    "*/.config/google-chrome",
    "*/.config/chromium",
    "*/.config/BraveSoftware",
    "*/authorized_keys",
    "*/authorized_keys2",
)
# Files that run code the next time the person opens a shell, logs in or runs git, npm or
# pip: writing one is a way to outlive the session.
STARTUP_FILES: tuple[str, ...] = (
    "*/.bashrc",
    "*/.bash_profile",
    "*/.bash_login",
    "*/.bash_logout",
    "*/.profile",
    "*/.zshrc",
    "*/.zshenv",
    "*/.zprofile",
    "*/.zlogin",
    "*/.zlogout",
    "*/.cshrc",
    "*/.tcshrc",
    "*/.kshrc",
    "*/.inputrc",
    "*/.pam_environment",
    "*/.xinitrc",
    "*/.xprofile",
    "*/.xsessionrc",
    "*/.gitconfig",
    "*/.npmrc",
    "*/.yarnrc",
    "*/.pypirc",
    "*/.pip",
    "*/.condarc",
    "*/.gemrc",
    "*/.cargo/config",
    "*/.cargo/config.toml",
    "*/.cargo/credentials",
    "*/.cargo/credentials.toml",
    "*/.m2/settings.xml",
    "*/.vimrc",
    "*/.config/git",
    "*/.config/pip",
    "*/.config/fish",
    "*/.config/autostart",
    "*/.config/systemd",
    "*/.config/environment.d",
    "*/.local/share/systemd",
)
SYSTEM_SECRETS: tuple[str, ...] = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
    "/etc/ssh/ssh_host_*_key",
    # Crontabs run code on a schedule, as the person or as root.
    "/var/spool/cron",
    "/etc/crontab",
    "/etc/cron.d",
)
ALWAYS_DENY: tuple[str, ...] = (*CREDENTIALS, *STARTUP_FILES, *SYSTEM_SECRETS)
# Readable, never written by a tool: git runs hooks, and `.git/config` can name programs
# (`core.fsmonitor`, `core.hooksPath`, filters), on the person's host the next time they
# use git. `*` matches `/`, so submodules' and worktrees' own hooks and config count too.
WRITE_PROTECTED: tuple[str, ...] = (
    "*/.git/hooks",
    "*/.git/config",
    "*/.git/config.worktree",
    "*/.git/*/hooks",
    "*/.git/*/config",
    "*/.git/*/config.worktree",
)


def within(path: str, root: str) -> bool:
    """`path` is `root` or lies under it (both canonical, absolute)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def ancestry(path: str) -> list[str]:
    """`path` and each directory above it, nearest first, `/` excluded."""
    found = []
    while path not in ("/", ""):
        found.append(path)
        parent = path.rsplit("/", 1)[0] or "/"
        if parent == path:
            break
        path = parent
    return found


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(translate(p.rstrip("/") or "/") for p in patterns))


def deny_match(path: str, patterns: tuple[str, ...]) -> str | None:
    """The part of `path` (itself or an ancestor) that a deny pattern names, if any."""
    regex = _compiled(patterns)
    if regex is None:
        return None
    for candidate in ancestry(path):
        if regex.match(candidate):
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class Reach:
    """What one session may read and write: canonical absolute roots, `deny` patterns
    (absolute paths or globs, see `ALWAYS_DENY`) that win over every root, and `protect`
    patterns (see `WRITE_PROTECTED`) that may be read but never written."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    deny: tuple[str, ...] = ALWAYS_DENY
    protect: tuple[str, ...] = WRITE_PROTECTED

    def denied(self, path: str) -> bool:
        return deny_match(path, self.deny) is not None

    def protected(self, path: str) -> bool:
        """Denied, or one a tool may read but not write."""
        return self.denied(path) or deny_match(path, self.protect) is not None

    def readable(self, path: str) -> bool:
        roots = (*self.read, *self.write)  # anything writable is readable
        return not self.denied(path) and any(within(path, root) for root in roots)

    def writable(self, path: str) -> bool:
        return not self.protected(path) and any(within(path, root) for root in self.write)

    def refusal(self, path: str, write: bool) -> str | None:
        """Why `path` (canonical) may not be read (or written), in words, or None."""
        if self.denied(path):
            return f"{path} is always denied"
        hit = deny_match(path, self.protect) if write else None
        if hit is not None:
            return f"{path} is protected ({hit} runs code on the host; tools never write it)"
        roots = self.write if write else tuple(dict.fromkeys((*self.read, *self.write)))
        if any(within(path, root) for root in roots):
            return None
        verb = "write" if write else "read"
        return f"{path} is outside the allowed {verb} roots ({', '.join(roots) or 'nothing'})"

    def root_of(self, path: str) -> str | None:
        """The outermost root holding `path`: tools open beneath it, and no other root
        lies above it, so nothing a session can write sits on the way to it."""
        holding = [root for root in (*self.read, *self.write) if within(path, root)]
        return min(holding, key=len) if holding else None


class StorageError(Exception):
    pass


class NotFound(StorageError):
    pass


class AccessDenied(StorageError):
    pass


class PathChanged(StorageError):
    """A path changed between its check and its open (a symlink swapped in): the caller
    checks it again, and nothing was read or written through the change."""


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


@runtime_checkable
class BeneathStorage(Protocol):
    """A `Storage` that opens `rel` (canonical, relative, no `..`) beneath the directory
    `root` without following any symlink: a link found on the way raises `PathChanged`.
    `ScopedStorage` checks the resolved path and then uses these, so what it checked is
    what gets opened (no check-then-use by name)."""

    async def read_beneath(self, root: str, rel: str) -> str: ...

    async def write_beneath(self, root: str, rel: str, text: str) -> None: ...

    async def list_beneath(self, root: str, rel: str) -> list[StorageEntry]: ...

    async def exists_beneath(self, root: str, rel: str) -> bool: ...

    async def remove_beneath(self, root: str, rel: str) -> None: ...
