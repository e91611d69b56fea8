"""What a path is: the root, a system directory, a home directory, a credential store, a
shell startup file, a disk device."""

from __future__ import annotations

import re

TOP_DIRS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt"}
    | {"nix", "opt", "proc", "root", "run", "sbin", "snap", "srv", "sys", "usr", "var"}
    | {"Applications", "Library", "System", "Users", "Volumes", "private"}
)
SYSTEM_PREFIX = re.compile(
    r"^/(?:etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|sys|proc|opt|System|Library"
    r"|var(?!/tmp(?:/|$)))(?:/|$)"
)
HOME_ROOTS = r"(?:~|/root|/home/[^/]+|/Users/[^/]+)"
STARTUP_NAMES = (
    r"\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin"
    r"|zlogout|kshrc|cshrc|tcshrc|config/fish/config\.fish)"
)
STARTUP_FILE = re.compile(
    rf"^(?:{HOME_ROOTS}/{STARTUP_NAMES}"
    r"|/etc/(?:profile|bash\.bashrc|bashrc|zshrc|zsh/zshrc|zshenv|environment|profile\.d/.*))$"
)
BARE_STARTUP_FILE = re.compile(rf"^{STARTUP_NAMES}$")
SSH_DIR = re.compile(rf"^{HOME_ROOTS}/\.ssh(?:/|$)")
IMPORTANT_HOME = re.compile(rf"^{HOME_ROOTS}/\.(?:ssh|gnupg|aws|kube|docker)(?:/|$)")
# Credentials and places that start programs at login.
HOME_CONFIG = re.compile(
    rf"^{HOME_ROOTS}/(?:\.(?:gnupg|aws|kube|docker|netrc|pgpass|git-credentials)"
    r"|\.config/(?:autostart|systemd/user)|Library/LaunchAgents)(?:/|$)"
)
BLOCK_DEVICE = re.compile(
    r"^/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d"
    r"|mapper/|loop\d|sr\d|nbd\d|zd\d|mem$|kmem$|port$)"
)
GLOB = re.compile(r"[*?\[]")
# Directories on a usual PATH that a user can write: a program put there shadows another
# (`cp /bin/rm ~/.local/bin/ls`, and the next `ls -rf ~` deletes).
PATH_DIR = re.compile(
    rf"^{HOME_ROOTS}/(?:bin|\.local/bin|\.cargo/bin|go/bin|\.npm-global/bin|\.deno/bin"
    r"|\.bun/bin|\.pyenv/shims|\.asdf/shims|\.volta/bin)(?:/|$)|^/usr/local/s?bin(?:/|$)"
)


def is_critical(path: str) -> bool:
    """The root, a top-level system directory, a home directory, or a glob over one."""
    if path in ("/", "~"):
        return True
    if path.startswith("~/"):
        rest = path[2:]
        return "/" not in rest and (GLOB.search(rest) is not None or rest in (".ssh", ".gnupg"))
    if not path.startswith("/"):
        return False
    parts = path[1:].split("/")
    if len(parts) == 1:
        return parts[0] in TOP_DIRS or GLOB.search(parts[0]) is not None
    if len(parts) == 2:
        if parts[0] in ("home", "Users"):
            return True
        return parts[0] in TOP_DIRS and GLOB.search(parts[1]) is not None
    return False


def is_system(path: str) -> bool:
    return SYSTEM_PREFIX.match(path) is not None
