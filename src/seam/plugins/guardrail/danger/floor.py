"""The tests of the hard floor: commands no rule or approval may let run."""

from __future__ import annotations

from seam.plugins.guardrail.command import Cmd, recursive, subcommand
from seam.plugins.guardrail.places import BLOCK_DEVICE, SSH_DIR, STARTUP_FILE, is_critical

SYSTEMCTL_VALUES = frozenset(
    {
        "-H", "-M", "--host", "--machine", "-t", "--type", "-p", "--property", "-s", "--signal",
        "-n", "--lines", "-o", "--output", "--root", "--kill-whom", "--state", "--job-mode",
    }
)  # fmt: skip


def rm_root(cmd: Cmd) -> bool:
    _, longs, operands = cmd.options
    if "--no-preserve-root" in longs:  # asking for it is the intent that matters
        return True
    return recursive(cmd) and any(is_critical(cmd.path(p)) for p in operands)


def move_root(cmd: Cmd) -> bool:
    operands = cmd.options[2]
    return any(is_critical(cmd.path(p)) for p in operands[:-1])


def perm_root(cmd: Cmd) -> bool:
    return recursive(cmd) and any(is_critical(cmd.path(p)) for p in cmd.options[2])


def find_delete_root(cmd: Cmd) -> bool:
    """`find / -delete` or `find ~ -exec rm ...`: every file under a critical directory."""
    starts = []
    for arg in cmd.args:
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    if not any(is_critical(cmd.path(p)) for p in starts):
        return False
    if "-delete" in cmd.args:
        return True
    return any(
        arg in ("-exec", "-execdir") and i + 1 < len(cmd.args) and cmd.args[i + 1].endswith("rm")
        for i, arg in enumerate(cmd.args)
    )


def rsync_deletes(cmd: Cmd) -> bool:
    return any(a.startswith("--delete") or a == "--remove-source-files" for a in cmd.args)


def rsync_delete_root(cmd: Cmd) -> bool:
    operands = cmd.options[2]
    return rsync_deletes(cmd) and bool(operands) and is_critical(cmd.path(operands[-1]))


def mkfs_device(cmd: Cmd) -> bool:
    return is_formatter(cmd.name) and any(a.startswith("/dev/") for a in cmd.args)


def is_formatter(name: str) -> bool:
    return name.startswith(("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "newfs"))


def dd_disk(cmd: Cmd) -> bool:
    return any(a.startswith("of=") and BLOCK_DEVICE.match(cmd.path(a[3:])) for a in cmd.args)


def powers_off(cmd: Cmd) -> bool:
    if cmd.name in ("shutdown", "reboot", "halt", "poweroff"):
        return True
    if cmd.name in ("init", "telinit"):
        return any(a in ("0", "6") for a in cmd.args)
    sub, _ = subcommand(cmd.args, SYSTEMCTL_VALUES)
    return sub in ("poweroff", "reboot", "halt", "kexec", "soft-reboot")


def kill_parts(args: tuple[str, ...]) -> tuple[str | None, list[str]]:
    """(the signal, the process ids) of a kill command."""
    signal: str | None = None
    pids: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            pids.extend(args[i + 1 :])
            break
        if arg in ("-s", "-n", "--signal"):
            signal = args[i + 1] if i + 1 < len(args) else ""
            i += 2
            continue
        if arg in ("-l", "-L", "--list", "--table"):
            return None, []
        if arg.startswith("--signal="):
            signal = arg.partition("=")[2]
        elif arg.startswith("-") and signal is None and not pids:
            signal = arg[1:]
        else:
            pids.append(arg)
        i += 1
    return signal, pids


def kill_all(cmd: Cmd) -> bool:
    return cmd.name == "killall5" or "-1" in kill_parts(cmd.args)[1]


def writes_block_device(cmd: Cmd) -> bool:
    """Writes onto a disk device."""
    return any(BLOCK_DEVICE.match(p) is not None for p in cmd.writes)


def writes_startup_file(cmd: Cmd) -> bool:
    """Writes a shell startup file."""
    return any(STARTUP_FILE.match(p) is not None for p in cmd.writes)


def writes_ssh_dir(cmd: Cmd) -> bool:
    """Writes into ~/.ssh."""
    return any(SSH_DIR.match(p) is not None for p in cmd.writes)


def writes_sysrq(cmd: Cmd) -> bool:
    """Writes /proc/sysrq-trigger."""
    return any(p == "/proc/sysrq-trigger" for p in cmd.writes)
