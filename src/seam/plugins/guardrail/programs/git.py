"""git: reading a repository, changing it, and the options that make git run programs."""

from __future__ import annotations

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.grammar import given, long_matches
from seam.plugins.guardrail.programs.base import (
    EXECUTES,
    Doubt,
    Judgement,
    Kind,
    doubt,
    has_option,
)

_GIT_VALUES = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})
_GIT_READ = frozenset(
    {"status", "diff", "log", "show", "blame", "shortlog", "describe", "rev-parse", "ls-files"}
    | {"ls-tree", "grep", "reflog", "cat-file", "rev-list", "for-each-ref", "show-ref"}
    | {"name-rev", "whatchanged", "count-objects", "fsck", "verify-commit"}
    | {"cherry", "range-diff", "merge-base", "show-branch", "help", "version", "annotate"}
)
_GIT_WRITE = frozenset(
    {"add", "commit", "checkout", "switch", "merge", "rebase", "pull", "fetch", "push"}
    | {"restore", "cherry-pick", "revert", "mv", "rm", "init", "clone", "am", "apply"}
    | {"reset", "clean", "gc", "prune", "notes", "archive", "format-patch", "sparse-checkout"}
    | {"bundle", "maintenance", "repack", "pack-refs"}
)
# Subcommands that are read-only unless given arguments that change something.
_GIT_LISTING = {
    "branch": frozenset({"-a", "-r", "-l", "--list", "-v", "-vv", "--all", "--remotes"})
    | frozenset({"--show-current", "--merged", "--no-merged", "--contains", "--format"}),
    "tag": frozenset({"-l", "--list", "-n", "--contains", "--sort", "--points-at"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "stash": frozenset({"list", "show"}),
    "worktree": frozenset({"list"}),
}
# Actions whose operands only pick what to show.
_GIT_SHOWING = {
    "remote": ("show", "get-url"),
    "stash": ("list", "show"),
    "worktree": ("list",),
    "notes": ("list", "show"),
}
_GIT_RUNS = {
    # Options that make git run a program of the caller's choosing.
    "rebase": ("-x", "--exec"),
    "bisect": ("run",),
    "clone": ("-u", "--upload-pack", "--template", "-c", "--config"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "push": ("--receive-pack", "--exec"),
    "ls-remote": ("--upload-pack",),
    "archive": ("--exec", "--remote"),
    "difftool": (),
    "submodule": ("foreach",),
    "commit": ("--template",),
}


_REPO_READ: Kind = "run"
_GIT_GLOBAL = frozenset(
    {"--git-dir", "--work-tree", "--namespace", "--bare", "--no-pager", "-P", "-p"}
    | {"--paginate", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs"}
    | {"--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--version"}
    | {"--help", "-v", "-h", "--no-advice", "--no-lazy-fetch"}
)
# Options of any subcommand that name a program to run or a template that installs hooks.
# Subcommands that run a tool or a hook of the repository's choosing.
_GIT_TOOLS = frozenset(
    {"difftool", "mergetool", "filter-branch", "filter-repo", "hook", "instaweb"}
)
_GIT_ANY_RUNS = ("--upload-pack", "--receive-pack", "--exec", "--template", "--config")
_GIT_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--show-origin"}
    | {"--show-scope", "--global", "--system", "--local", "--worktree", "--file", "-f"}
    | {"--name-only", "--null", "-z", "--type", "--bool", "--int", "--path", "--includes"}
    | {"--no-includes", "--blob", "--default", "get", "list"}
)
_GIT_CONFIG_LOOKUPS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list"}
)


def _git_runs(sub: str, rest: tuple[str, ...]) -> bool:
    """Whether an option of `git sub` (any accepted abbreviation, any `-xVALUE` cluster)
    names a program for git to run."""
    for arg in rest:
        if arg == "--":
            return False
        if not arg.startswith("-"):
            continue
        if arg.startswith("--"):
            if any(long_matches(arg, o) for o in _GIT_ANY_RUNS):
                return True
            if any(long_matches(arg, o) for o in _GIT_RUNS.get(sub, ()) if o.startswith("--")):
                return True
        elif any(len(o) == 2 and o[1] in arg[1:] for o in _GIT_RUNS.get(sub, ())):
            return True
    return ("run" in _GIT_RUNS.get(sub, ()) and "run" in rest) or (
        sub == "submodule" and "foreach" in rest
    )


def _git_config(rest: tuple[str, ...]) -> Judgement:
    """Reading a value is harmless; setting one (core.fsmonitor, core.hooksPath, aliases,
    pagers) makes git run commands later, on the person's host."""
    options = [a.partition("=")[0] for a in rest if a.startswith("-")]
    values = [a for a in rest if not a.startswith("-")]
    lookup = any(o in _GIT_CONFIG_LOOKUPS for o in options) or (values[:1] in (["get"], ["list"]))
    setting = bool(values) and values[0] in ("set", "unset", "edit", "rename-section")
    known = all(o in _GIT_CONFIG_READS for o in options)
    if known and (lookup or len(values) <= 1) and not setting:
        return "read"
    reason = "changes git configuration (aliases, hooks and pagers run commands)"
    return doubt("git-config", reason)


def git(cmd: Cmd) -> Judgement:
    args = cmd.args
    start = _git_subcommand_at(args)
    if isinstance(start, Doubt):
        return start
    if start >= len(args):
        return "read"
    sub, rest = args[start], args[start + 1 :]
    if _git_executes(sub, rest):
        return EXECUTES
    if sub == "config":
        return _git_config(rest)
    if given(rest, "--output"):
        return "write"  # git log/diff/show --output=FILE
    return _git_reads(cmd, sub, rest) or _git_changes(sub, rest)


def _git_subcommand_at(args: tuple[str, ...]) -> int | Doubt:
    """Where the subcommand is, after git's own options: only the known ones (no -c,
    --exec-path), which set nothing that runs commands."""
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-"):
            break
        if arg in _GIT_VALUES:
            i += 2
            continue
        if arg.partition("=")[0] not in _GIT_GLOBAL and not arg.startswith("-C"):
            return doubt("git-config", f"git {arg} can set aliases and hooks that run commands")
        i += 1
    return i


def _git_executes(sub: str, rest: tuple[str, ...]) -> bool:
    """Whether `git sub rest...` runs a program of the caller's choosing."""
    if _git_runs(sub, rest) or sub in _GIT_TOOLS:
        return True
    return sub == "grep" and any(
        a.startswith("-O") or long_matches(a, "--open-files-in-pager") for a in rest
    )


def _git_reads(cmd: Cmd, sub: str, rest: tuple[str, ...]) -> Kind | None:
    """What a subcommand that only looks (at the repository or the network) does, or None
    when it may change something."""
    if sub in ("help", "version"):
        return "read"
    if sub in _GIT_READ:
        # Harmless, but not provably read-only: git runs programs the repository's own
        # config names (core.fsmonitor, hooks, textconv, pagers), and that file is one the
        # agent can write. Inside a sandbox that is contained; without one it asks.
        return _REPO_READ
    if sub == "ls-remote":
        return "run"  # the network
    if rest and rest[0] in _GIT_SHOWING.get(sub, ()):
        return _REPO_READ  # `git remote show origin`, `git stash show -p`
    dry = bool(set(rest) & {"-n", "--dry-run"})
    if sub == "clean" and dry and not has_option(cmd, "-f", "--force"):
        return _REPO_READ
    return None


def _git_changes(sub: str, rest: tuple[str, ...]) -> Judgement:
    """The other subcommands: listing ones read unless given something to change."""
    listing = _GIT_LISTING.get(sub)
    if sub == "stash" and not rest:
        return "write"  # `git stash` is `git stash push`: it reverts the working tree
    if listing is not None:
        listed = all(a in listing or a.startswith("--format") for a in rest)
        return _REPO_READ if listed else "write"
    if sub == "submodule":
        return "run"
    if sub in _GIT_WRITE:
        return "write"
    return doubt("subcommand", f"`git {sub}` is not known to be harmless")
