"""The tests of the dangerous patterns over tools: git history, signals, services, cron,
firewalls, containers, clusters, publishing, disks."""

from __future__ import annotations

from seam.plugins.guardrail.command import Cmd, options_of, subcommand
from seam.plugins.guardrail.danger.floor import SYSTEMCTL_VALUES, is_formatter, kill_parts
from seam.plugins.guardrail.places import BLOCK_DEVICE

GIT_VALUES = frozenset(
    {
        "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"
    }
)  # fmt: skip


def git_rest(cmd: Cmd, *subs: str) -> tuple[str, ...] | None:
    """The arguments after the subcommand, when the subcommand is one of `subs`."""
    sub, rest = subcommand(cmd.args, GIT_VALUES)
    return rest if sub in subs else None


def git_force_push(cmd: Cmd) -> bool:
    rest = git_rest(cmd, "push")
    if rest is None:
        return False
    letters, longs, operands = options_of(rest)
    forced = {"--force", "--force-with-lease", "--force-if-includes", "--mirror"}
    return (
        "f" in letters or not longs.isdisjoint(forced) or any(o.startswith("+") for o in operands)
    )


def git_push_delete(cmd: Cmd) -> bool:
    rest = git_rest(cmd, "push")
    if rest is None:
        return False
    letters, longs, operands = options_of(rest)
    return "d" in letters or "--delete" in longs or any(o.startswith(":") for o in operands[1:])


def git_reset_hard(cmd: Cmd) -> bool:
    rest = git_rest(cmd, "reset")
    return rest is not None and "--hard" in rest


def git_clean(cmd: Cmd) -> bool:
    rest = git_rest(cmd, "clean")
    if rest is None:
        return False
    letters, longs, _ = options_of(rest)
    dry = "n" in letters or "--dry-run" in longs
    return ("f" in letters or "--force" in longs) and not dry


def git_branch_delete(cmd: Cmd) -> bool:
    rest = git_rest(cmd, "branch")
    if rest is None:
        return False
    letters, longs, _ = options_of(rest)
    return "D" in letters or ("--delete" in longs and "--force" in longs)


def git_rewrite(cmd: Cmd) -> bool:
    if git_rest(cmd, "filter-branch", "filter-repo") is not None:
        return True
    stash = git_rest(cmd, "stash")
    return stash is not None and stash[:1] == ("clear",)


def kill_9(cmd: Cmd) -> bool:
    signal, _ = kill_parts(cmd.args)
    return signal is not None and signal.upper().removeprefix("SIG") in ("9", "KILL")


def service_stop(cmd: Cmd) -> bool:
    if cmd.name == "systemctl":
        sub, _ = subcommand(cmd.args, SYSTEMCTL_VALUES)
        return sub in ("stop", "disable", "mask", "kill", "isolate")
    if cmd.name == "service":
        return len(cmd.args) >= 2 and cmd.args[1] in ("stop", "disable")
    sub, _ = subcommand(cmd.args, frozenset())
    return sub in ("unload", "remove", "bootout", "disable", "kill")  # launchctl


def crontab_remove(cmd: Cmd) -> bool:
    return "r" in cmd.options[0]


def crontab_replace(cmd: Cmd) -> bool:
    letters, _, operands = cmd.options
    return bool(operands) and "l" not in letters


def firewall_flush(cmd: Cmd) -> bool:
    if cmd.name == "nft":
        return "flush" in cmd.args or "delete" in cmd.args
    if cmd.name == "ufw":
        return any(a in ("disable", "reset") for a in cmd.args)
    return any(a in ("-F", "--flush", "-X", "--delete-chain", "-P", "--policy") for a in cmd.args)


DOCKER_VALUES = frozenset(
    {
        "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "-f", "--file", "-p",
        "--project-name", "--env-file", "--profile", "--project-directory",
    }
)  # fmt: skip


def docker_destroy(cmd: Cmd) -> bool:
    if "prune" in cmd.args:
        return True
    sub, rest = subcommand(cmd.args, DOCKER_VALUES)
    if cmd.name.endswith("-compose"):
        sub, rest = "compose", cmd.args
    if sub == "compose":  # `down -v` deletes the project's volumes
        action, rest = subcommand(rest, DOCKER_VALUES)
        letters, longs, _ = options_of(rest)
        return action in ("down", "rm") and ("v" in letters or "--volumes" in longs)
    if sub == "volume":
        return rest[:1] in (("rm",), ("remove",))
    if sub in ("container", "image"):
        sub, rest = (rest[0], rest[1:]) if rest else ("", ())
    letters, longs, _ = options_of(rest)
    return sub in ("rm", "rmi", "remove") and ("f" in letters or "--force" in longs)


_KUBECTL_VALUES = frozenset({"-n", "--namespace", "--context", "--kubeconfig"})


def kubectl_delete(cmd: Cmd) -> bool:
    sub, _ = subcommand(cmd.args, _KUBECTL_VALUES)
    return sub in ("delete", "drain", "replace")


def publishes(cmd: Cmd) -> bool:
    args = cmd.args
    if cmd.name in ("npm", "yarn", "pnpm", "cargo", "poetry", "uv", "flit", "hatch", "bun"):
        return "publish" in args
    if cmd.name == "gem":
        return args[:1] == ("push",)
    if cmd.name == "twine" or (cmd.name.startswith("python") and "twine" in args):
        return "upload" in args
    return False


def makes_file_system(cmd: Cmd) -> bool:
    return is_formatter(cmd.name)


def partitions_disk(cmd: Cmd) -> bool:
    listing = {"-l", "--list", "print", "-p", "--print"}
    return any(a.startswith("/dev/") for a in cmd.args) and listing.isdisjoint(cmd.args)


def dd_disk_read(cmd: Cmd) -> bool:
    return any(a.startswith("if=") and BLOCK_DEVICE.match(cmd.path(a[3:])) for a in cmd.args)


def destroys(cmd: Cmd) -> bool:
    """`terraform destroy` and the like."""
    return "destroy" in cmd.args


def always(cmd: Cmd) -> bool:
    """The program alone is the danger (sudo, pkill, shred)."""
    return True
