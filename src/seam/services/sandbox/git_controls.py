"""Where a sandboxed command could plant code that runs later on the person's host: git.

A hook in `.git/hooks`, or `core.fsmonitor`, `core.hooksPath`, an alias or a filter in
`.git/config`, runs the next time the person uses git in that repository, outside any
sandbox. So in every repository a command can reach (the working dir and each reach
root, the directories right inside them, and one level of submodules under
`.git/modules`), those two are mounted read-only, unless the person approved this very
command writing there. Found cheaply: a few `stat`s per root, no walk of the tree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

CONTROL_NAMES = ("hooks", "config")


def _git_dir(repo: str) -> Path | None:
    """The git directory of a work tree: `.git` itself, or where a `.git` file points."""
    dot_git = Path(repo, ".git")
    if dot_git.is_dir() and not dot_git.is_symlink():
        return dot_git
    if not dot_git.is_file():
        return None
    try:
        first = dot_git.read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(os.path.normpath(Path(repo, first.removeprefix("gitdir:").strip())))
    return target if target.is_dir() else None


def _with_modules(git_dir: Path) -> list[Path]:
    dirs = [git_dir]
    try:  # a linked work tree's hooks and config live in the common git directory
        common = (git_dir / "commondir").read_text().strip()
        dirs.append(Path(os.path.normpath(git_dir / common)))
    except OSError:
        pass
    try:
        with os.scandir(git_dir / "modules") as entries:
            dirs += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        pass
    return dirs


def _candidates(roots: Iterable[str]) -> set[str]:
    repos: set[str] = set()
    for root in roots:
        repos.add(root)
        try:
            with os.scandir(root) as entries:
                repos.update(
                    e.path for e in entries if e.is_dir(follow_symlinks=False) and e.name != ".git"
                )
        except OSError:
            continue
    return repos


def git_control_paths(roots: Iterable[str]) -> list[str]:
    """`.git/hooks` and `.git/config` (existing or not) of the repositories in `roots`."""
    found: set[str] = set()
    for repo in _candidates(roots):
        git_dir = _git_dir(repo)
        if git_dir is None:
            continue
        for directory in _with_modules(git_dir):
            found.update(os.path.realpath(directory / name) for name in CONTROL_NAMES)
    return sorted(found)
