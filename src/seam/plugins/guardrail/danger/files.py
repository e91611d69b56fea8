"""The tests of the dangerous patterns over files: deleting, moving, permissions, writes
into system places, credentials and PATH."""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd, recursive
from seam.plugins.guardrail.places import (
    BARE_STARTUP_FILE,
    HOME_CONFIG,
    IMPORTANT_HOME,
    PATH_DIR,
    STARTUP_FILE,
    is_critical,
    is_system,
)


def rm_bulk(cmd: Cmd) -> bool:
    return cmd.bulk


def rm_important(cmd: Cmd) -> bool:
    for operand in cmd.options[2]:
        path = cmd.path(operand)
        if operand in ("*", ".*") or is_critical(path) or is_system(path):
            return True
        if IMPORTANT_HOME.match(path) or STARTUP_FILE.match(path):
            return True
    return False


WORLD_WRITABLE = re.compile(r"^0*[0-7]?[0-7][0-7][2367]$|(?:^|,)[ugo]*[ao][ugo]*[+=][rwxXst]*w")


def move_important(cmd: Cmd) -> bool:
    return rm_important(Cmd("mv", tuple(cmd.options[2][:-1]), cwd=cmd.cwd, home=cmd.home))


def chmod_world_recursive(cmd: Cmd) -> bool:
    operands = cmd.options[2]
    return recursive(cmd) and bool(operands) and WORLD_WRITABLE.search(operands[0]) is not None


def perm_system(cmd: Cmd) -> bool:
    return any(
        is_system(cmd.path(p)) or IMPORTANT_HOME.match(cmd.path(p)) for p in cmd.options[2][1:]
    )


def relative_startup(cmd: Cmd) -> bool:
    return any(BARE_STARTUP_FILE.match(p) for p in cmd.writes)


def writes_etc(cmd: Cmd) -> bool:
    """Writes under /etc."""
    return any(p.startswith("/etc/") or p == "/etc" for p in cmd.writes)


def writes_system(cmd: Cmd) -> bool:
    """Writes into a system directory."""
    return any(p == "/" or is_system(p) for p in cmd.writes)


def writes_path_dir(cmd: Cmd) -> bool:
    """Writes into a directory on PATH."""
    return any(PATH_DIR.match(p) is not None for p in cmd.writes)


def writes_home_config(cmd: Cmd) -> bool:
    """Writes credentials or a login item."""
    return any(HOME_CONFIG.match(p) is not None for p in cmd.writes)


def find_deletes(cmd: Cmd) -> bool:
    """Find -delete."""
    return "-delete" in cmd.args
