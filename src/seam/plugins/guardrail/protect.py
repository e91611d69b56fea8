"""Seam's own files: whether a command names a protected path (its home: approvals,
config, transcripts), however it is spelled, or goes through a directory above one."""

from __future__ import annotations

import posixpath
import re
from fnmatch import fnmatchcase

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.normalize import canonical_path
from seam.plugins.guardrail.scope import Policy

PROTECTED_RULE = "floor:seam-home"
PROTECTED_REASON = "touches Seam's own files (approvals, config, personalities, transcripts)"
_HOME_VARS = re.compile(r"\$\{?(HOME|SEAM_HOME)\}?(?![\w])")
_PATH_PIECE = re.compile(r"[^\s'\"=:,;()<>|&]+")
_GLOB = re.compile(r"[*?\[]")
# Programs that go through whole trees, and the options that make them (empty: always).
_RECURSIVE: dict[str, frozenset[str]] = {
    "find": frozenset(), "rg": frozenset(), "ag": frozenset(), "fd": frozenset(),
    "tar": frozenset(), "rsync": frozenset(), "du": frozenset(), "tree": frozenset(),
    "mv": frozenset(), "grep": frozenset({"-r", "-R", "--recursive"}),
    "cp": frozenset({"-r", "-R", "-a", "--recursive", "--archive"}),
    "zip": frozenset({"-r"}), "chmod": frozenset({"-R"}), "chown": frozenset({"-R"}),
    "rm": frozenset({"-r", "-R", "--recursive"}), "ls": frozenset({"-R"}),
}  # fmt: skip


def _cluster_has(arg: str, options: frozenset[str]) -> bool:
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    return any(len(o) == 2 and o[1] in arg[1:] for o in options)


def _expand_home(word: str, seam_home: str, variables: dict[str, str]) -> str:
    """`$HOME` as `~` and `$SEAM_HOME` as Seam's home, wherever in the word they are."""

    def var(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables:
            return variables[name]
        if name == "HOME":
            return "~"
        return seam_home or match.group(0)

    return _HOME_VARS.sub(var, word) if "$" in word else word


def _mentions(text: str, spelling: str) -> bool:
    """Whether `spelling` appears in `text` as a whole path (not `/x/.seam2`)."""
    start = text.find(spelling)
    while start >= 0:
        end = start + len(spelling)
        if end == len(text) or text[end] in "/\"' \t\n;)|&:,":
            return True
        start = text.find(spelling, start + 1)
    return False


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/") or root == "/"


def _glob_reaches(pattern: str, path: str) -> bool:
    """Whether the glob `pattern` could match `path` or something inside it."""
    parts, wanted = pattern.strip("/").split("/"), path.strip("/").split("/")
    if pattern[:1] != path[:1]:
        return False
    if len(parts) < len(wanted):
        return False
    return all(_component_matches(w, p) for w, p in zip(wanted, parts, strict=False))


def _component_matches(name: str, pattern: str) -> bool:
    """One path component against one glob component, as the shell matches them: a leading
    dot is matched only by a literal dot (`*` lists `~`, it never reaches `~/.seam`)."""
    if name.startswith(".") and not pattern.startswith("."):
        return False
    return fnmatchcase(name, pattern)


def protected(policy: Policy, cmd: Cmd, cwd: str | None, variables: dict[str, str]) -> str:
    """ "named" when a word of `cmd` names a protected path (or a glob matching one),
    "ancestor" when a recursive command starts above one, else ""."""
    words = [cmd.argv0, *cmd.args, *(r.target for r in cmd.redirects)]
    if cmd.name not in ("cat", "tee"):  # for those a here-document is data, not code
        words += [r.body for r in cmd.redirects if r.body]
    recursive = _RECURSIVE.get(cmd.name)
    reaches = recursive is not None and (
        not recursive or any(a in recursive or _cluster_has(a, recursive) for a in cmd.args)
    )
    found = ""
    for word in words:
        hit = _names_protected(policy, word, reaches, cwd, variables)
        if hit == "named":
            return hit
        found = found or hit
    return found


def _names_protected(
    policy: Policy, word: str, ancestor: bool, cwd: str | None, variables: dict[str, str]
) -> str:
    if not word:
        return ""
    classifier = policy
    seam_home = classifier.protected[0] if classifier.protected else ""
    text = _expand_home(word, seam_home, variables)
    if any(_mentions(text, s) for spellings in classifier.spellings for s in spellings):
        return "named"
    found = ""
    for piece in _PATH_PIECE.findall(text):
        canonical = canonical_path(piece, home=classifier.home, cwd=cwd)
        relative = not canonical.startswith(("/", "~"))
        globbed = _GLOB.search(canonical) is not None
        for path, spellings in zip(classifier.protected, classifier.spellings, strict=True):
            for spelling in spellings:
                if _inside(canonical, spelling):
                    return "named"
                if globbed and _glob_reaches(canonical, spelling):
                    return "named"
                if ancestor and not relative and _inside(spelling, canonical):
                    found = "ancestor"
            # Where a relative path starts is unknown: its name is enough.
            if relative and cwd is None and posixpath.basename(path) in canonical:
                return "named"
    return found
