"""Option grammar the allowlist shares, and the shell builtins that evaluate code.

GNU `getopt_long` (and git's parse-options, and TeX's `getopt_long_only`) accept any
unambiguous prefix of a long option, with its value glued on after `=`: `sort
--compress-prog=sh` is `--compress-program=sh`. A check that compares whole words walks
past that (the shape of CVE-2026-28363). Here a long option given on the command line
counts as every option it is a prefix of, so a prefix that *could* mean a dangerous
option is judged as that option, whatever else it could also mean.

Builtins that evaluate text as code (`eval`, `source`, `let`, `mapfile -C`, `printf -v
'a[$(cmd)]'`, `declare -n`, ...) look like reads but run what their arguments say, so
they are never proven harmless: `evaluates` names the first such use.
"""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.normalize import unwrap


def long_name(arg: str) -> str:
    """`--compress-prog=sh` -> `--compress-prog` (the part a program matches)."""
    return arg.partition("=")[0]


def long_matches(arg: str, option: str) -> bool:
    """Whether `arg` (as typed) could mean the long `option` (`--opt`, or `-opt` for the
    programs that take long options after one dash): it is the option itself, with a
    value after `=`, or any prefix of it that the program would accept."""
    name = long_name(arg)
    if name in ("", "-", "--"):
        return False
    if not name.startswith("--") and len(name) <= 2 and len(option) > 2:
        return False  # `-x` is a short option, not a prefix of `-xylophone`
    return option.startswith(name)


def given(args: tuple[str, ...], option: str) -> bool:
    """Whether the long `option` may be among `args` (before a `--`)."""
    for arg in args:
        if arg == "--":
            return False
        if arg.startswith("-") and long_matches(arg, option):
            return True
    return False


def unknown_long(args: tuple[str, ...], known: frozenset[str], negatable: bool) -> str:
    """The first long option in `args` that could mean none of `known` (an option this
    version of the program may have that the guard has not read), or ""."""
    for arg in args:
        if arg == "--":
            return ""
        if not arg.startswith("--") or (negatable and arg.startswith("--no-")):
            continue
        if not any(long_matches(arg, option) for option in known):
            return long_name(arg)
    return ""


# --- builtins that evaluate code -------------------------------------------------------------

# Always evaluate or replace the shell: what they run is text the guard cannot see whole.
_ALWAYS = {
    "eval": "evaluates its arguments as shell code",
    "source": "runs a file as shell code in this shell",
    ".": "runs a file as shell code in this shell",
    "let": "arithmetic evaluation runs the command substitutions in array subscripts",
    "mapfile": "mapfile can run a callback (-C) and assigns to computed names",
    "readarray": "readarray can run a callback (-C) and assigns to computed names",
    "trap": "runs code when a signal or the shell's exit arrives",
    "enable": "loads or swaps shell builtins",
    "exec": "replaces the shell (or changes its open files)",
    "coproc": "runs a background process that outlives the command",
    "fc": "runs commands from the history",
    "bind": "binds keys to shell commands",
    "disown": "leaves a process running after the call",
    "setsid": "leaves a process running after the call",
}
_DECLARERS = frozenset({"declare", "typeset", "local", "readonly", "export"})
# Options of the declaring builtins that make a value code or a name a reference.
_DECLARE_EVAL = frozenset("niaAf")
# Builtins whose operands are variable names: a subscript in one is arithmetic, and
# arithmetic runs the command substitutions it meets (`read 'a[$(id)]'`).
_NAME_TAKERS = frozenset({"read", "unset", "getopts", "wait"})
_SUBSCRIPT = re.compile(r"[A-Za-z_]\w*\[")


def evaluates(cmd: Cmd) -> str | None:
    """Why `cmd` (a shell builtin) would run code its words do not show, or None."""
    name, args = cmd.name, cmd.args
    reason = _ALWAYS.get(name)
    if reason is not None:
        return reason
    if name == "command" and args and args[0].startswith("-") and "p" in args[0]:
        return "command -p runs a program from a path the guard does not check"
    if name in ("complete", "compgen") and any(
        a.startswith("-") and not a.startswith("--") and set(a[1:]) & set("CF") for a in args
    ):
        return "runs a completion command or function"
    if name == "printf" and any(a.startswith("-v") for a in args):
        return "printf -v assigns to a computed name (a subscript runs code)"
    if name in _DECLARERS:
        return _declaring(args)
    if name in _NAME_TAKERS and any(_SUBSCRIPT.match(a) for a in args):
        return "a subscript in a variable name is arithmetic, which runs substitutions"
    if name == "read" and any(a.startswith("-") and "a" in a[1:] for a in args):
        return "read -a assigns to a computed array name"
    if name in ("test", "[", "[[") and any(a in ("-v", "-R") for a in args):
        return "-v evaluates an array subscript"
    return None


def _declaring(args: tuple[str, ...]) -> str | None:
    for arg in args:
        if arg.startswith(("-", "+")) and set(arg[1:]) & _DECLARE_EVAL:
            return "declares references, integers, arrays or functions (they evaluate)"
        if _SUBSCRIPT.match(arg):
            return "a subscript in a variable name is arithmetic, which runs substitutions"
    return None


# Printing the environment shows whatever keys the process was given.
_ENV_PRINTERS = frozenset({"env", "printenv", "envsubst"})
_PRINTS_WITHOUT_OPERANDS = frozenset({"set", "export", "declare", "typeset", "readonly", "local"})


def prints_variables(cmd: Cmd) -> bool:
    """`set`, `declare`, `export -p`...: every variable and function of the shell, which
    the agent has no need to see whole (API keys are among them)."""
    return cmd.name in _PRINTS_WITHOUT_OPERANDS and prints_environment(cmd)


def prints_environment(cmd: Cmd) -> bool:
    """`env`, `printenv`, `set`, `export -p`, `declare -p`, `ps e`: the environment, where
    API keys live."""
    name, args = cmd.name, cmd.args
    if name == "env":  # `env X=1 cmd` runs cmd (judged on its own); bare `env` prints
        inner = unwrap(name, args)
        return inner is None or (not any(inner.commands) and not inner.scripts)
    if name in _ENV_PRINTERS or name in ("history", "compgen"):
        return True
    if name == "set":
        return not args
    if name in _PRINTS_WITHOUT_OPERANDS:
        return not [a for a in args if not a.startswith(("-", "+"))]
    # `git config --list` / `--get`, `git var -l`: the person's global git configuration,
    # where credential helpers and tokens live.
    return name == "git" and any(a in ("config", "var") for a in args)


def ps_shows_environment(args: tuple[str, ...]) -> bool:
    """BSD-style `ps e`, `ps eww`, `ps auxe`: each process's environment too."""
    return any(not a.startswith("-") and "e" in a and a.isalpha() for a in args)
