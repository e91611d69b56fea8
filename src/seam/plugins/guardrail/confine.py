"""Whether a proven read stays where reading cannot reveal a secret.

On the local backend nothing hides the person's files: only commands the guard proved
read-only run unasked there, so "read-only" must also mean "reads nothing that could be
secret". A read is confined when every path it names is inside the working directory or
in a system location that holds no secrets (`/usr`, most of `/etc`, a few harmless
`/proc/self` files). Anything else is outside: the home directory (`~`, `$HOME`,
`/home`, `/root`), other processes' `/proc` files, relative paths whose `..` leave the
working directory, globs that reach outside, and words computed at run time
(`cat $(echo fi9z... | base64 -d)`), whose path nobody can see before it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from seam.plugins.guardrail.command import Cmd

# Where a canonical path really leads on disk (symlinks followed), canonical again, or None
# when that cannot be known. Handed in by wiring; without it confinement reads text only.
Resolve = Callable[[str], str | None]

# System locations that hold no secrets (their secret files are listed below).
_SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/opt", "/var/log")
_SYSTEM_SECRETS = re.compile(
    r"/etc/(?:g?shadow|sudoers|ssh/ssh_host_\w*key|ssl/private|ssh/.*_key$|security/opasswd"
    r"|.*\.key$|.*credentials|\.pwd\.lock|krb5\.keytab|NetworkManager/system-connections"
    r"|wpa_supplicant|ppp/\w*-secrets|libvirt|docker|containerd|netplan)"
    r"|/var/log/(?:auth|secure|btmp|audit)"
)
_PROC_OK = frozenset(
    {"/proc/cpuinfo", "/proc/meminfo", "/proc/version", "/proc/loadavg", "/proc/uptime"}
    | {"/proc/stat", "/proc/filesystems", "/proc/mounts", "/proc/swaps", "/proc/self/status"}
    | {"/proc/self/limits", "/proc/self/stat", "/proc/self/statm", "/proc/self/cgroup"}
)
_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# A word is read as a path when it looks like one (options' `=value` parts too).
_PATHLIKE = re.compile(r"^(?:-[-\w]*=)?([~/.].*|[^-].*/.*)$")


def outside(
    cmd: Cmd,
    root: str | None,
    dynamic: frozenset[str] | None = None,
    resolve: Resolve | None = None,
) -> str:
    """The first word of `cmd` that reaches outside `root` (the canonical directory the
    command starts in, None when unknown) and outside the harmless system locations, or
    "" when every word stays in. `dynamic`: the words the shell expands at run time (None
    when unknown: then any word with a `$` is taken to be one). `resolve`: where a path
    really leads, so a symlink in the project that points out (`cat link_to_home/x`, a
    cloned repository may ship one) is outside too."""
    words = list(cmd.args)
    words += [r.target for r in cmd.redirects if r.op in ("<", "<>")]
    if cmd.name in ("cd", "pushd", "popd") and not [a for a in cmd.args if a != "--"]:
        return cmd.name  # home, or a directory from the stack
    for word in words:
        computed = ("$" in word or "`" in word) if dynamic is None else word in dynamic
        if computed or word.startswith(("<(", ">(")):
            return word  # a path computed at run time
        match = _PATHLIKE.match(word)
        if match is not None and not _confined(cmd, match.group(1), root):
            return word
        if (
            resolve is not None
            and root is not None
            and not word.startswith("-")
            and not _really_confined(cmd.path(word), root, resolve)
        ):
            return word
        if cmd.name in ("cd", "pushd") and word == "-":
            return word
    return ""


def _confined(cmd: Cmd, path: str, root: str | None) -> bool:
    full = cmd.path(path)
    if full.startswith(("/", "~")):
        if root is not None and (full == root or full.startswith(root.rstrip("/") + "/")):
            return True
        return not full.startswith("~") and _system(full)
    return not (full == ".." or full.startswith("../"))


def _really_confined(full: str, root: str, resolve: Resolve) -> bool:
    """Whether `full` (canonical), followed through its symlinks, stays in `root` or in a
    system location. Unknown (relative while the start is unknown, unresolvable) is left to
    the textual check."""
    if not full.startswith(("/", "~")):
        return True
    real, real_root = resolve(full), resolve(root) or root
    if real is None or real == full:
        return True
    if real == real_root or real.startswith(real_root.rstrip("/") + "/"):
        return True
    return not real.startswith("~") and _system(real)


def _system(path: str) -> bool:
    if path in _DEVICES or path in _PROC_OK:
        return True
    if _SYSTEM_SECRETS.match(path):
        return False
    return any(path == root or path.startswith(root + "/") for root in _SYSTEM)
