"""Turning what a model typed into what would actually run.

Three jobs, all pure: strip the terminal escapes that can hide text from a person,
canonicalise paths (`$HOME/x`, `/home/me/x` and `~/x` are one place), and see through
the wrappers that run another command (`sudo`, `env`, `xargs`, `sh -c`, `ssh host ...`),
so a rule about `rm` also sees `sudo env FOO=1 /bin/rm`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC strings, two-byte escapes.
_ANSI = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|[PX^_][^\x1b]*(?:\x1b\\)?|[@-Z\\-_])"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
# Other control characters (a carriage return can hide text on a terminal); \t and \n stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_DOUBLE_QUOTED_SPECIAL = re.compile(r'["\\]')
_SAFE_WORD = re.compile(r"[\w@%+=:,./~$*?\[\]{}^-]+")
_HOME_VAR = re.compile(r"^\$(?:HOME|\{HOME\})(?=/|$)")
_TILDE_USER = re.compile(r"^~[A-Za-z_][\w.-]*(?=/|$)")

SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "csh", "tcsh", "rbash"}
)


def strip_ansi(text: str) -> str:
    return _CONTROL.sub("", _ANSI.sub("", text))


def program_name(word: str) -> str:
    """`/usr/bin/RM` -> `rm`: the basename, lower-cased (macOS file systems ignore case).

    A name computed at run time (`$(...)`, `$X`) is kept whole: it is not a path."""
    if "$" in word or "`" in word:
        return word
    return word.rsplit("/", 1)[-1].lower()


def canonical_path(path: str, *, home: str, cwd: str | None) -> str:
    """A path in one spelling: home as `~`, absolute paths normalised, relative paths
    resolved against `cwd` when a `cd` made it known (else left relative)."""
    p = _HOME_VAR.sub("~", path)
    if home and (p == home or p.startswith(home + "/")):
        p = "~" + p[len(home) :]
    elif _TILDE_USER.match(p):  # ~root, ~alice: someone's home
        user, _, rest = p[1:].partition("/")
        p = ("/root" if user == "root" else "/home/" + user) + ("/" + rest if rest else "")
    if not p.startswith(("/", "~")) and cwd is not None:
        p = posixpath.join(cwd, p)
    if p.startswith("/"):
        return posixpath.normpath("/" + p.lstrip("/"))
    if p == "~" or p.startswith("~/"):
        rest = posixpath.normpath("/" + p[2:]) if len(p) > 2 else "/"
        return "~" if rest == "/" else "~" + rest
    return posixpath.normpath(p) if p else p


def quote(word: str) -> str:
    """Shell quoting that keeps `$HOME`, globs, `~`, `$(...)` and `<(...)` readable."""
    if _SAFE_WORD.fullmatch(word):
        return word
    if word.startswith(("<(", ">(")) and word.endswith(")"):
        return word
    if "$" in word or "`" in word:
        return '"' + _DOUBLE_QUOTED_SPECIAL.sub(r"\\\g<0>", word) + '"'
    return shlex.quote(word)


def render(words: tuple[str, ...]) -> str:
    """Words built by the classifier itself (expanded, or run by a wrapper) as text."""
    return " ".join(quote(w) for w in words)


@dataclass(frozen=True, slots=True)
class Inner:
    """What a wrapper runs: other commands' words, and/or shell scripts to parse."""

    commands: tuple[tuple[str, ...], ...] = ()
    scripts: tuple[str, ...] = ()
    bulk: bool = False  # runs once per input item, with arguments nobody can see yet


def _options(*names: str) -> frozenset[str]:
    return frozenset(names)


_SUDO_VALUES = _options(
    "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group",
    "--close-from", "--chdir", "--host", "--prompt", "--role", "--type", "--command-timeout",
    "--other-user",
)  # fmt: skip
_SYSTEMD_RUN_VALUES = _options(
    "-u", "--unit", "-p", "--property", "-E", "--setenv", "--uid", "--gid", "-M", "--machine",
    "--working-directory", "--description", "--slice", "-H", "--host", "--on-calendar",
    "--on-active", "--timer-property",
)  # fmt: skip
_NAMESPACE_VALUES = _options(
    "-t", "--target", "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd",
    "--map-user", "--map-group",
)  # fmt: skip
_NO_OPTIONS = _options()
# wrapper -> (its options that take a value, operands it takes before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (_SUDO_VALUES, 0),
    "doas": (_options("-u", "-C"), 0),
    "pkexec": (_options("--user"), 0),
    "run0": (_options("-u", "--user", "-D", "--chdir", "--property"), 0),
    "nohup": (_NO_OPTIONS, 0),
    "command": (_NO_OPTIONS, 0),
    "builtin": (_NO_OPTIONS, 0),
    "exec": (_options("-a"), 0),
    "nice": (_options("-n", "--adjustment"), 0),
    "time": (_options("-f", "-o", "--format", "--output"), 0),
    "timeout": (_options("-s", "-k", "--signal", "--kill-after"), 1),
    "stdbuf": (_options("-i", "-o", "-e", "--input", "--output", "--error"), 0),
    "ionice": (_options("-c", "-n", "-p", "-P", "-u", "--class", "--classdata"), 0),
    "taskset": (_NO_OPTIONS, 1),
    "setsid": (_NO_OPTIONS, 0),
    "unbuffer": (_NO_OPTIONS, 0),
    "caffeinate": (_options("-t", "-w"), 0),
    "chroot": (_options("--userspec", "--groups"), 1),
    "busybox": (_NO_OPTIONS, 0),
    "toybox": (_NO_OPTIONS, 0),
    "strace": (_options("-o", "-e", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-P"), 0),
    "ltrace": (_options("-o", "-e", "-p", "-s", "-u", "-a", "-n", "-l"), 0),
    "torsocks": (_NO_OPTIONS, 0),
    "proxychains": (_options("-f"), 0),
    "proxychains4": (_options("-f"), 0),
    "coproc": (_NO_OPTIONS, 0),
    "firejail": (_NO_OPTIONS, 0),
    "systemd-run": (_SYSTEMD_RUN_VALUES, 0),
    "unshare": (_NAMESPACE_VALUES, 0),
    "nsenter": (_NAMESPACE_VALUES, 0),
}
_XARGS_VALUES = _options(
    "-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--eof",
    "--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars",
    "--process-slot-var",
)  # fmt: skip
_ENV_VALUES = _options("-u", "-C", "--unset", "--chdir")
_SSH_VALUES = frozenset(f"-{c}" for c in "bcDEeFIiJLlmOopQRSWwB")
_WATCH_VALUES = _options("-n", "-d", "--interval", "--differences", "-q", "--equexit")
_DOCKER_EXEC_VALUES = _options(
    "-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"
)
_PARALLEL_VALUES = _options(
    "-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter", "-I",
    "--results", "--joblog", "--tmpdir", "-n", "--max-args", "-N", "--colsep", "-C",
)  # fmt: skip
_FLOCK_VALUES = _options("-w", "-E", "--timeout", "--wait", "--conflict-exit-code")
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Tools whose subcommand runs any command given after it: `uv run CMD`, `bundle exec CMD`.
_RUNS_COMMAND = {
    **dict.fromkeys(("uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi", "pipx"), "run"),
    **dict.fromkeys(("conda", "mamba", "micromamba"), "run"),
    **dict.fromkeys(("bundle", "yarn", "pnpm", "stack", "cabal", "npm"), "exec"),
}
# Their options known to take a value, and known flags; any other option means the
# command cannot be told apart from the option's value, so it is not read at all.
_RUN_VALUES = _options(
    "--with", "--python", "-p", "--package", "--directory", "--project", "--env-file",
    "--extra", "--group", "--index", "--index-url", "-n", "--name", "--prefix", "--cwd",
    "-e", "--environment", "--spec", "-C", "-P", "--gemfile", "-w", "--workspace",
    "--filter",
)  # fmt: skip
_RUN_FLAGS = _options(
    "--frozen", "--locked", "--no-sync", "--isolated", "--active", "--no-project",
    "--offline", "-q", "--quiet", "-v", "--verbose", "--no-capture-output", "--live-stream",
    "--all-extras", "--no-dev", "--silent", "--exact", "--no-env-file", "-y", "--yes",
)  # fmt: skip
UNREADABLE = "<options the guard cannot read>"
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def scan_options(args: tuple[str, ...], width: Callable[[str], int | None]) -> int | None:
    """The index of the first word after the leading options, an option taking `width(arg)`
    words (itself and its values); None when `width` cannot read an option. One scanner,
    so every wrapper agrees on what ends the options: `--`, `-` or a plain word."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return i + 1
        if not arg.startswith("-") or arg == "-":
            return i
        taken = width(arg)
        if taken is None:
            return None
        i += taken
    return i


def _option_width(with_value: frozenset[str], arg: str) -> int:
    """How many words an option takes when the ones in `with_value` take a value."""
    if arg.startswith("--"):
        return 2 if "=" not in arg and arg in with_value else 1
    # a cluster such as -Eu: the first letter that takes a value ends it
    for k, letter in enumerate(arg[1:], 1):
        if "-" + letter in with_value:
            return 2 if k == len(arg) - 1 else 1
    return 1


def skip_options(args: tuple[str, ...], with_value: frozenset[str], operands: int = 0) -> int:
    """The index of the first word after a program's own options and leading operands."""
    end = scan_options(args, partial(_option_width, with_value))
    return min((len(args) if end is None else end) + operands, len(args))


def shell_script(args: tuple[str, ...]) -> str | None:
    """The script of `sh -c SCRIPT` (any shell, any flag cluster with c), else None."""
    i = 0
    has_c = False
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if arg.startswith("--command="):
            return arg.partition("=")[2]
        if arg == "--command":
            return args[i + 1] if i + 1 < len(args) else ""
        if arg == "--":
            i += 1
            break
        if arg[:1] in "-+" and len(arg) > 1:
            has_c = has_c or (arg[0] == "-" and not arg.startswith("--") and "c" in arg)
            i += 1
            continue
        break
    if not has_c:
        return None
    return args[i] if i < len(args) else ""


def unwrap(name: str, args: tuple[str, ...]) -> Inner | None:
    """What `name args...` runs besides itself, or None when it runs nothing else."""
    if name == "command" and args[:1] in (("-v",), ("-V",)):
        return None  # `command -v x` asks where x is; it runs nothing
    if name in _RUNS_COMMAND:
        return _runs_command(_RUNS_COMMAND[name], args)
    wrapper = _WRAPPERS.get(name)
    if wrapper is not None:
        start = skip_options(args, *wrapper)
        return Inner(commands=(args[start:],))
    if name in SHELLS:
        script = shell_script(args)
        return None if script is None else Inner(scripts=(script,))
    runs = _UNWRAPPERS.get(name)
    return None if runs is None else runs(args)


def _eval(args: tuple[str, ...]) -> Inner:
    return Inner(scripts=(" ".join(args),))


def _xargs(args: tuple[str, ...]) -> Inner:
    start = skip_options(args, _XARGS_VALUES)
    return Inner(commands=(args[start:] or ("echo",),), bulk=True)


def _flock(args: tuple[str, ...]) -> Inner:
    inner = _dash_c(args)
    start = skip_options(args, _FLOCK_VALUES, operands=1)  # the lock file
    return inner or Inner(commands=(args[start:],))


def _parallel(args: tuple[str, ...]) -> Inner:
    start = skip_options(args, _PARALLEL_VALUES)
    words = args[start:]
    end = next((i for i, w in enumerate(words) if w.startswith(":::")), len(words))
    return Inner(commands=(words[:end],), bulk=True)


def _ssh(args: tuple[str, ...]) -> Inner | None:
    start = skip_options(args, _SSH_VALUES, operands=1)  # the host
    rest = args[start:]
    return Inner(scripts=(" ".join(rest),)) if rest else None


def _watch(args: tuple[str, ...]) -> Inner:
    start = skip_options(args, _WATCH_VALUES)
    return Inner(scripts=(" ".join(args[start:]),))


def _container_exec(args: tuple[str, ...]) -> Inner | None:
    """`docker exec [options] CONTAINER CMD...`."""
    if "exec" not in args:
        return None
    rest = args[args.index("exec") + 1 :]
    start = skip_options(rest, _DOCKER_EXEC_VALUES, operands=1)  # the container
    return Inner(commands=(rest[start:],))


def _kubectl_exec(args: tuple[str, ...]) -> Inner | None:
    """`kubectl exec POD -- CMD...`."""
    if "exec" in args and "--" in args:
        return Inner(commands=(args[args.index("--") + 1 :],))
    return None


def _runs_command(subcommand: str, args: tuple[str, ...]) -> Inner | None:
    """`uv run [options] CMD...`: CMD, when the options before it can all be read."""
    start = skip_options(args, _RUN_VALUES)
    if start >= len(args) or args[start] != subcommand:
        return None
    rest = args[start + 1 :]
    end = scan_options(rest, _run_option_width)
    if end is None:
        return Inner(commands=((UNREADABLE,),))
    return Inner(commands=(rest[end:],)) if rest[end:] else None


def _run_option_width(arg: str) -> int | None:
    """`uv run`'s own options: the known ones with and without a value, or `--opt=value`."""
    if arg in _RUN_VALUES:
        return 2
    if arg in _RUN_FLAGS or "=" in arg:
        return 1
    return None


def _env(args: tuple[str, ...]) -> Inner:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-S", "--split-string"):  # -S 'cmd args': the string is split into words
            return Inner(scripts=(" ".join(args[i + 1 :]),))
        if arg.startswith(("-S", "--split-string=")):
            value = arg.partition("=")[2] if arg.startswith("--") else arg[2:]
            return Inner(scripts=(" ".join((value, *args[i + 1 :])),))
        if arg in _ENV_VALUES:
            i += 2
        elif arg.startswith("-") or _ASSIGNMENT.match(arg):
            i += 1
        else:
            break
    return Inner(commands=(args[i:],))


def _dash_c(args: tuple[str, ...]) -> Inner | None:
    """`su -c CMD`, `script -qc CMD`, `flock -c CMD`: a command given as one string."""
    for i, arg in enumerate(args):
        if arg in ("--command", "--session-command") or (
            arg.startswith("-") and not arg.startswith("--") and arg.endswith("c")
        ):
            return Inner(scripts=(args[i + 1],)) if i + 1 < len(args) else None
        if arg.startswith(("--command=", "--session-command=")):
            return Inner(scripts=(arg.partition("=")[2],))
    return None


def _find_exec(args: tuple[str, ...]) -> Inner | None:
    """`find ... -exec CMD {} ;` runs CMD once per file found (or per batch, with `+`)."""
    commands: list[tuple[str, ...]] = []
    i = 0
    while i < len(args):
        if args[i] in _FIND_EXEC:
            end = i + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            if end > i + 1:
                commands.append(args[i + 1 : end])
            i = end
        i += 1
    return Inner(commands=tuple(commands), bulk=True) if commands else None


# What the other wrappers run, by program (after `_RUNS_COMMAND`, `_WRAPPERS` and shells).
_UNWRAPPERS: dict[str, Callable[[tuple[str, ...]], Inner | None]] = {
    "eval": _eval,
    "xargs": _xargs,
    "env": _env,
    "su": _dash_c,
    "runuser": _dash_c,
    "script": _dash_c,
    "flock": _flock,
    "parallel": _parallel,
    "ssh": _ssh,
    "watch": _watch,
    "find": _find_exec,
    "docker": _container_exec,
    "podman": _container_exec,
    "kubectl": _kubectl_exec,
}

_SCRIPT_LANGUAGES = re.compile(
    r"(?:python|pypy)[\d.]*|perl[\d.]*|ruby[\d.]*|node(?:js)?|deno|bun|php[\d.]*|lua(?:jit)?[\d.]*"
    r"|tclsh|wish|rscript|osascript|pwsh|powershell"
)
# Options that hand a script language its program on the command line (-c code, -m module,
# -e/-r code for perl, ruby, node, php); a cluster such as -uc counts too.
_INLINE_LETTERS = frozenset("cemr")
_INLINE_LONG = frozenset({"--eval", "--command", "--print", "--module"})


def is_interpreter(name: str) -> bool:
    return (
        name in SHELLS or name in ("source", ".") or _SCRIPT_LANGUAGES.fullmatch(name) is not None
    )


def script_operand(name: str, args: tuple[str, ...]) -> str | None:
    """The script file an interpreter runs (`bash install.sh` -> `install.sh`), if any."""
    if not is_interpreter(name) or (name in SHELLS and shell_script(args) is not None):
        return None
    for arg in args:
        if not arg.startswith("-"):
            return arg
        if name not in SHELLS and not _INLINE_LETTERS.isdisjoint(arg[1:]):
            return None
    return None


def reads_program_from_stdin(name: str, args: tuple[str, ...]) -> bool:
    """Whether `name args` would run whatever arrives on its standard input."""
    if name in ("source", "."):
        return bool(args) and args[0] in ("/dev/stdin", "-", "/proc/self/fd/0")
    if name in ("at", "batch"):  # they schedule the commands read from stdin
        return "-f" not in args and not {"-l", "-r", "-d", "-c"} & set(args)
    if name in SHELLS:
        if shell_script(args) is not None:
            return False
        operands = [a for a in args if not a.startswith(("-", "+"))]
        return not operands or operands[0] in ("-", "/dev/stdin") or "-s" in args
    if _SCRIPT_LANGUAGES.fullmatch(name) is None:
        return False
    for arg in args:
        if not arg.startswith("-") or arg == "-":
            return arg in ("-", "/dev/stdin")
        if arg.partition("=")[0] in _INLINE_LONG:
            return False
        if not arg.startswith("--") and not _INLINE_LETTERS.isdisjoint(arg[1:]):
            return False
    return True
