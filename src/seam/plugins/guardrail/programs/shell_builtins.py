"""The shell's own builtins and the shells themselves: what they set, print or run."""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.normalize import shell_script
from seam.plugins.guardrail.programs.base import (
    EXECUTES,
    HISTORY,
    STDIN,
    Judgement,
    doubt,
    has_option,
)


def env(cmd: Cmd) -> Judgement:
    """`env X=1 cmd`: cmd is judged on its own; the variables set here are judged now."""
    for arg in cmd.args:
        if "=" in arg and not arg.startswith("-"):
            if risky_assignment(arg):
                return doubt("risky-variable", "sets a variable that makes programs run code")
        elif not arg.startswith("-"):
            break
    return "read"


def history(cmd: Cmd) -> Judgement:
    letters, _, operands = cmd.options
    return "read" if not letters and all(o.isdigit() for o in operands) else HISTORY


def fc(cmd: Cmd) -> Judgement:
    """`fc` edits and reruns commands from the history."""
    return HISTORY


def shell_set(cmd: Cmd) -> Judgement:
    return HISTORY if "history" in cmd.args else "read"


_RISKY_VARIABLE = re.compile(
    r"LD_\w+|DYLD_\w+|BASH_ENV|ENV|BASH_FUNC_\w+|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS"
    r"|HIST\w*|PATH|CDPATH|GLOBIGNORE|\w*PAGER|\w*EDITOR|VISUAL|BROWSER|LESSOPEN|LESSCLOSE"
    r"|GIT_\w+|SSH_ASKPASS|SUDO_ASKPASS|\w*_COMMAND|PYTHON(?:STARTUP|PATH|HOME|INSPECT)"
    r"|NODE_OPTIONS|NODE_PATH|PERL5?OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|MAKEFLAGS|MFLAGS"
    r"|MAKEFILES|RUSTC_WRAPPER|RUSTC|CARGO_\w+|CC|CXX|LD|SHELL|TERMINFO|SEAM_\w+"
    r"|IFS|HOME|ZDOTDIR|INPUTRC|GCONV_PATH|GO(?!OS$|ARCH$|MAXPROCS$|DEBUG$)\w+|RUSTC\w*"
    r"|RUSTFLAGS|RUSTDOCFLAGS|RUSTUP_\w+|RUBY\w+"
    r"|PYTHON(?!UNBUFFERED$|DONTWRITEBYTECODE$|HASHSEED$|UTF8$|IOENCODING$)\w+"
    r"|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH|TAR_OPTIONS|LESS\w*"
    r"|MANOPT|XDG_\w+|OPENSSL_\w+|NPM_CONFIG_\w+|npm_config_\w+|PIP_\w+|UV_\w+|VIMINIT"
    r"|EXINIT|RIPGREP_CONFIG_PATH|GZIP|BZIP2?|XZ_OPT|ZSTD_\w+|C(?:XX|PP)?FLAGS|LDFLAGS"
    r"|\w+_(?:OPTS|OPTIONS|FLAGS|PATH|CMD|COMMAND|PROGRAM|PROG|HOOK|HOOKS|SHELL|EXEC|WRAPPER)"
)


def risky_assignment(assignment: str) -> bool:
    """`LD_PRELOAD=x`, `GIT_SSH_COMMAND=...`: a variable that makes programs run code."""
    name = assignment.partition("=")[0].rstrip("+").partition("[")[0]
    return _RISKY_VARIABLE.fullmatch(name) is not None


def declare(cmd: Cmd) -> Judgement:
    if any("=" in a and risky_assignment(a) for a in cmd.args):
        return doubt("risky-variable", "sets a variable that makes programs run other code")
    if has_option(cmd, "-f"):  # declare -f / export -f: functions as values
        return EXECUTES
    return "read"


def unset(cmd: Cmd) -> Judgement:
    return HISTORY if any(a.startswith("HIST") for a in cmd.args) else "read"


def shell_command(cmd: Cmd) -> Judgement:
    return "read"  # `command -v x` asks; `command x` runs x, which is judged on its own


def shell_program(cmd: Cmd) -> Judgement:
    """`sh -c '...'`: the script is judged on its own. `sh FILE` runs a project script.
    `sh` reading its program from input is fine only when that text is known (echo, a
    here-document or here-string), which the classifier judges; otherwise it is hidden."""
    if shell_script(cmd.args) is not None:
        return "read"
    operands = [a for a in cmd.args if not a.startswith(("-", "+"))]
    if operands and operands[0] not in ("-", "/dev/stdin") and "-s" not in cmd.args:
        return "run"
    if any(r.op in ("<<", "<<-", "<<<") for r in cmd.redirects):
        return "read"
    if cmd.upstream and _known_text(cmd.upstream[-1]):
        return "read"
    return STDIN


def _known_text(cmd: Cmd) -> bool:
    if cmd.name in ("echo", "printf"):
        return True
    return cmd.name == "cat" and not cmd.args and any(r.op.startswith("<<") for r in cmd.redirects)


def source(cmd: Cmd) -> Judgement:
    if not cmd.args or cmd.args[0] in ("-", "/dev/stdin", "/proc/self/fd/0"):
        return STDIN
    if cmd.args[0].startswith("<("):
        return doubt("source-substitution", "runs the output of another command")
    return "run"
