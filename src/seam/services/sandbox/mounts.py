"""What a command under bubblewrap can see, worked out from the session's `Reach`.

The view starts empty. Into it go the system directories (read-only), a fresh `/dev`, a
`/proc` of the sandbox's own processes, a private `/tmp`, an empty home, and then each root
the reach grants: writable where the reach lets it be written, read-only elsewhere. What
the reach denies is never mounted, and where it lies inside a mounted root it is masked (an
empty tmpfs over a directory, `/dev/null` over a file), so `$SEAM_HOME` and the person's
dotfiles stay out even when the working directory is the home itself.

A denied path that does not exist yet (no `~/.bashrc` today) cannot be masked, and a
command could create it in a writable parent. Where such a path belongs to the person's
home (or is named absolutely, like `$SEAM_HOME`), the parent it would be created in is
rebuilt instead: a tmpfs with each of its entries bound back one by one, the denied ones
left out. Files a command creates at that level then vanish when it ends; everything
below them (each bound directory) behaves as usual.

The plan is computed for each command, from the filesystem as it is then, so what the
file tools wrote a moment ago is seen, and masked if it must be.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from seam.contracts.sandbox import SKILLS_MOUNT
from seam.contracts.storage import GLOB_CHARS, Reach, within
from seam.services.sandbox.git_controls import git_control_paths

# Read-only in every sandbox: what programs need to run. Symlinks (`/bin -> usr/bin` on
# current Debian) are recreated as symlinks.
SYSTEM_DIRS: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
)
# With the network on, name resolution may live here (`/etc/resolv.conf` points into it).
RESOLVER_DIRS: tuple[str, ...] = ("/run/systemd/resolve",)

# Mount order within one depth: bases, split children, roots, splits, masks, bare dirs.
_BASE, _CHILD, _ROOT, _SPLIT, _MASK, _DIR = range(6)
# Entries of one directory rebuilt at most; beyond it the directory is bound read-only.
MAX_SPLIT_ENTRIES = 2000


@dataclass(frozen=True, slots=True)
class _Op:
    path: str
    rank: int
    args: tuple[str, ...]

    @property
    def key(self) -> tuple[int, int, str]:
        return (0 if self.path == "/" else self.path.count("/"), self.rank, self.path)


@dataclass(frozen=True, slots=True)
class View:
    """What one command's view adds to its reach: directories shown read-only although
    the reach denies them, the trusted skills' folders (`{name: folder}`, each shown
    read-only at `/skills/<name>` so their scripts run at a path that does not depend on
    where the skill lives), and whether the person approved this command writing
    `.git/hooks` and `.git/config`."""

    read_only: tuple[str, ...] = ()
    git_writes: bool = False
    skills: tuple[tuple[str, str], ...] = ()


def _has_glob(text: str) -> bool:
    return any(ch in GLOB_CHARS for ch in text)


def _expand(path: str) -> list[str]:
    if not _has_glob(path):
        return [path]
    # Patterns are absolute: glob relative to `/`, dotfiles included (`*` matches them).
    return [str(found) for found in Path("/").glob(path.lstrip("/"))]


def _link(path: str) -> str | None:
    """Where a symlink points (as written), or None when `path` is not one."""
    target = Path(path)
    return str(target.readlink()) if target.is_symlink() else None


class _Planner:
    def __init__(
        self, working_dir: str, reach: Reach, home: str | None, network: bool, view: View
    ) -> None:
        self.working_dir = working_dir
        self.reach = reach
        self.network = network
        self.view = view
        roots = {*reach.read, *reach.write, working_dir}
        # Denied and missing roots are never mounted (the working dir gets a bare dir).
        self.roots = sorted(
            r for r in roots if r != "" and not reach.denied(r) and os.path.lexists(r)
        )
        self.roots = [r for r in self.roots if reach.readable(r)]
        self.system = [d for d in SYSTEM_DIRS if os.path.lexists(d)]
        self.home = home if home and home != "/" and Path(home).is_absolute() else None
        self.ops: list[_Op] = []

    def visible(self, path: str) -> bool:
        return any(within(path, r) for r in self.roots) or any(within(path, d) for d in self.system)

    def bind(self, path: str, rank: int) -> _Op:
        link = _link(path)
        if link is not None:
            return _Op(path, rank, ("--symlink", link, path))
        flag = "--bind" if self.reach.writable(path) else "--ro-bind"
        return _Op(path, rank, (flag, path, path))

    def plan(self) -> list[str]:
        ops = self.ops
        for path in self.system:
            link = _link(path)
            if link is None:
                # Read-only even inside a root the reach makes writable (`write = ["/"]`).
                ops.append(_Op(path, _BASE, ("--ro-bind", path, path)))
            elif not any(within(path, r) for r in self.roots):  # a root already has it
                ops.append(_Op(path, _BASE, ("--symlink", link, path)))
        if self.network:
            for path in RESOLVER_DIRS:
                ops.append(_Op(path, _BASE, ("--ro-bind-try", path, path)))
        ops.append(_Op("/dev", _BASE, ("--dev", "/dev")))
        ops.append(_Op("/proc", _BASE, ("--proc", "/proc")))
        ops.append(_Op("/tmp", _BASE, ("--tmpfs", "/tmp")))
        home = self.home
        if home is not None and not any(within(home, r) for r in self.roots):
            ops.append(_Op(home, _BASE, ("--tmpfs", home)))
        ops.extend(self.bind(root, _ROOT) for root in self.roots)
        self._mask_denied()
        if not self.view.git_writes:
            self._protect_git()
        for path in self.view.read_only:
            if Path(path).is_dir():  # shown read-only even where the reach denies it
                ops.append(_Op(path, _MASK, ("--ro-bind", path, path)))
        self._show_skills()
        if not any(within(self.working_dir, r) for r in self.roots) or self.reach.denied(
            self.working_dir
        ):
            # Outside the reach (or denied): the command still starts there, in an empty dir.
            ops.append(_Op(self.working_dir, _DIR, ("--dir", self.working_dir)))
        args: list[str] = []
        for op in sorted(ops, key=lambda op: op.key):
            args.extend(op.args)
        return args

    def _show_skills(self) -> None:
        """Each trusted skill's folder, read-only at `/skills/<name>` (never when a root
        is `/` itself: bwrap would have to create `/skills` on the host)."""
        if any(root == "/" for root in self.roots):
            return
        for name, folder in self.view.skills:
            if "/" in name or name in ("", ".", "..") or not Path(folder).is_dir():
                continue
            target = f"{SKILLS_MOUNT}/{name}"
            self.ops.append(_Op(target, _MASK, ("--ro-bind", folder, target)))

    def _protect_git(self) -> None:
        """`.git/hooks` and `.git/config` read-only in every writable repository in view
        (a missing hooks dir becomes an empty read-only one, so none can be created)."""
        roots = [r for r in self.roots if Path(r).is_dir()]
        for path in git_control_paths(roots):
            in_writable_root = any(within(path, root) for root in self.reach.write)
            # (Not `reach.writable`: the reach itself marks git's controls write-protected.)
            if not self.visible(path) or not in_writable_root or self.reach.denied(path):
                continue
            if os.path.lexists(path):
                self.ops.append(_Op(path, _MASK, ("--ro-bind", path, path)))
            elif path.endswith("/hooks") and Path(path).parent.is_dir():
                self.ops.append(_Op(path, _MASK, ("--tmpfs", path, "--remount-ro", path)))

    def _candidates(self) -> tuple[set[str], set[str]]:
        """Concrete denied paths worth a look, and those whose creation must be prevented."""
        found: set[str] = set()
        guarded: set[str] = set()
        home = self.home
        home_seen = home is not None and any(within(home, r) for r in self.roots)
        # `*/name` patterns are looked for in each root and the directories right in it
        # (a working dir holding several homes, or a checkout's own `.ssh`), and in the home.
        bases = {root.rstrip("/") for root in self.roots}
        for root in self.roots:
            bases.update(_subdirs(root))
        for pattern in self.reach.deny:
            if pattern.startswith("*/"):
                tail = pattern[2:]
                globbed = _has_glob(tail)
                for base in bases:
                    path = f"{base}/{tail}"
                    if globbed:
                        found.update(_expand(path))
                    elif os.path.lexists(path):
                        found.add(path)
                if home_seen and home is not None:
                    path = f"{home}/{tail}"
                    if globbed:
                        found.update(_expand(path))
                    else:
                        found.add(path)
                        guarded.add(path)
            elif pattern.startswith("/"):
                if _has_glob(pattern):
                    found.update(_expand(pattern))
                else:
                    found.add(pattern)
                    guarded.add(pattern)
        return found, guarded

    def _mask_denied(self) -> None:
        found, guarded = self._candidates()
        masks: set[str] = set()
        splits: set[str] = set()
        for path in found:
            if os.path.lexists(path):
                target = os.path.realpath(path)
                if Path(target).exists() and self.visible(target):
                    masks.add(target)
            elif path in guarded:
                parent = _existing_ancestor(path)
                if parent is not None and self.visible(parent) and self.reach.writable(parent):
                    splits.add(parent)
        masks = _outermost(masks)
        splits = {s for s in splits if not any(within(s, m) for m in masks)}
        for path in sorted(splits):
            self._split(path)
        for path in masks:
            if Path(path).is_dir():
                self.ops.append(_Op(path, _MASK, ("--tmpfs", path)))
            else:
                self.ops.append(_Op(path, _MASK, ("--ro-bind", "/dev/null", path)))

    def _split(self, path: str) -> None:
        """Rebuild `path` as a tmpfs holding its allowed entries: nothing new at its level
        survives the command, so a denied name cannot be created there."""
        try:
            with os.scandir(path) as entries:
                names = [entry.name for entry in entries]
        except OSError:
            names = []
        if len(names) > MAX_SPLIT_ENTRIES:
            self.ops.append(_Op(path, _SPLIT, ("--ro-bind", path, path)))
            return
        self.ops.append(_Op(path, _SPLIT, ("--tmpfs", path)))
        for name in sorted(names):
            child = f"{path.rstrip('/')}/{name}"
            if self.reach.denied(child):
                continue
            self.ops.append(self.bind(child, _CHILD))


def _subdirs(root: str) -> list[str]:
    """The directories directly in `root` (not followed through links)."""
    try:
        with os.scandir(root) as entries:
            return [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _existing_ancestor(path: str) -> str | None:
    for parent in Path(path).parents:
        if parent.is_dir():
            return str(parent)
    return None


def _outermost(paths: Iterable[str]) -> set[str]:
    kept: list[str] = []
    for path in sorted(paths):
        if not any(within(path, k) for k in kept):
            kept.append(path)
    return set(kept)


def mount_args(
    working_dir: str,
    reach: Reach | None,
    *,
    home: str | None,
    network: bool = False,
    view: View | None = None,
) -> list[str]:
    """The bwrap mount arguments for one command run in `working_dir` under `reach`."""
    if reach is None:
        reach = Reach(read=(working_dir,), write=(working_dir,))
    return _Planner(working_dir, reach, home, network, view or View()).plan()
