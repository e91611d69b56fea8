"""The hard floor and the dangerous patterns, as data: a name, a one-line reason, a test.

Every test looks at one `Cmd`: a simple command after normalisation (quoting resolved,
wrappers seen through, paths canonical), with the earlier stages of its pipeline. The
floor is `forbidden` whatever the user's rules say; a pattern needs the person's approval.
Rules name the programs they are about, so a command is only tested against the few
rules that could match it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from seam.plugins.guardrail.normalize import (
    SHELLS,
    canonical_path,
    is_interpreter,
    reads_program_from_stdin,
    script_operand,
    skip_options,
)
from seam.plugins.guardrail.shell import Redirect


@dataclass(frozen=True)
class Cmd:
    """One simple command as the rules see it (what several rules derive is cached)."""

    name: str  # the program, e.g. "rm" for `sudo /bin/rm`
    args: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    upstream: tuple[Cmd, ...] = ()  # the earlier stages of its pipeline, unwrapped
    bulk: bool = False  # run once per input item (xargs, find -exec)
    cwd: str | None = None  # canonical working directory, when a `cd` made it known
    home: str = ""  # the person's home directory, so /home/me/x is seen as ~/x
    argv0: str = ""  # the program as written, e.g. "./install.sh"
    # Files downloaded earlier in the same script (canonical paths).
    downloaded: frozenset[str] = frozenset()

    def path(self, arg: str) -> str:
        return canonical_path(arg, home=self.home, cwd=self.cwd)

    @cached_property
    def options(self) -> tuple[frozenset[str], frozenset[str], list[str]]:
        return _options(self.args)

    @cached_property
    def writes(self) -> tuple[str, ...]:
        return written_paths(self)


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    reason: str
    test: Callable[[Cmd], bool]
    programs: frozenset[str] | None = None  # None: tested against every command


@dataclass(frozen=True, slots=True)
class TextRule:
    """A rule over the raw text of a script, for shapes no single command shows."""

    name: str
    reason: str
    pattern: re.Pattern[str]


# --- reading arguments -----------------------------------------------------------------


def _options(args: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str], list[str]]:
    """(short option letters, long options, operands); GNU style: options anywhere."""
    letters: set[str] = set()
    longs: set[str] = set()
    operands: list[str] = []
    done = False
    for arg in args:
        if done or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            done = True
        elif arg.startswith("--"):
            longs.add(arg.partition("=")[0])
        else:
            letters.update(arg[1:])
    return frozenset(letters), frozenset(longs), operands


def _recursive(cmd: Cmd) -> bool:
    letters, longs, _ = cmd.options
    return "r" in letters or "R" in letters or "--recursive" in longs


def _subcommand(args: tuple[str, ...], with_value: frozenset[str]) -> tuple[str, tuple[str, ...]]:
    start = skip_options(args, with_value)
    if start >= len(args):
        return "", ()
    return args[start], args[start + 1 :]


_TOP_DIRS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt"}
    | {"nix", "opt", "proc", "root", "run", "sbin", "snap", "srv", "sys", "usr", "var"}
    | {"Applications", "Library", "System", "Users", "Volumes", "private"}
)
_SYSTEM_PREFIX = re.compile(
    r"^/(?:etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|sys|proc|opt|System|Library"
    r"|var(?!/tmp(?:/|$)))(?:/|$)"
)
_HOME_ROOTS = r"(?:~|/root|/home/[^/]+|/Users/[^/]+)"
_STARTUP_NAMES = (
    r"\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin"
    r"|zlogout|kshrc|cshrc|tcshrc|config/fish/config\.fish)"
)
_STARTUP_FILE = re.compile(
    rf"^(?:{_HOME_ROOTS}/{_STARTUP_NAMES}"
    r"|/etc/(?:profile|bash\.bashrc|bashrc|zshrc|zsh/zshrc|zshenv|environment|profile\.d/.*))$"
)
_BARE_STARTUP_FILE = re.compile(rf"^{_STARTUP_NAMES}$")
_SSH_DIR = re.compile(rf"^{_HOME_ROOTS}/\.ssh(?:/|$)")
_IMPORTANT_HOME = re.compile(rf"^{_HOME_ROOTS}/\.(?:ssh|gnupg|aws|kube|docker)(?:/|$)")
# Credentials and places that start programs at login.
_HOME_CONFIG = re.compile(
    rf"^{_HOME_ROOTS}/(?:\.(?:gnupg|aws|kube|docker|netrc|pgpass|git-credentials)"
    r"|\.config/(?:autostart|systemd/user)|Library/LaunchAgents)(?:/|$)"
)
_BLOCK_DEVICE = re.compile(
    r"^/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|md\d|dm-\d"
    r"|mapper/|loop\d|sr\d|nbd\d|zd\d|mem$|kmem$|port$)"
)
_GLOB = re.compile(r"[*?\[]")
# Directories on a usual PATH that a user can write: a program put there shadows another
# (`cp /bin/rm ~/.local/bin/ls`, and the next `ls -rf ~` deletes).
_PATH_DIR = re.compile(
    rf"^{_HOME_ROOTS}/(?:bin|\.local/bin|\.cargo/bin|go/bin|\.npm-global/bin|\.deno/bin"
    r"|\.bun/bin|\.pyenv/shims|\.asdf/shims|\.volta/bin)(?:/|$)|^/usr/local/s?bin(?:/|$)"
)


def _is_critical(path: str) -> bool:
    """The root, a top-level system directory, a home directory, or a glob over one."""
    if path in ("/", "~"):
        return True
    if path.startswith("~/"):
        rest = path[2:]
        return "/" not in rest and (_GLOB.search(rest) is not None or rest in (".ssh", ".gnupg"))
    if not path.startswith("/"):
        return False
    parts = path[1:].split("/")
    if len(parts) == 1:
        return parts[0] in _TOP_DIRS or _GLOB.search(parts[0]) is not None
    if len(parts) == 2:
        if parts[0] in ("home", "Users"):
            return True
        return parts[0] in _TOP_DIRS and _GLOB.search(parts[1]) is not None
    return False


def _is_system(path: str) -> bool:
    return _SYSTEM_PREFIX.match(path) is not None


_WRITING_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
# Programs that write (or wipe) every file named in their operands.
_OPERAND_WRITERS = frozenset({"tee", "shred", "wipe", "srm", "wipefs", "blkdiscard", "truncate"})


def written_paths(cmd: Cmd) -> tuple[str, ...]:
    """The files a command writes, canonical: redirections, tee, cp/mv targets, dd of=..."""
    raw: list[str] = [
        r.target
        for r in cmd.redirects
        if r.op in _WRITING_REDIRECTS
        and not (r.op == ">&" and (r.target.isdigit() or r.target == "-"))
    ]
    name, args = cmd.name, cmd.args
    letters, longs, operands = cmd.options
    if name in _OPERAND_WRITERS:
        raw.extend(operands)
    elif name in _COPIERS:
        raw.extend(_copy_targets(args, operands))
    elif name == "dd":
        raw.extend(a[3:] for a in args if a.startswith("of="))
    elif name == "sed":
        if "i" in letters or "--in-place" in longs:
            raw.extend(operands[1:] if "e" not in letters and "f" not in letters else operands)
    elif name in ("curl", "wget"):
        raw.extend(_download_targets(args))
    elif name in ("tar", "bsdtar", "unzip"):
        raw.extend(_extract_targets(name, args, letters, longs))
    return tuple(cmd.path(p) for p in raw if p)


def _copy_targets(args: tuple[str, ...], operands: list[str]) -> list[str]:
    for i, arg in enumerate(args):
        if arg in ("-t", "--target-directory") and i + 1 < len(args):
            return [args[i + 1]]
        if arg.startswith("--target-directory="):
            return [arg.partition("=")[2]]
    return operands[-1:] if len(operands) >= 2 else []


def _download_targets(args: tuple[str, ...]) -> list[str]:
    targets = []
    for i, arg in enumerate(args):
        if arg in ("-o", "-O", "--output", "--output-document") and i + 1 < len(args):
            targets.append(args[i + 1])
        elif arg.startswith(("--output=", "--output-document=")):
            targets.append(arg.partition("=")[2])
    return [t for t in targets if t != "-"]


def _extract_targets(
    name: str, args: tuple[str, ...], letters: frozenset[str], longs: frozenset[str]
) -> list[str]:
    """Where an archive is unpacked: `tar -x -C DIR`, `unzip -d DIR`."""
    if name != "unzip":
        old_style = bool(args) and not args[0].startswith("-") and "x" in args[0]
        if not (old_style or "x" in letters or "--extract" in longs or "--get" in longs):
            return []
    flags = ("-d",) if name == "unzip" else ("-C", "--directory")
    targets = [args[i + 1] for i, a in enumerate(args[:-1]) if a in flags]
    return targets + [a.partition("=")[2] for a in args if a.startswith("--directory=")]


def _writes(match: Callable[[str], bool]) -> Callable[[Cmd], bool]:
    return lambda cmd: any(match(p) for p in cmd.writes)


def _programs(*names: str) -> frozenset[str]:
    return frozenset(names)


# --- the floor -------------------------------------------------------------------------


def _rm_root(cmd: Cmd) -> bool:
    _, longs, operands = cmd.options
    if "--no-preserve-root" in longs:  # asking for it is the intent that matters
        return True
    return _recursive(cmd) and any(_is_critical(cmd.path(p)) for p in operands)


def _move_root(cmd: Cmd) -> bool:
    operands = cmd.options[2]
    return any(_is_critical(cmd.path(p)) for p in operands[:-1])


def _perm_root(cmd: Cmd) -> bool:
    return _recursive(cmd) and any(_is_critical(cmd.path(p)) for p in cmd.options[2])


def _find_delete_root(cmd: Cmd) -> bool:
    """`find / -delete` or `find ~ -exec rm ...`: every file under a critical directory."""
    starts = []
    for arg in cmd.args:
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    if not any(_is_critical(cmd.path(p)) for p in starts):
        return False
    if "-delete" in cmd.args:
        return True
    return any(
        arg in ("-exec", "-execdir") and i + 1 < len(cmd.args) and cmd.args[i + 1].endswith("rm")
        for i, arg in enumerate(cmd.args)
    )


def _rsync_deletes(cmd: Cmd) -> bool:
    return any(a.startswith("--delete") or a == "--remove-source-files" for a in cmd.args)


def _rsync_delete_root(cmd: Cmd) -> bool:
    operands = cmd.options[2]
    return _rsync_deletes(cmd) and bool(operands) and _is_critical(cmd.path(operands[-1]))


def _mkfs_device(cmd: Cmd) -> bool:
    return _is_formatter(cmd.name) and any(a.startswith("/dev/") for a in cmd.args)


def _is_formatter(name: str) -> bool:
    return name.startswith(("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "newfs"))


def _dd_disk(cmd: Cmd) -> bool:
    return any(a.startswith("of=") and _BLOCK_DEVICE.match(cmd.path(a[3:])) for a in cmd.args)


def _power(cmd: Cmd) -> bool:
    if cmd.name in ("shutdown", "reboot", "halt", "poweroff"):
        return True
    if cmd.name in ("init", "telinit"):
        return any(a in ("0", "6") for a in cmd.args)
    sub, _ = _subcommand(cmd.args, _SYSTEMCTL_VALUES)
    return sub in ("poweroff", "reboot", "halt", "kexec", "soft-reboot")


def _kill_parts(args: tuple[str, ...]) -> tuple[str | None, list[str]]:
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


def _kill_all(cmd: Cmd) -> bool:
    return cmd.name == "killall5" or "-1" in _kill_parts(cmd.args)[1]


FORK_BOMB = TextRule(
    "floor:fork-bomb",
    "a fork bomb: it multiplies processes until the machine stops responding",
    re.compile(
        # Names are bounded and start at a word edge, so a huge token cannot make this slow.
        r"(?<![\w:.-])(?P<f>[\w:.-]{1,64})\s*\(\s*\)\s*\{[^}]*?(?P=f)\s*\|\s*(?P=f)\s*&"
        r"|\bfunction\s+(?P<g>[\w:.-]{1,64})\s*(?:\(\s*\))?\s*\{[^}]*?(?P=g)\s*\|\s*(?P=g)\s*&"
        r"|\bfork\s+while\s+fork\b"
        r"|while\s*\(?\s*(?:true|1|True)\s*\)?\s*[:;]?\s*(?:do\s+)?os\.fork\(\)"
    ),
)
TEXT_FLOOR: tuple[TextRule, ...] = (FORK_BOMB,)

FLOOR: tuple[Rule, ...] = (
    Rule(
        "floor:rm-root",
        "deletes the root, a system directory or a whole home directory",
        _rm_root,
        _programs("rm"),
    ),
    Rule(
        "floor:move-root",
        "moves away the root, a system directory or a whole home directory",
        _move_root,
        _programs("mv"),
    ),
    Rule(
        "floor:chmod-root",
        "changes permissions recursively on the root, a system or a home directory",
        _perm_root,
        _programs("chmod"),
    ),
    Rule(
        "floor:chown-root",
        "changes ownership recursively on the root, a system or a home directory",
        _perm_root,
        _programs("chown", "chgrp"),
    ),
    Rule(
        "floor:find-delete-root",
        "deletes every file under the root, a system or a home directory",
        _find_delete_root,
        _programs("find"),
    ),
    Rule(
        "floor:rsync-delete-root",
        "mirrors onto the root, a system or a home directory, deleting what is there",
        _rsync_delete_root,
        _programs("rsync"),
    ),
    Rule(
        "floor:mkfs-device",
        "formats a disk device, destroying everything on it",
        _mkfs_device,
    ),
    Rule(
        "floor:dd-disk",
        "writes raw data onto a disk device",
        _dd_disk,
        _programs("dd"),
    ),
    Rule(
        "floor:block-device-write",
        "writes onto a disk device",
        _writes(lambda p: _BLOCK_DEVICE.match(p) is not None),
    ),
    Rule(
        "floor:startup-file-write",
        "writes to a shell startup file, which runs in every future shell",
        _writes(lambda p: _STARTUP_FILE.match(p) is not None),
    ),
    Rule(
        "floor:ssh-dir-write",
        "writes into ~/.ssh (keys and authorized_keys)",
        _writes(lambda p: _SSH_DIR.match(p) is not None),
    ),
    Rule(
        "floor:power",
        "shuts down or reboots the machine",
        _power,
        _programs("shutdown", "reboot", "halt", "poweroff", "init", "telinit", "systemctl"),
    ),
    Rule(
        "floor:sysrq",
        "writes to /proc/sysrq-trigger (instant reboot or crash)",
        _writes(lambda p: p == "/proc/sysrq-trigger"),
    ),
    Rule(
        "floor:kill-all",
        "kills every process the user can reach",
        _kill_all,
        _programs("kill", "killall5"),
    ),
)

# --- dangerous patterns ----------------------------------------------------------------

DOWNLOADERS = frozenset(
    {"curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lwp-request", "lynx", "nc"}
    | {"ncat", "netcat", "socat", "ftp", "tftp"}
)
_DOWNLOAD_IN_TEXT = re.compile(
    r"(?:^|[\s(|;&`])(?:curl|wget|fetch|https?|xh|aria2c|lwp-request|nc|ncat|netcat|socat)\s"
)
_DECODE_FLAGS = frozenset({"-d", "-D", "--decode", "-r", "--reverse"})
_DECOMPRESSORS = frozenset({"gunzip", "zcat", "bzcat", "xzcat", "zstdcat", "unxz", "uudecode"})
_ECHOES = frozenset({"echo", "printf"})


def _is_decoder(cmd: Cmd) -> bool:
    if cmd.name in _DECOMPRESSORS or cmd.name == "rev":
        return True
    if cmd.name in ("base64", "base32", "basenc", "xxd", "openssl", "gzip", "bzip2", "xz", "zstd"):
        letters, longs, _ = cmd.options
        return not _DECODE_FLAGS.isdisjoint({*(f"-{c}" for c in letters), *longs})
    return False


def _runs_stdin(cmd: Cmd) -> bool:
    return bool(cmd.upstream) and reads_program_from_stdin(cmd.name, cmd.args)


def _download_into_interpreter(cmd: Cmd) -> bool:
    if _runs_stdin(cmd) and any(u.name in DOWNLOADERS for u in cmd.upstream):
        return True
    if is_interpreter(cmd.name) and any(
        a.startswith("<(") and _DOWNLOAD_IN_TEXT.search(a[2:]) for a in cmd.args
    ):
        return True
    # A command whose very name comes from a download: `$(curl -s x)`, `eval "$(wget ...)"`.
    return _is_dynamic(cmd) and _DOWNLOAD_IN_TEXT.search(cmd.name) is not None


def _decode_into_interpreter(cmd: Cmd) -> bool:
    return _runs_stdin(cmd) and any(_is_decoder(u) for u in cmd.upstream)


def _pipe_into_shell(cmd: Cmd) -> bool:
    """Anything but literal text (echo/printf, classified on its own) piped into a shell."""
    if not _runs_stdin(cmd) or (cmd.name not in SHELLS and cmd.name not in ("source", ".")):
        return False
    return any(u.name not in _ECHOES for u in cmd.upstream)


def _is_dynamic(cmd: Cmd) -> bool:
    return cmd.name.startswith(("$", "`")) or "$(" in cmd.name


def _run_downloaded(cmd: Cmd) -> bool:
    """`curl -o i.sh URL && bash i.sh` (or `./i.sh`): a pipe into a shell, in two steps."""
    if not cmd.downloaded:
        return False
    if "/" in cmd.argv0 and cmd.path(cmd.argv0) in cmd.downloaded:
        return True
    script = script_operand(cmd.name, cmd.args)
    return script is not None and cmd.path(script) in cmd.downloaded


def _rm_bulk(cmd: Cmd) -> bool:
    return cmd.bulk


def _rm_important(cmd: Cmd) -> bool:
    for operand in cmd.options[2]:
        path = cmd.path(operand)
        if operand in ("*", ".*") or _is_critical(path) or _is_system(path):
            return True
        if _IMPORTANT_HOME.match(path) or _STARTUP_FILE.match(path):
            return True
    return False


_WORLD_WRITABLE = re.compile(r"^0*[0-7]?[0-7][0-7][2367]$|(?:^|,)[ugo]*[ao][ugo]*[+=][rwxXst]*w")


def _move_important(cmd: Cmd) -> bool:
    return _rm_important(Cmd("mv", tuple(cmd.options[2][:-1]), cwd=cmd.cwd, home=cmd.home))


def _chmod_world_recursive(cmd: Cmd) -> bool:
    operands = cmd.options[2]
    return _recursive(cmd) and bool(operands) and _WORLD_WRITABLE.search(operands[0]) is not None


def _perm_system(cmd: Cmd) -> bool:
    return any(
        _is_system(cmd.path(p)) or _IMPORTANT_HOME.match(cmd.path(p)) for p in cmd.options[2][1:]
    )


_GIT_VALUES = _programs(
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"
)  # fmt: skip


def _git(cmd: Cmd, *subs: str) -> tuple[str, ...] | None:
    """The arguments after the subcommand, when the subcommand is one of `subs`."""
    sub, rest = _subcommand(cmd.args, _GIT_VALUES)
    return rest if sub in subs else None


def _git_force_push(cmd: Cmd) -> bool:
    rest = _git(cmd, "push")
    if rest is None:
        return False
    letters, longs, operands = _options(rest)
    forced = {"--force", "--force-with-lease", "--force-if-includes", "--mirror"}
    return (
        "f" in letters or not longs.isdisjoint(forced) or any(o.startswith("+") for o in operands)
    )


def _git_push_delete(cmd: Cmd) -> bool:
    rest = _git(cmd, "push")
    if rest is None:
        return False
    letters, longs, operands = _options(rest)
    return "d" in letters or "--delete" in longs or any(o.startswith(":") for o in operands[1:])


def _git_reset_hard(cmd: Cmd) -> bool:
    rest = _git(cmd, "reset")
    return rest is not None and "--hard" in rest


def _git_clean(cmd: Cmd) -> bool:
    rest = _git(cmd, "clean")
    if rest is None:
        return False
    letters, longs, _ = _options(rest)
    dry = "n" in letters or "--dry-run" in longs
    return ("f" in letters or "--force" in longs) and not dry


def _git_branch_delete(cmd: Cmd) -> bool:
    rest = _git(cmd, "branch")
    if rest is None:
        return False
    letters, longs, _ = _options(rest)
    return "D" in letters or ("--delete" in longs and "--force" in longs)


def _git_rewrite(cmd: Cmd) -> bool:
    if _git(cmd, "filter-branch", "filter-repo") is not None:
        return True
    stash = _git(cmd, "stash")
    return stash is not None and stash[:1] == ("clear",)


def _kill_9(cmd: Cmd) -> bool:
    signal, _ = _kill_parts(cmd.args)
    return signal is not None and signal.upper().removeprefix("SIG") in ("9", "KILL")


_SYSTEMCTL_VALUES = _programs(
    "-H", "-M", "--host", "--machine", "-t", "--type", "-p", "--property", "-s", "--signal",
    "-n", "--lines", "-o", "--output", "--root", "--kill-whom", "--state", "--job-mode",
)  # fmt: skip


def _service_stop(cmd: Cmd) -> bool:
    if cmd.name == "systemctl":
        sub, _ = _subcommand(cmd.args, _SYSTEMCTL_VALUES)
        return sub in ("stop", "disable", "mask", "kill", "isolate")
    if cmd.name == "service":
        return len(cmd.args) >= 2 and cmd.args[1] in ("stop", "disable")
    sub, _ = _subcommand(cmd.args, frozenset())
    return sub in ("unload", "remove", "bootout", "disable", "kill")  # launchctl


def _crontab_remove(cmd: Cmd) -> bool:
    return "r" in cmd.options[0]


def _crontab_replace(cmd: Cmd) -> bool:
    letters, _, operands = cmd.options
    return bool(operands) and "l" not in letters


def _firewall_flush(cmd: Cmd) -> bool:
    if cmd.name == "nft":
        return "flush" in cmd.args or "delete" in cmd.args
    if cmd.name == "ufw":
        return any(a in ("disable", "reset") for a in cmd.args)
    return any(a in ("-F", "--flush", "-X", "--delete-chain", "-P", "--policy") for a in cmd.args)


_DOCKER_VALUES = _programs(
    "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "-f", "--file", "-p",
    "--project-name", "--env-file", "--profile", "--project-directory",
)  # fmt: skip


def _docker_destroy(cmd: Cmd) -> bool:
    if "prune" in cmd.args:
        return True
    sub, rest = _subcommand(cmd.args, _DOCKER_VALUES)
    if cmd.name.endswith("-compose"):
        sub, rest = "compose", cmd.args
    if sub == "compose":  # `down -v` deletes the project's volumes
        action, rest = _subcommand(rest, _DOCKER_VALUES)
        letters, longs, _ = _options(rest)
        return action in ("down", "rm") and ("v" in letters or "--volumes" in longs)
    if sub == "volume":
        return rest[:1] in (("rm",), ("remove",))
    if sub in ("container", "image"):
        sub, rest = (rest[0], rest[1:]) if rest else ("", ())
    letters, longs, _ = _options(rest)
    return sub in ("rm", "rmi", "remove") and ("f" in letters or "--force" in longs)


def _kubectl_delete(cmd: Cmd) -> bool:
    sub, _ = _subcommand(cmd.args, _programs("-n", "--namespace", "--context", "--kubeconfig"))
    return sub in ("delete", "drain", "replace")


def _publish(cmd: Cmd) -> bool:
    args = cmd.args
    if cmd.name in ("npm", "yarn", "pnpm", "cargo", "poetry", "uv", "flit", "hatch", "bun"):
        return "publish" in args
    if cmd.name == "gem":
        return args[:1] == ("push",)
    if cmd.name == "twine" or (cmd.name.startswith("python") and "twine" in args):
        return "upload" in args
    return False


_SECRET = re.compile(
    r"\.ssh/|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|\.netrc\b|\.pgpass\b|/etc/shadow"
    r"|\.gnupg/|\.git-credentials|\.docker/config\.json|\.kube/config|(?:^|[/@])\.env(?:$|\.)"
)
_NETWORK = frozenset({"scp", "rsync", "sftp"}) | DOWNLOADERS


# Options whose value names a key used to log in, not data being sent.
_LOGIN_OPTIONS = {
    "scp": frozenset({"-i", "-F", "-o", "-S"}),
    "sftp": frozenset({"-i", "-F", "-o", "-S"}),
    "rsync": frozenset({"-e", "--rsh"}),
    "curl": frozenset({"--key", "--cert", "-E", "--cacert"}),
}


def _secret_exfil(cmd: Cmd) -> bool:
    args = cmd.args
    login = _LOGIN_OPTIONS.get(cmd.name, frozenset())
    for i, arg in enumerate(args):
        if (i and args[i - 1] in login) or arg.partition("=")[0] in login:
            continue
        if _SECRET.search(arg):
            return True
    return any(_SECRET.search(a) for u in cmd.upstream for a in u.args)


def _reverse_shell(cmd: Cmd) -> bool:
    if any(r.target.startswith(("/dev/tcp/", "/dev/udp/")) for r in cmd.redirects):
        return True
    if cmd.name in ("nc", "ncat", "netcat"):
        return any(a in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for a in cmd.args)
    if cmd.name == "socat":
        return any(a.lower().startswith(("exec:", "system:")) for a in cmd.args)
    return False


_DESTRUCTIVE_CODE = re.compile(
    r"rmtree|\b(?:unlink|rmdir|removedirs)\b|os\.(?:remove|system|popen|exec\w*|spawn\w*)"
    r"|subprocess|\b(?:exec|eval|system|popen)\s*[(\"']|rmSync|rimraf|unlinkSync|child_process"
    r"|FileUtils\.rm|File\.delete|Remove-Item|\bpty\.spawn|open\s*\([^)]*,\s*['\"][wax]"
)
# In perl, ruby and php code, backticks and %x(...) run a shell command.
_SHELL_IN_CODE = re.compile(r"`|%x[({\[]|\bqx\s*[({/]")
_CODE_RUNNERS = re.compile(
    r"(?:python|pypy)[\d.]*|perl[\d.]*|ruby[\d.]*|node(?:js)?|php[\d.]*|[gmn]?awk|deno|bun"
)


def _inline_code(cmd: Cmd) -> bool:
    if _CODE_RUNNERS.fullmatch(cmd.name) is None:
        return False
    if any(_DESTRUCTIVE_CODE.search(a) for a in cmd.args):
        return True
    return cmd.name.startswith(("perl", "ruby", "php")) and any(
        _SHELL_IN_CODE.search(a) for a in cmd.args
    )


_SQL = re.compile(
    r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA|USER|ROLE)\b|\bTRUNCATE\s+(?:TABLE\s+)?[\w.\"`\[]"
    r"|\bDELETE\s+FROM\s+[\w.\"`\[\]]+\s*(?:;|$|\))|\bFLUSH(?:ALL|DB)\b|\.drop(?:Database)?\(\)",
    re.IGNORECASE,
)


_SQL_CLIENTS = frozenset(
    {"psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "clickhouse-client", "cockroach"}
    | {"duckdb", "mongo", "mongosh", "redis-cli", "cqlsh", "snowsql", "bq"}
)


def _sql(cmd: Cmd) -> bool:
    """Destructive SQL anywhere in the arguments; in the input only of a database client
    (a here-document written to a file with `cat` is just text)."""
    if cmd.name in ("dropdb", "dropuser"):
        return True
    if any(_SQL.search(a) for a in cmd.args):
        return True
    if cmd.name not in _SQL_CLIENTS:
        return False
    texts: Iterable[str] = (r.body or r.target for r in cmd.redirects if r.op.startswith("<<"))
    return any(_SQL.search(t) for t in texts)


def _relative_startup(cmd: Cmd) -> bool:
    return any(_BARE_STARTUP_FILE.match(p) for p in cmd.writes)


def _formatter(cmd: Cmd) -> bool:
    return _is_formatter(cmd.name)


def _partition(cmd: Cmd) -> bool:
    listing = {"-l", "--list", "print", "-p", "--print"}
    return any(a.startswith("/dev/") for a in cmd.args) and listing.isdisjoint(cmd.args)


def _dd_disk_read(cmd: Cmd) -> bool:
    return any(a.startswith("if=") and _BLOCK_DEVICE.match(cmd.path(a[3:])) for a in cmd.args)


PATTERNS: tuple[Rule, ...] = (
    Rule(
        "pattern:curl-pipe-shell",
        "runs a script downloaded from the network without showing it",
        _download_into_interpreter,
    ),
    Rule(
        "pattern:run-downloaded",
        "runs a script downloaded from the network earlier in the same command",
        _run_downloaded,
    ),
    Rule(
        "pattern:decode-pipe-shell",
        "decodes hidden text and runs it as a program",
        _decode_into_interpreter,
    ),
    Rule(
        "pattern:pipe-into-shell",
        "pipes output into a shell, so what runs cannot be seen",
        _pipe_into_shell,
    ),
    Rule(
        "pattern:dynamic-command",
        "the program to run is computed at run time, so it cannot be checked",
        _is_dynamic,
    ),
    Rule("pattern:rm-recursive", "deletes a directory tree", _recursive, _programs("rm")),
    Rule(
        "pattern:rm-bulk",
        "deletes every file it is fed (xargs, find -exec)",
        _rm_bulk,
        _programs("rm", "unlink", "shred"),
    ),
    Rule(
        "pattern:rm-important",
        "deletes a system file, credentials, a shell startup file or everything here",
        _rm_important,
        _programs("rm", "unlink"),
    ),
    Rule(
        "pattern:move-important",
        "moves away a system file, credentials or a shell startup file",
        _move_important,
        _programs("mv"),
    ),
    Rule(
        "pattern:rsync-delete",
        "deletes files at the destination that the source does not have",
        _rsync_deletes,
        _programs("rsync"),
    ),
    Rule(
        "pattern:find-delete",
        "find -delete removes every file that matches",
        lambda c: "-delete" in c.args,
        _programs("find"),
    ),
    Rule(
        "pattern:chmod-777-recursive",
        "makes a whole tree writable by everyone",
        _chmod_world_recursive,
        _programs("chmod"),
    ),
    Rule(
        "pattern:chown-recursive",
        "changes the owner of a whole tree",
        _recursive,
        _programs("chown", "chgrp"),
    ),
    Rule(
        "pattern:system-permissions",
        "changes permissions or owners of system files or credentials",
        _perm_system,
        _programs("chmod", "chown", "chgrp", "chattr"),
    ),
    Rule(
        "pattern:etc-write",
        "writes system configuration under /etc",
        _writes(lambda p: p.startswith("/etc/") or p == "/etc"),
    ),
    Rule(
        "pattern:system-write",
        "writes into a system directory (/usr, /var, /boot, ...)",
        _writes(lambda p: p == "/" or _is_system(p)),
    ),
    Rule(
        "pattern:path-dir-write",
        "puts a program in a directory on PATH, where it shadows the real one",
        _writes(lambda p: _PATH_DIR.match(p) is not None),
    ),
    Rule(
        "pattern:home-config-write",
        "writes credentials or a login item in your home directory",
        _writes(lambda p: _HOME_CONFIG.match(p) is not None),
    ),
    Rule(
        "pattern:startup-file-relative",
        "writes a file named like a shell startup file (.bashrc, .profile, ...)",
        _relative_startup,
    ),
    Rule(
        "pattern:sql-destructive",
        "drops, truncates or empties database data",
        _sql,
    ),
    Rule(
        "pattern:git-force-push",
        "rewrites history on the remote (force push)",
        _git_force_push,
        _programs("git"),
    ),
    Rule(
        "pattern:git-push-delete",
        "deletes a branch or tag on the remote",
        _git_push_delete,
        _programs("git"),
    ),
    Rule(
        "pattern:git-reset-hard",
        "throws away uncommitted changes",
        _git_reset_hard,
        _programs("git"),
    ),
    Rule(
        "pattern:git-clean",
        "deletes untracked files",
        _git_clean,
        _programs("git"),
    ),
    Rule(
        "pattern:git-branch-force-delete",
        "deletes a branch even if it was never merged",
        _git_branch_delete,
        _programs("git"),
    ),
    Rule(
        "pattern:git-history-rewrite",
        "rewrites history or drops stashed work",
        _git_rewrite,
        _programs("git"),
    ),
    Rule(
        "pattern:privilege",
        "runs with another user's (usually root's) privileges",
        lambda c: True,
        _programs("sudo", "su", "doas", "pkexec", "run0", "sudoedit", "runuser"),
    ),
    Rule(
        "pattern:killall",
        "kills processes by name or pattern",
        lambda c: True,
        _programs("killall", "pkill"),
    ),
    Rule(
        "pattern:kill-9",
        "kills a process without letting it clean up",
        _kill_9,
        _programs("kill"),
    ),
    Rule(
        "pattern:service-stop",
        "stops, disables or masks a system service",
        _service_stop,
        _programs("systemctl", "service", "launchctl"),
    ),
    Rule(
        "pattern:crontab-remove",
        "removes every scheduled job of the user",
        _crontab_remove,
        _programs("crontab"),
    ),
    Rule(
        "pattern:crontab-replace",
        "replaces the user's scheduled jobs",
        _crontab_replace,
        _programs("crontab"),
    ),
    Rule(
        "pattern:firewall-flush",
        "removes firewall rules or changes the default policy",
        _firewall_flush,
        _programs("iptables", "ip6tables", "iptables-legacy", "iptables-nft", "nft", "ufw"),
    ),
    Rule(
        "pattern:docker-destroy",
        "force-removes containers or deletes images, volumes or data",
        _docker_destroy,
        _programs("docker", "podman", "docker-compose", "podman-compose"),
    ),
    Rule(
        "pattern:kubectl-delete",
        "deletes or replaces cluster resources",
        _kubectl_delete,
        _programs("kubectl", "oc"),
    ),
    Rule(
        "pattern:infra-destroy",
        "destroys managed infrastructure",
        lambda c: "destroy" in c.args,
        _programs("terraform", "tofu", "pulumi", "cdk"),
    ),
    Rule(
        "pattern:package-publish",
        "publishes a package for everyone to download",
        _publish,
    ),
    Rule(
        "pattern:user-delete",
        "deletes a user or group account",
        lambda c: True,
        _programs("userdel", "deluser", "groupdel", "delgroup"),
    ),
    Rule(
        "pattern:secret-exfil",
        "sends credentials (ssh keys, cloud or .env secrets) over the network",
        _secret_exfil,
        _NETWORK,
    ),
    Rule(
        "pattern:reverse-shell",
        "connects a shell to the network",
        _reverse_shell,
    ),
    Rule(
        "pattern:inline-code-destructive",
        "inline code that deletes files or runs other programs",
        _inline_code,
    ),
    Rule(
        "pattern:mkfs",
        "creates a file system, overwriting the target",
        _formatter,
    ),
    Rule(
        "pattern:partition",
        "changes a disk's partition table",
        _partition,
        _programs("fdisk", "sfdisk", "gdisk", "sgdisk", "cfdisk", "parted"),
    ),
    Rule(
        "pattern:dd-disk-read",
        "reads a raw disk device",
        _dd_disk_read,
        _programs("dd"),
    ),
    Rule(
        "pattern:shred",
        "destroys file contents beyond recovery",
        lambda c: True,
        _programs("shred", "wipe", "srm"),
    ),
)
