"""What `safe` means: a known program with known-harmless arguments, nothing else.

A pattern list says what is dangerous and lets everything else through, so the next
disguise walks past it. This is the other way round (as OpenAI's Codex CLI judges
commands): each program the guard knows has a rule for its arguments, and `prove`
returns what a command does when the rule holds: `read` (only reads), `write` (writes
files) or `run` (runs the project's own code or tools, which the sandbox contains).
Anything else is a `Doubt`: an unknown program, a program run by path, inline code for
an interpreter, options that make a program execute its arguments, privilege and
container escapes. A doubt needs the person's approval; it is never `safe`.

Commands a wrapper runs (`env X cmd`, `xargs cmd`, `find -exec cmd`, `sh -c '...'`) are
judged on their own by the classifier; here a wrapper is only judged for its own options.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from seam.plugins.guardrail.grammar import (
    given,
    long_matches,
    ps_shows_environment,
    unknown_long,
)
from seam.plugins.guardrail.normalize import SHELLS, shell_script
from seam.plugins.guardrail.options import LONG_OPTIONS, NEGATABLE
from seam.plugins.guardrail.rules import Cmd

# read: only reads. add: creates something new and overwrites nothing (`mkdir -p`).
# run: runs the project's own tests, linters and builds (the sandbox contains them).
# write: changes, truncates, moves, removes or overwrites files: a person approves it.
Kind = Literal["read", "add", "run", "write"]
_RANK: dict[Kind, int] = {"read": 0, "add": 1, "run": 2, "write": 3}


@dataclass(frozen=True, slots=True)
class Doubt:
    rule: str
    reason: str


Judgement = Kind | Doubt
Check = Callable[[Cmd], Judgement]


def widest(a: Kind, b: Kind) -> Kind:
    return a if _RANK[a] >= _RANK[b] else b


def _doubt(rule: str, reason: str) -> Doubt:
    return Doubt(f"allow:{rule}", reason)


_UNKNOWN = _doubt("unknown-program", "not a program the guard knows to be harmless")
_ESCAPE = _doubt("privilege", "runs with other privileges or outside the sandbox")
_INLINE = _doubt("inline-code", "runs inline code the guard cannot read")
_STDIN = _doubt("code-on-stdin", "runs a program read from its input")
_EXECUTES = _doubt("executes-arguments", "options that make it run other commands")
_HISTORY = _doubt("history", "changes or erases the shell history")


# --- reading arguments ---------------------------------------------------------------------


def _flags(args: tuple[str, ...]) -> tuple[set[str], set[str], list[str]]:
    """(short letters, long option names, operands): GNU style, options anywhere."""
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
    return letters, longs, operands


def _has(cmd: Cmd, *options: str) -> bool:
    """Whether any of `options` (`-x` letters or `--long` names) is given."""
    letters, longs, _ = _flags(cmd.args)
    for option in options:
        if option.startswith("--"):
            # `--compress-prog=sh` is `--compress-program`: any prefix counts.
            if any(long_matches(name, option) for name in longs):
                return True
        elif option[1:] in letters or (len(option) > 2 and option[1:] in longs):
            return True
    return False


def _subcommand(args: tuple[str, ...], with_value: frozenset[str] = frozenset()) -> int:
    """The index of the first operand (the subcommand), skipping options and their values."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return i + (arg == "--")
        if arg in with_value:
            i += 1
        i += 1
    return i


def plain(kind: Kind, *banned: str) -> Check:
    """Any arguments, unless one of the `banned` options is given."""

    def check(cmd: Cmd) -> Judgement:
        return _EXECUTES if banned and _has(cmd, *banned) else kind

    return check


def _writes_if(kind: Kind, *writing: str) -> Check:
    def check(cmd: Cmd) -> Judgement:
        return "write" if _has(cmd, *writing) else kind

    return check


def _no_prefix(kind: Kind, *prefixes: str) -> Check:
    """Like `plain`, for options spelled with one dash (`-eval`, `-shell-escape`) or glued
    to their value (`--plugin=x`)."""

    def check(cmd: Cmd) -> Judgement:
        for arg in cmd.args:
            if arg.startswith(prefixes) or any(long_matches(arg, p) for p in prefixes):
                return _EXECUTES
        return kind

    return check


def _compiler(cmd: Cmd) -> Judgement:
    """A C compiler builds the project; `-wrapper`, plugins and `-B` swap in other programs."""
    if any(a.startswith(("-wrapper", "-fplugin", "-B", "-specs", "--specs")) for a in cmd.args):
        return _EXECUTES
    return "run"


def _bun(cmd: Cmd) -> Judgement:
    if _has(cmd, "-e", "--eval", "-p", "--print"):
        return _INLINE
    return "run"


def _deno(cmd: Cmd) -> Judgement:
    start = _subcommand(cmd.args)
    sub = cmd.args[start] if start < len(cmd.args) else ""
    if sub in ("eval", "repl", "") or _has(cmd, "--eval"):
        return _INLINE
    return "run"


def _js_package_manager(cmd: Cmd) -> Judgement:
    """yarn/pnpm run the project's scripts; `exec`/`node` run whatever their arguments say
    (the classifier judges `exec`'s command on its own)."""
    start = _subcommand(cmd.args)
    sub = cmd.args[start] if start < len(cmd.args) else ""
    if sub == "node":
        return _doubt("inline-code", "runs node with arguments the guard cannot read")
    if sub == "publish":
        return _doubt("publish", "publishes a package")
    if sub in _JS_INSTALLS:
        return "write"  # node_modules, the lockfile, and install scripts that run
    return "run"


_JS_INSTALLS = frozenset(
    {"", "install", "i", "add", "remove", "rm", "up", "upgrade", "update", "import", "link"}
    | {"unlink", "dedupe", "prune", "patch-commit", "set", "config", "init", "create", "dlx"}
)


def _env(cmd: Cmd) -> Judgement:
    """`env X=1 cmd`: cmd is judged on its own; the variables set here are judged now."""
    for arg in cmd.args:
        if "=" in arg and not arg.startswith("-"):
            if risky_assignment(arg):
                return _doubt("risky-variable", "sets a variable that makes programs run code")
        elif not arg.startswith("-"):
            break
    return "read"


def _no_operands(cmd: Cmd) -> Judgement:
    """`hostname`, `date`: reading is harmless, an operand would set something."""
    return "read" if not _flags(cmd.args)[2] else _doubt("sets-system", "changes system state")


def _ps(cmd: Cmd) -> Judgement:
    if ps_shows_environment(cmd.args):
        return _doubt("prints-environment", "shows every process's environment (API keys)")
    return "read"


def _formatter(check_flags: tuple[str, ...], write_flags: tuple[str, ...] = ()) -> Check:
    """A formatter rewrites files unless told only to check (`black --check`); one that
    only checks unless told to write (`prettier --write`) is given its `write_flags`."""

    def check(cmd: Cmd) -> Judgement:
        if write_flags:
            return "write" if _has(cmd, *write_flags) else "run"
        return "run" if _has(cmd, *check_flags) else "write"

    return check


def _ruff(cmd: Cmd) -> Judgement:
    start = _subcommand(cmd.args)
    sub = cmd.args[start] if start < len(cmd.args) else ""
    if sub == "format":
        return "run" if _has(cmd, "--check", "--diff") else "write"
    return "write" if _has(cmd, "--fix", "--unsafe-fixes", "--add-noqa") else "run"


def _date(cmd: Cmd) -> Judgement:
    return _doubt("sets-system", "sets the clock") if _has(cmd, "-s", "--set") else "read"


# --- the shell's own builtins --------------------------------------------------------------


def _history(cmd: Cmd) -> Judgement:
    letters, _, operands = _flags(cmd.args)
    return "read" if not letters and all(o.isdigit() for o in operands) else _HISTORY


def _set(cmd: Cmd) -> Judgement:
    return _HISTORY if "history" in cmd.args else "read"


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


def _declare(cmd: Cmd) -> Judgement:
    if any("=" in a and risky_assignment(a) for a in cmd.args):
        return _doubt("risky-variable", "sets a variable that makes programs run other code")
    if _has(cmd, "-f"):  # declare -f / export -f: functions as values
        return _EXECUTES
    return "read"


def _unset(cmd: Cmd) -> Judgement:
    return _HISTORY if any(a.startswith("HIST") for a in cmd.args) else "read"


def _hash(cmd: Cmd) -> Judgement:
    return _EXECUTES if _has(cmd, "-p") else "read"


def _command(cmd: Cmd) -> Judgement:
    return "read"  # `command -v x` asks; `command x` runs x, which is judged on its own


# --- files ---------------------------------------------------------------------------------


def _mkdir(cmd: Cmd) -> Judgement:
    """Creating a directory overwrites nothing (an existing one is left as it is)."""
    return "write" if _has(cmd, "-Z", "--context") else "add"


def _rm(cmd: Cmd) -> Judgement:
    if _has(cmd, "-r", "-R", "--recursive"):
        return _doubt("rm-recursive", "deletes a directory tree")
    return "write"


def _sort(cmd: Cmd) -> Judgement:
    if _has(cmd, "--compress-program"):
        return _EXECUTES
    return "write" if _has(cmd, "-o", "--output") else "read"


_TAR_EXECUTES = (
    "--checkpoint-action", "--to-command", "--use-compress-program", "-I", "--info-script",
    "-F", "--new-volume-script", "--rsh-command", "--rmt-command", "--index-file",
)  # fmt: skip


def _tar(cmd: Cmd) -> Judgement:
    args = cmd.args
    if args and not args[0].startswith("-") and ("I" in args[0] or "F" in args[0]):
        return _EXECUTES  # old-style cluster: `tar cIf prog x.tar`
    if _has(cmd, *_TAR_EXECUTES):
        return _EXECUTES
    listing = _has(cmd, "-t", "--list") or (bool(args) and args[0].startswith("t"))
    return "read" if listing else "write"


def _zip(cmd: Cmd) -> Judgement:
    return _EXECUTES if _has(cmd, "-TT", "--unzip-command", "-T", "--test") else "write"


def _unzip(cmd: Cmd) -> Judgement:
    return "read" if _has(cmd, "-l", "-t", "-v", "-p", "-Z") else "write"


def _xxd(cmd: Cmd) -> Judgement:
    return "write" if len(_flags(cmd.args)[2]) >= 2 else "read"


def _yq(cmd: Cmd) -> Judgement:
    return "write" if _has(cmd, "-i", "--inplace") else "read"


def _less(cmd: Cmd) -> Judgement:
    # `+cmd` runs less commands at start (`+!cmd` runs a shell); -k reads key bindings.
    lesskey = ("-k", "--lesskey-file", "--lesskey-src", "--lesskey-content")
    if any(a.startswith("+") for a in cmd.args) or _has(cmd, *lesskey):
        return _EXECUTES
    return "write" if _has(cmd, "-o", "-O", "--log-file", "--LOG-FILE") else "read"


def _npx(cmd: Cmd) -> Judgement:
    """`npx TOOL ...` runs a package's tool; a formatter's or fixer's write flag writes."""
    if any(a.startswith(("-c", "--call")) or long_matches(a, "--call") for a in cmd.args):
        return _EXECUTES
    return "write" if _has(cmd, "--write", "-w", "--fix") else "run"


_FIND_WITH_VALUE = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex"}
    | {"-regextype", "-type", "-xtype", "-size", "-newer", "-anewer", "-cnewer", "-mtime"}
    | {"-mmin", "-atime", "-amin", "-ctime", "-cmin", "-user", "-group", "-uid", "-gid"}
    | {"-perm", "-links", "-inum", "-samefile", "-lname", "-ilname", "-maxdepth", "-used"}
    | {"-mindepth", "-fstype", "-context", "-printf", "-files0-from", "-D", "-O"}
)
_FIND_FLAGS = frozenset(
    {"-empty", "-nouser", "-nogroup", "-readable", "-writable", "-executable", "-true"}
    | {"-false", "-not", "!", "-a", "-and", "-o", "-or", ",", "(", ")", "-print", "-print0"}
    | {"-ls", "-prune", "-quit", "-depth", "-d", "-mount", "-xdev", "-noleaf", "-follow"}
    | {"-ignore_readdir_race", "-noignore_readdir_race", "-daystart", "-warn", "-nowarn"}
    | {"-help", "--help", "-version", "--version", "-P", "-L", "-H", "+", ";"}
)
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(cmd: Cmd) -> Judgement:
    """Every predicate must be one find knows to only test or print; what -exec runs is
    judged on its own (once per file found), anything else is unproven."""
    args = cmd.args
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _FIND_RUNS:
            end = i + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            i = end + 1
            continue
        if arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            return "write"
        if arg == "-delete":
            return _doubt("find-delete", "deletes every file that matches")
        if arg in _FIND_WITH_VALUE or re.fullmatch(r"-newer[aBcmt][aBcmt]", arg):
            i += 2
            continue
        if arg.startswith("-") and arg not in _FIND_FLAGS and len(arg) > 1:
            return _doubt("find-predicate", f"find {arg} is not known to be harmless")
        i += 1
    return "read"


def _fd(cmd: Cmd) -> Judgement:
    return _EXECUTES if _has(cmd, "-x", "--exec", "-X", "--exec-batch") else "read"


# sed: the commands that write files (w, W) or run them (e, and the s///e flag).
_SED_COMMAND = re.compile(r"[{}=!aicdDgGhHlnNpPqQrRsTtbxyzF:#wWeEvu]")


def sed_script_harmless(script: str) -> bool:
    """A sed script that neither runs commands nor writes files (an s///e or a `w`)."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;!}{" or c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c in "/\\":  # an address: /re/ or \cREc
            delimiter = script[i + 1] if c == "\\" and i + 1 < n else "/"
            i = _skip_delimited(script, i + (2 if c == "\\" else 1), delimiter)
            if i < 0:
                return False
            if i < n and script[i] in "IM":
                i += 1
            continue
        if c in "ewW":
            return False
        if c in "aic":  # text to the end of the line
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "rRbtT:#":  # a file name or label to the end of the command
            if c in "#:":
                line_end = script.find("\n", i)
                i = n if line_end < 0 else line_end
            else:
                stop = re.search(r"[;\n}]", script[i:])
                i = n if stop is None else i + stop.start()
            continue
        if c in "sy":
            if i + 1 >= n:
                return False
            delimiter = script[i + 1]
            if delimiter in "\\\n":
                return False
            i = _skip_delimited(script, i + 2, delimiter)
            if i < 0:
                return False
            i = _skip_delimited(script, i, delimiter)
            if i < 0:
                return False
            if c == "s":
                flags = re.match(r"[gpiImM0-9]*", script[i:])
                i += flags.end() if flags else 0
                if i < n and script[i] in "ewW":
                    return False
            continue
        if _SED_COMMAND.fullmatch(c) is None:
            return False
        i += 1
    return True


def _skip_delimited(text: str, i: int, delimiter: str) -> int:
    """The index after the next unescaped `delimiter` from `i`, or -1."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delimiter:
            return i + 1
        i += 1
    return -1


_SED_LONG = frozenset(
    {"--quiet", "--silent", "--regexp-extended", "--separate", "--posix", "--null-data"}
    | {"--zero-terminated", "--unbuffered", "--debug"}
)


def _sed(cmd: Cmd) -> Judgement:
    args = cmd.args
    scripts: list[str] = []
    operands: list[str] = []
    in_place = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if arg.startswith("--expression="):
            scripts.append(arg.partition("=")[2])
        elif arg in ("-f", "--file") or arg.startswith("--file="):
            return _doubt("sed-script-file", "runs a sed script from a file")
        elif arg.startswith("-i") or arg.startswith("--in-place"):
            in_place = True
        elif arg.startswith("--"):
            if arg not in _SED_LONG:
                return _EXECUTES
        elif arg.startswith("-") and arg != "-":
            letters = arg[1:]
            if "e" in letters or "f" in letters:
                if letters.endswith("e") and i + 1 < len(args):
                    scripts.append(args[i + 1])
                    i += 2
                    continue
                return _EXECUTES
            if not set(letters) <= set("nrEsuzl0123456789"):
                return _EXECUTES
        else:
            operands.append(arg)
        i += 1
    if not scripts:
        if not operands:
            return _doubt("sed-no-script", "no sed script to judge")
        scripts.append(operands.pop(0))
    if not all(sed_script_harmless(s) for s in scripts):
        return _doubt("sed-executes", "a sed script that runs commands or writes files")
    return "write" if in_place else "read"


_AWK_RISK = re.compile(
    r"\bsystem\b|\bgetline\b|\||\bprintf?\b[^;{}]*>|\bclose\b|\bfflush\b|@|\bENVIRON\b"
    r"|\bPROCINFO\b"
)
# gawk's long options: the ones that only tune how it reads (any prefix of another one is
# judged as that one, so `--s` could be `--source`, program text).
_AWK_HARMLESS_LONG = frozenset(
    {"--field-separator", "--assign", "--posix", "--traditional", "--re-interval"}
    | {"--characters-as-bytes", "--use-lc-numeric", "--non-decimal-data", "--sandbox"}
    | {"--version", "--help", "--copyright", "--lint", "--bignum", "--no-optimize"}
)
_AWK_ALL_LONG = _AWK_HARMLESS_LONG | {
    "--dump-variables", "--exec", "--file", "--gen-pot", "--include", "--load", "--optimize",
    "--pretty-print", "--profile", "--source", "--debug",
}  # fmt: skip


def _awk(cmd: Cmd) -> Judgement:
    """The program text is judged (no system(), pipes, redirection, getline, @load); only
    options known to tune reading are accepted, long ones by any prefix."""
    args = cmd.args
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg.startswith("--"):
            meant = [o for o in _AWK_ALL_LONG if long_matches(arg, o)]
            if not meant or not set(meant) <= _AWK_HARMLESS_LONG:
                if meant == ["--file"] or arg.startswith("--file="):
                    return "run"  # a program file in the project
                return _doubt("awk-option", f"awk {arg} runs, loads or writes something")
            takes_value = meant[0] in ("--assign", "--field-separator") and len(meant) == 1
            i += 2 if takes_value and "=" not in arg else 1
            continue
        if arg.startswith("-") and arg != "-":
            if arg[1] in "vF":
                i += 2 if len(arg) == 2 else 1
                continue
            if arg.startswith("-f"):
                return "run"  # a program file in the project
            if not set(arg[1:]) <= set("PcrbnSNV"):
                return _doubt("awk-option", f"awk {arg} runs, loads or writes something")
            i += 1
            continue
        break
    if i >= len(args):
        return _doubt("awk-no-program", "no awk program to judge")
    if _AWK_RISK.search(args[i]):
        return _doubt("awk-executes", "an awk program that runs commands or writes files")
    return "read"


# --- interpreters --------------------------------------------------------------------------

_PYTHON_VALUES = frozenset({"-W", "-X", "--check-hash-based-pycs"})
_PYTHON = re.compile(r"(?:python|pypy)(?:[23](?:\.\d+)?)?t?")


def _python(cmd: Cmd) -> Judgement:
    args = cmd.args
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _PYTHON_VALUES:
            i += 2
            continue
        if arg == "-m" or (arg.startswith("-") and not arg.startswith("--") and "m" in arg):
            return "run"  # a module: `python -m pytest`, `python -m json.tool`
        if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg):
            return _INLINE
        if arg == "-" or not arg.startswith("-"):
            return _STDIN if arg == "-" else "run"
        if arg in ("--version", "-V", "--help", "-h"):
            return "read"
        i += 1
    return _STDIN


def _script_language(inline: str, long_inline: tuple[str, ...] = ()) -> Check:
    """node, perl, ruby, php...: a script file runs the project's code; inline code or a
    program on stdin cannot be read."""

    def check(cmd: Cmd) -> Judgement:
        for arg in cmd.args:
            if arg.partition("=")[0] in long_inline:
                return _INLINE
            if arg.startswith("-") and not arg.startswith("--") and set(arg[1:]) & set(inline):
                return _INLINE
            if arg in ("--version", "-v", "--help", "-h", "-V"):
                return "read"
            if arg == "-":
                return _STDIN
            if not arg.startswith("-"):
                return "run"
        return _STDIN

    return check


def _shell(cmd: Cmd) -> Judgement:
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
    return _STDIN


def _known_text(cmd: Cmd) -> bool:
    if cmd.name in ("echo", "printf"):
        return True
    return cmd.name == "cat" and not cmd.args and any(r.op.startswith("<<") for r in cmd.redirects)


def _source(cmd: Cmd) -> Judgement:
    if not cmd.args or cmd.args[0] in ("-", "/dev/stdin", "/proc/self/fd/0"):
        return _STDIN
    if cmd.args[0].startswith("<("):
        return _doubt("source-substitution", "runs the output of another command")
    return "run"


# --- build tools and package managers -------------------------------------------------------

_MAKE_OK_VALUES = frozenset({"-j", "--jobs", "-l", "--load-average", "-C", "--directory", "-o"})
_MAKE_OK_FLAGS = frozenset(
    {"-k", "-s", "-n", "-B", "-q", "-i", "-w", "--no-print-directory", "--keep-going"}
    | {"--silent", "--dry-run", "--always-make", "--question", "-r", "-R", "-d", "--debug"}
)


def _make(cmd: Cmd) -> Judgement:
    """Plain `make [targets]` runs the project's Makefile; `-f` and variable overrides
    (`make CC='rm -rf ~'`) or `--eval` make it run what its arguments say."""
    args = cmd.args
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _MAKE_OK_VALUES:
            i += 2
            continue
        if re.fullmatch(r"-j\d*|--jobs=\d+|-C.+|--directory=.+|-l[\d.]*", arg):
            i += 1
            continue
        if arg.startswith("-") and arg not in _MAKE_OK_FLAGS:
            return _EXECUTES
        if "=" in arg:
            return _doubt("make-variable", "a make variable can change the commands it runs")
        if arg in _MAKE_WRITES:
            return "write"
        i += 1
    return "run"


# Targets whose names say they remove, install or publish.
_MAKE_WRITES = frozenset(
    {"clean", "distclean", "mrproper", "realclean", "clobber", "install", "uninstall"}
    | {"deploy", "release", "publish", "upload", "push", "purge", "reset", "nuke"}
)


def _cmake(cmd: Cmd) -> Judgement:
    return _EXECUTES if _has(cmd, "-P", "-E") else "run"


def _subcommands(allowed: dict[str, Kind], *, values: frozenset[str] = frozenset()) -> Check:
    """A tool whose first operand picks what it does (`cargo build`, `pip install`)."""

    def check(cmd: Cmd) -> Judgement:
        start = _subcommand(cmd.args, values)
        if start >= len(cmd.args):
            return allowed.get("", _doubt("subcommand", f"{cmd.name} without a known action"))
        sub = cmd.args[start]
        kind = allowed.get(sub)
        if kind is None:
            return _doubt("subcommand", f"`{cmd.name} {sub}` is not known to be harmless")
        return kind

    return check


_RUN: Kind = "run"
_READ: Kind = "read"


def _all(kind: Kind, *names: str) -> dict[str, Kind]:
    return dict.fromkeys(names, kind)


_RUNS: Check = plain("run")
_CARGO_SUBCOMMANDS = _subcommands(
    {
        **_all(_RUN, "build", "b", "test", "t", "run", "r", "check", "c", "clippy", "doc"),
        **_all(_RUN, "bench", "tree", "nextest"),
        **_all("write", "add", "remove", "update", "new", "init", "install", "fix", "fmt"),
        **_all(_READ, "metadata", "search", "--version", "version", "help", ""),
        "clean": "write",
    },
    values=frozenset({"--manifest-path", "-C"}),
)


def _cargo(cmd: Cmd) -> Judgement:
    # --config can set a runner (`target.x.runner`) that `cargo run` and `test` execute.
    if _has(cmd, "--config", "-Z"):
        return _EXECUTES
    if "fmt" in cmd.args and _has(cmd, "--check"):
        return "run"
    return _CARGO_SUBCOMMANDS(cmd)


_GO = _subcommands(
    {
        **_all(_RUN, "build", "test", "run", "vet", "generate"),
        **_all("write", "fmt", "mod", "get", "install", "work"),
        **_all(_READ, "version", "env", "list", "doc", "help"),
        "clean": "write",
    }
)
_NPM = _subcommands(
    {
        **_all(_RUN, "test", "t", "run", "run-script", "start", "build", "exec", "why"),
        **_all("write", "install", "i", "ci", "add", "uninstall", "remove", "rm", "update"),
        **_all("write", "up", "init", "link", "rebuild", "prune", "dedupe", "pack", "create"),
        **_all("write", "dlx", "audit"),
        **_all(_READ, "ls", "list", "version", "--version", "-v", "help", "root", "bin"),
        **_all(_RUN, "outdated", "view", "info", "doctor", "whoami", "search", "prefix"),
        **_all(_RUN, "dev", "lint", "format", "serve", "preview", "typecheck", "check"),
    },
    values=frozenset({"--prefix", "-C", "--dir", "-w", "--workspace", "--filter", "--cwd"}),
)
_PIP = _subcommands(
    {
        **_all("write", "install", "uninstall", "download", "wheel"),
        **_all(_READ, "list", "show", "freeze", "check", "help", "--version"),
        **_all(_READ, "inspect", "debug", "hash", "-V", "cache"),
        **_all(_RUN, "search", "index"),
    },
    values=frozenset({"--python", "--log", "--cache-dir", "--proxy", "--retries", "--timeout"}),
)
_UV = _subcommands(
    {
        **_all(_RUN, "run", "build", "export", "tree"),
        **_all("write", "sync", "pip", "add", "remove", "lock", "venv", "init", "tool"),
        **_all("write", "python", "version", "self", "cache"),
        **_all(_READ, "--version", "help"),
    },
    values=frozenset({"--directory", "--project", "--python", "-p", "--with", "--package"}),
)
_POETRY = _subcommands(
    {
        **_all(_RUN, "run", "build"),
        **_all("write", "install", "add", "remove", "lock", "update", "shell", "sync"),
        **_all(_READ, "show", "check", "env", "version", "--version", "about", "search"),
        "init": "write",
        "new": "write",
    },
    values=frozenset({"-C", "--directory", "-P", "--project"}),
)
_BREW = _subcommands(
    {
        **_all("write", "install", "reinstall", "upgrade", "update", "uninstall", "remove"),
        **_all(_READ, "list", "ls", "deps", "--version", "config", "leaves", "--prefix"),
        **_all(_RUN, "info", "search", "outdated", "doctor", "home", "desc"),
    }
)
_APT = _subcommands(
    {
        **_all("write", "install", "update", "upgrade", "remove", "purge", "autoremove"),
        **_all(_READ, "list", "search", "show", "policy", "depends", "rdepends", "madison"),
    },
    values=frozenset({"-o", "-c", "-t"}),
)
_TERRAFORM = _subcommands(
    {
        **_all(_RUN, "plan", "validate", "providers", "graph", "test"),
        **_all("write", "init", "fmt", "get"),
        **_all(_READ, "show", "output", "version", "-version", "--version", "state", "help"),
    },
    values=frozenset({"-chdir"}),
)
_KUBECTL_READ = ("get", "describe", "logs", "explain", "top", "version", "api-resources")
_KUBECTL = _subcommands(
    {
        # They ask a cluster over the network: never read-only.
        **_all(_RUN, *_KUBECTL_READ, "config", "cluster-info", "api-versions", "events"),
        **_all(_RUN, "port-forward", "exec", "diff", "wait", "kustomize"),
        **_all("write", "apply", "rollout"),
    },
    values=frozenset({"-n", "--namespace", "--context", "--kubeconfig", "-l", "--selector"}),
)
_HELM = _subcommands(
    {
        **_all(_RUN, "list", "ls", "status", "template", "lint", "show", "search", "version"),
        **_all(_RUN, "history", "get", "env"),
        **_all("write", "install", "upgrade", "repo", "dependency", "pull", "package"),
    },
    values=frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig"}),
)
_GEM = _subcommands(
    {**_all("write", "install", "update", "uninstall", "build"), **_all(_READ, "list", "info")}
)
_BUNDLE = _subcommands(
    {
        **_all("write", "install", "update", "add", "lock"),
        **_all(_RUN, "exec"),
        **_all(_READ, "list", "info"),
    }
)
_SYSTEMCTL = _subcommands(
    {
        **_all(_READ, "status", "show", "list-units", "list-unit-files", "list-timers"),
        **_all(_READ, "is-active", "is-enabled", "is-failed", "cat", "list-dependencies"),
        **_all(_READ, "--version", "help", "list-sockets", "list-jobs"),
    },
    values=frozenset({"-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property"}),
)
_GH_GROUP_READS = frozenset({"list", "view", "status", "diff", "checks", "ls", "watch"})
_GH_TOP_READS = frozenset({"search", "status", "browse", "--version", "version", "help"})


def _gh(cmd: Cmd) -> Judgement:
    """GitHub's CLI: listing and viewing ask the network; anything else (create, merge,
    delete, edit, comment, api) changes what others see."""
    start = _subcommand(cmd.args, frozenset({"-R", "--repo"}))
    if start >= len(cmd.args):
        return _READ
    group, rest = cmd.args[start], cmd.args[start + 1 :]
    if group in _GH_TOP_READS:
        return _RUN if group != "help" else _READ
    action_at = _subcommand(rest, frozenset({"-R", "--repo"}))
    action = rest[action_at] if action_at < len(rest) else ""
    if action in _GH_GROUP_READS and not _has(cmd, "--web", "-w"):
        return _RUN
    return "write"


def _journalctl(cmd: Cmd) -> Judgement:
    mutating = (
        "--vacuum-size", "--vacuum-time", "--vacuum-files", "--rotate", "--flush",
        "--relinquish-var", "--setup-keys", "--update-catalog", "--sync",
    )  # fmt: skip
    return _doubt("journal", "changes the system journal") if _has(cmd, *mutating) else "read"


def _crontab(cmd: Cmd) -> Judgement:
    letters, _, operands = _flags(cmd.args)
    if letters <= {"l", "u"} and "l" in letters and len(operands) <= 1:
        return "read"
    return _doubt("crontab", "changes the user's scheduled jobs (they run later, unasked)")


def _kill(cmd: Cmd) -> Judgement:
    """A signal to a process (kill -9 and kill -1 have their own rules): never harmless."""
    return _doubt("signals", "sends a signal that can stop a running process")


def _partitions(cmd: Cmd) -> Judgement:
    """fdisk -l, parted ... print: listing a disk's partitions only reads."""
    listing = {"-l", "--list", "print", "-p", "--print"} & set(cmd.args)
    return "read" if listing else _doubt("partition", "changes a disk's partition table")


def _ip(cmd: Cmd) -> Judgement:
    changing = {"add", "del", "delete", "set", "flush", "change", "replace", "append", "exec"}
    return (
        _doubt("network-config", "changes network settings") if changing & set(cmd.args) else "read"
    )


def _openssl(cmd: Cmd) -> Judgement:
    sub = cmd.args[0] if cmd.args else ""
    known = {"rand", "version", "dgst", "x509", "req", "genrsa", "genpkey", "rsa", "pkey"}
    known |= {"s_client", "speed", "list", "ciphers", "base64", "enc", "sha256", "sha1", "md5"}
    known |= {"verify", "crl", "pkcs12", "ec", "ecparam", "passwd", "prime", "asn1parse"}
    if sub not in known:
        return _doubt("subcommand", f"`openssl {sub}` is not known to be harmless")
    return "write" if "-out" in cmd.args else "read"


# --- network tools -------------------------------------------------------------------------


def _curl(cmd: Cmd) -> Judgement:
    """GETs and downloads are fine; uploading a file (`-T`, `-d @file`, `-F x=@file`) or
    reading options from a config file (`-K`) may send what it should not."""
    args = cmd.args
    for i, arg in enumerate(args):
        value = args[i + 1] if i + 1 < len(args) else ""
        name, _, attached = arg.partition("=")
        if arg in ("-K", "--config") or arg.startswith("-K"):
            return _doubt("curl-config", "reads curl options from a file")
        if arg in ("-T", "--upload-file") or arg.startswith("-T"):
            return _doubt("upload", "uploads a local file")
        data_options = ("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode")
        if name in data_options or arg in ("-F", "--form", "--form-string"):
            payload = attached if attached and name.startswith("--") else value
            if "@" in payload or "<" in payload:
                return _doubt("upload", "uploads a local file")
    writes = _has(cmd, "-o", "--output", "-O", "--remote-name", "--output-dir", "-D")
    return "write" if writes else "run"


def _wget(cmd: Cmd) -> Judgement:
    if _has(cmd, "-e", "--execute", "--post-file", "--body-file", "--config", "--use-askpass"):
        return _EXECUTES
    return "write"


_SSH_OK_VALUES = frozenset({"-p", "-i", "-l", "-L", "-R", "-D", "-J", "-W", "-E", "-c", "-m"})


def _ssh(cmd: Cmd) -> Judgement:
    """ssh's own options; `-o` and `-F` can name a local command (ProxyCommand)."""
    for arg in cmd.args:
        if not arg.startswith("-"):
            break
        if arg in ("-o", "-F", "-S") or arg.startswith(("-o", "-F")):
            return _EXECUTES
    return "run"


def _scp(cmd: Cmd) -> Judgement:
    if _has(cmd, "-o", "-F", "-S"):
        return _EXECUTES
    return "run"


def _rsync(cmd: Cmd) -> Judgement:
    if _has(cmd, "-e", "--rsh", "--rsync-path", "--config"):
        return _EXECUTES
    return "write"


# --- git -----------------------------------------------------------------------------------

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
    return _doubt("git-config", reason)


def _git(cmd: Cmd) -> Judgement:
    args = cmd.args
    i = 0
    while i < len(args):  # git's own options: only the known ones (no -c, --exec-path)
        arg = args[i]
        if not arg.startswith("-"):
            break
        if arg in _GIT_VALUES:
            i += 2
            continue
        if arg.partition("=")[0] not in _GIT_GLOBAL and not arg.startswith("-C"):
            return _doubt("git-config", f"git {arg} can set aliases and hooks that run commands")
        i += 1
    if i >= len(args):
        return "read"
    sub, rest = args[i], args[i + 1 :]
    if _git_runs(sub, rest):
        return _EXECUTES
    if sub in ("difftool", "mergetool", "filter-branch", "filter-repo", "hook", "instaweb"):
        return _EXECUTES
    if sub == "config":
        return _git_config(rest)
    if sub == "grep" and any(
        a.startswith("-O") or long_matches(a, "--open-files-in-pager") for a in rest
    ):
        return _EXECUTES
    if given(rest, "--output"):
        return "write"  # git log/diff/show --output=FILE
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
    if sub == "clean" and set(rest) & {"-n", "--dry-run"} and not _has(cmd, "-f", "--force"):
        return _REPO_READ
    listing = _GIT_LISTING.get(sub)
    if sub == "stash" and not rest:
        return "write"  # `git stash` is `git stash push`: it reverts the working tree
    if listing is not None:
        return (
            _REPO_READ if all(a in listing or a.startswith("--format") for a in rest) else "write"
        )
    if sub == "submodule":
        return "run"
    if sub in _GIT_WRITE:
        return "write"
    return _doubt("subcommand", f"`git {sub}` is not known to be harmless")


# --- containers ----------------------------------------------------------------------------

_DOCKER_READ = frozenset(
    {"ps", "images", "logs", "inspect", "version", "info", "top", "stats", "port", "diff"}
    | {"history", "search", "events", "ls", "list"}
)
_DOCKER_HOST_ACCESS = (
    "-v", "--volume", "--mount", "--privileged", "--pid", "--ipc", "--uts", "--userns",
    "--cap-add", "--device", "--security-opt", "--volumes-from", "--cgroupns", "--network",
    "--net", "--device-cgroup-rule", "--gpus", "--runtime",
)  # fmt: skip


def _docker(cmd: Cmd) -> Judgement:
    """The daemon runs containers outside any sandbox, as root: only containers without
    access to the host (no mounts, no privileges, no host namespaces) are harmless."""
    start = _subcommand(cmd.args, frozenset({"-H", "--host", "-c", "--context", "--config"}))
    if start >= len(cmd.args):
        return "read"
    sub, rest = cmd.args[start], cmd.args[start + 1 :]
    if sub in ("container", "image", "volume", "network", "system", "builder") and rest:
        if rest[0] in _DOCKER_READ:
            return "read"
        sub, rest = rest[0], rest[1:]
    if sub in _DOCKER_READ:
        return "read"
    if sub == "compose" or cmd.name.endswith("-compose"):
        words = rest if sub == "compose" else cmd.args
        action_at = _subcommand(words, frozenset({"-f", "--file", "-p", "--project-name"}))
        action = words[action_at] if action_at < len(words) else ""
        if action in ("ps", "logs", "config", "ls", "images", "top", "version", "down", "stop"):
            return "read" if action not in ("down", "stop") else "write"
        return _doubt("container", "compose files can mount the host and run as root")
    probe = Cmd(cmd.name, rest)
    if sub in ("run", "create", "exec", "start", "build", "buildx"):
        if _has(probe, *_DOCKER_HOST_ACCESS) or (sub == "exec" and _has(probe, "-u", "--user")):
            return _ESCAPE
        return "run"
    if sub in ("rm", "rmi", "stop", "kill", "restart", "pull", "tag", "rename", "pause"):
        return "write"
    if sub in ("unpause", "wait", "attach", "cp", "commit", "save", "load", "push"):
        return _ESCAPE if sub == "cp" else "write"
    return _doubt("subcommand", f"`{cmd.name} {sub}` is not known to be harmless")


def _sql_client(sql_options: tuple[str, ...], *, positional: bool = False) -> Check:
    """A database client with a read-only query in its arguments; anything it would read
    from its input, a client's shell escape (`\\!`, `.shell`), or writing SQL needs a look."""

    def check(cmd: Cmd) -> Judgement:
        args = cmd.args
        texts = [args[i + 1] for i, a in enumerate(args[:-1]) if a in sql_options]
        texts += [
            a.partition("=")[2] for a in args if "=" in a and a.partition("=")[0] in sql_options
        ]
        if positional:
            operands = [a for a in args if not a.startswith("-")]
            texts += operands[1:]
        if not texts:
            return _STDIN
        return (
            "read"
            if all(_read_only_sql(t) for t in texts)
            else _doubt("sql", "SQL that is not a plain query")
        )

    return check


_SQL_READ = re.compile(
    r"\s*(?:SELECT|EXPLAIN|WITH|SHOW|DESCRIBE|DESC|PRAGMA\s+\w+\s*(?:\(\s*\w*\s*\))?\s*$"
    r"|\.(?:tables|schema|indexes|indices|headers|mode|databases|dump|width|help)\b)",
    re.IGNORECASE,
)
_SQL_RISK = re.compile(
    r"load_extension|\\!|\bPROGRAM\b|\.(?:shell|system|output|once|import|load|save|backup)\b"
    r"|\bINTO\s+(?:OUT|DUMP)FILE\b|\bATTACH\b|\\o|\\w|\\copy|\bCOPY\b|\bINSERT\b|\bUPDATE\b"
    r"|\bDELETE\b|\bDROP\b|\bALTER\b|\bCREATE\b|\bTRUNCATE\b|\bGRANT\b|\bREPLACE\b",
    re.IGNORECASE,
)


def _read_only_sql(text: str) -> bool:
    statements = [s for s in re.split(r";|\n(?=\s*\.)", text) if s.strip()]
    return bool(statements) and all(
        _SQL_READ.match(s) and not _SQL_RISK.search(s) for s in statements
    )


# --- the table -----------------------------------------------------------------------------

_READERS = (
    "ls", "ll", "la", "dir", "vdir", "pwd", "cd", "pushd", "popd", "dirs", "tree", "cat",
    "tac", "nl", "head", "tail", "more", "wc", "du", "df", "file", "stat", "which", "type",
    "whereis", "whatis", "echo", "printf", "printenv", "whoami", "uname", "uptime", "id",
    "groups", "grep", "egrep", "fgrep", "zgrep", "cut", "tr", "paste", "join", "column",
    "comm", "fold", "fmt", "expand", "unexpand", "rev", "strings", "od", "hexdump", "diff",
    "cmp", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum",
    "cksum", "sum", "basename", "dirname", "realpath", "readlink", "true", "false", ":",
    "sleep", "test", "[", "[[", "seq", "expr", "nproc", "free", "pgrep", "top",
    "htop", "jobs", "lsof", "netstat", "ss", "getent", "locale", "tty", "arch", "jq",
    "base32", "zcat", "bzcat", "xzcat", "zless", "cal", "factor", "numfmt", "look", "w",
    "who", "last", "lscpu", "lsblk", "lsusb", "lspci", "vmstat", "iostat", "pstree",
    "envsubst", "dos2unix", "unix2dos", "read", "wait", "shift", "return", "exit", "break",
    "continue", "getopts", "umask", "ulimit", "times", "caller", "disown", "bg", "fg",
    "shopt", "tput", "clear", "reset", "stty", "nm",
    "objdump", "readelf", "size", "python3-config", "pkg-config", "help",
    "uuidgen", "tsort", "pr", "csvlook", "exa", "eza", "lsd", "dust", "duf", "watch",
    "xargs", "timeout", "nice", "nohup", "stdbuf", "ionice", "env", "builtin", "busybox",
    "toybox", "unbuffer", "flock", "pv", "systemd-analyze",
    "lsmod", "fc-list", "sqlite3_analyzer", "wl-paste", "pbpaste", "say", "notify-send",
)  # fmt: skip
_WRITERS = (
    "touch", "mkdir", "rmdir", "cp", "mv", "ln", "chmod", "chown", "chgrp", "tee",
    "truncate", "csplit", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd",
    "unzstd", "lz4", "7z", "7za", "unrar", "install", "mkfifo", "dd", "unlink", "cpio",
    "wl-copy", "pbcopy", "dos2unix",
)  # fmt: skip
# Programs that reach the network: harmless inside a sandbox, never read-only (a lookup of
# `$(cat .env).example.com` sends what it reads).
_NETWORK = (
    "ping", "ping6", "dig", "nslookup", "host", "traceroute", "tracepath", "mtr", "whois",
    "nc", "ncat", "netcat", "telnet", "ftp", "sftp",
)  # fmt: skip
_RUNNERS = (
    "pytest", "py.test", "tox", "nox", "ruff", "mypy", "black", "isort", "flake8", "pylint",
    "pyright", "pyflakes", "pycodestyle", "bandit", "coverage", "eslint", "prettier", "tsc",
    "jest", "vitest", "mocha", "ava", "playwright", "cypress", "webpack", "vite", "rollup",
    "esbuild", "turbo", "pre-commit", "ninja", "meson", "ctest", "cpack", "rustc",
    "rustfmt", "javac", "java", "mvn", "gradle", "dotnet", "swiftc", "zig", "nim", "cabal",
    "stack", "rebar3", "dart", "flutter", "code", "open", "xdg-open", "gofmt",
    "golangci-lint", "staticcheck", "hatch", "pdm", "pipx", "conda", "mamba", "pipenv",
    "rye", "maturin", "twine", "sphinx-build", "mkdocs", "jupyter", "composer", "phpunit",
    "rspec", "rake", "shellcheck", "shfmt", "hadolint", "actionlint", "yamllint",
    "markdownlint", "codespell", "clang-format", "clang-tidy", "cppcheck", "ab", "wrk",
    "ffmpeg", "ffprobe", "typst", "buf", "sqlc", "alembic", "flask", "uvicorn", "gunicorn",
    "celery", "streamlit", "bazel", "buck2", "pants", "scons", "autoreconf", "automake",
    "autoconf", "libtool", "corepack",
)  # fmt: skip

_MAN_RUNS = (
    "-P", "--pager", "-H", "--html", "-p", "--preprocessor", "-l", "-C", "--config-file",
    "--browser", "-X", "--gxditview", "-T", "--troff-device",
)  # fmt: skip
# Readers whose every option and operand only selects what to read: a word nobody has
# seen yet (`xargs grep -l x`, `find -exec cat {} +`) cannot make them do anything else.
ANY_ARGUMENTS = frozenset(
    {"cat", "tac", "nl", "head", "tail", "wc", "grep", "egrep", "fgrep", "ls", "stat", "du"}
    | {"md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "basename", "echo"}
    | {"dirname", "readlink", "realpath", "true", "false", "strings", "od", "hexdump", "diff"}
    | {"cmp", "cut", "tr", "jq", "column", "fold", "rev", "paste", "comm", "join", "expand"}
)

PROGRAMS: dict[str, Check] = {
    **dict.fromkeys(_READERS, plain("read")),
    **dict.fromkeys(_WRITERS, plain("write")),
    **dict.fromkeys(_RUNNERS, plain("run")),
    **dict.fromkeys(_NETWORK, plain("run")),
    **dict.fromkeys(("nc", "ncat", "netcat"), plain("run", "-e", "-c", "--exec", "--sh-exec")),
    "uniq": lambda c: "write" if len(_flags(c.args)[2]) >= 2 else "read",
    "ps": _ps,
    "mkdir": _mkdir,
    "mktemp": plain("add"),
    "time": _writes_if("read", "-o", "--output", "-a", "--append"),
    "file": _writes_if("read", "-C", "--compile"),
    "ss": plain("read", "-K", "--kill"),
    "ruff": _ruff,
    "black": _formatter(("--check", "--diff")),
    "isort": _formatter(("--check", "--check-only", "--diff", "-c")),
    "rustfmt": _formatter(("--check",)),
    "gofmt": _formatter((), ("-w",)),
    "clang-format": _formatter((), ("-i",)),
    "shfmt": _formatter((), ("-w", "--write")),
    "prettier": _formatter((), ("--write", "-w")),
    "eslint": _formatter((), ("--fix",)),
    "autopep8": _formatter((), ("-i", "--in-place")),
    "yapf": _formatter((), ("-i", "--in-place")),
    "iconv": _writes_if("read", "-o", "--output"),
    "shuf": _writes_if("read", "-o", "--output"),
    "tree": _writes_if("read", "-o"),
    "man": plain("read", *_MAN_RUNS),
    "info": plain("read", "-o", "--output"),
    "rg": plain("read", "--pre", "--pre-glob", "--hostname-bin", "-z", "--search-zip"),
    "ag": plain("read", "--pager"),
    "ack": plain("read", "--pager"),
    "bat": plain("read", "--pager"),
    "dmesg": plain("read", "-C", "-c", "--clear", "-D", "-E", "-n", "--console-level"),
    "sensors": plain("read", "-s", "--set"),
    "base64": _writes_if("read", "-o", "--output"),
    "split": plain("write", "--filter"),
    **dict.fromkeys(("gcc", "g++", "cc", "c++", "clang", "clang++"), _compiler),
    # `X run CMD`: CMD is judged on its own (normalize.unwrap); X itself runs the project.
    **dict.fromkeys(("pipenv", "pdm", "hatch", "rye", "conda", "mamba", "pixi", "pipx"), _RUNS),
    "stack": plain("run"),
    "cabal": plain("run"),
    "pandoc": plain("run", "--filter", "-F", "--lua-filter", "-L"),
    "pdflatex": _no_prefix("run", "-shell-escape", "--shell-escape", "-enable-write18"),
    "xelatex": _no_prefix("run", "-shell-escape", "--shell-escape", "-enable-write18"),
    "protoc": _no_prefix("run", "--plugin"),
    "django-admin": _no_prefix("run", "-c", "--command"),
    "npx": _npx,
    "nodemon": _no_prefix("run", "--exec", "-x"),
    "elixir": _script_language("e", ("--eval",)),
    "mix": _no_prefix("run", "-e", "--eval"),
    "erl": _no_prefix("run", "-eval"),
    "ghc": _no_prefix("run", "-e"),
    "swift": _no_prefix("run", "-e"),
    "kotlinc": _no_prefix("run", "-e", "-script"),
    "tsx": _script_language("ep", ("--eval", "--print")),
    "ts-node": _script_language("ep", ("--eval", "--print")),
    "bun": _bun,
    "deno": _deno,
    "yarn": _js_package_manager,
    "pnpm": _js_package_manager,
    "rustup": _subcommands({**_all(_RUN, "update", "show", "target", "component", "default")}),
    "eval": plain("read"),  # what it runs is judged on its own
    "env": _env,
    "fd": _fd,
    "fdfind": _fd,
    "find": _find,
    "sort": _sort,
    "less": _less,
    "xxd": _xxd,
    "yq": _yq,
    "date": _date,
    "hostname": _no_operands,
    "history": _history,
    "fc": lambda c: _HISTORY,
    "set": _set,
    "export": _declare,
    "declare": _declare,
    "typeset": _declare,
    "local": _declare,
    "readonly": _declare,
    "unset": _unset,
    "hash": _hash,
    "command": _command,
    "rm": _rm,
    "tar": _tar,
    "bsdtar": _tar,
    "zip": _zip,
    "unzip": _unzip,
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "source": _source,
    ".": _source,
    "make": _make,
    "gmake": _make,
    "cmake": _cmake,
    "cargo": _cargo,
    "go": _GO,
    "npm": _NPM,
    "pip": _PIP,
    "pip3": _PIP,
    "uv": _UV,
    "poetry": _POETRY,
    "brew": _BREW,
    "apt": _APT,
    "apt-get": _APT,
    "apt-cache": _APT,
    "dnf": _APT,
    "yum": _APT,
    "terraform": _TERRAFORM,
    "tofu": _TERRAFORM,
    "kubectl": _KUBECTL,
    "helm": _HELM,
    "gem": _GEM,
    "bundle": _BUNDLE,
    "systemctl": _SYSTEMCTL,
    "journalctl": _journalctl,
    "crontab": _crontab,
    "kill": _kill,
    "ip": _ip,
    "fdisk": _partitions,
    "sfdisk": _partitions,
    "parted": _partitions,
    "blkid": plain("read"),
    "openssl": _openssl,
    "curl": _curl,
    "wget": _wget,
    "ssh": _ssh,
    "scp": _scp,
    "rsync": _rsync,
    "git": _git,
    "gh": _gh,
    "docker": _docker,
    "podman": _docker,
    "docker-compose": _docker,
    "podman-compose": _docker,
    "node": _script_language("ep", ("--eval", "--print", "--input-type")),
    "nodejs": _script_language("ep", ("--eval", "--print", "--input-type")),
    "perl": _script_language("eEx"),
    "ruby": _script_language("e"),
    "php": _script_language("rRBEF"),
    "lua": _script_language("el"),
    "luajit": _script_language("el"),
    "Rscript": _script_language("e"),
    "tclsh": _script_language(""),
    "psql": _sql_client(("-c", "--command")),
    "mysql": _sql_client(("-e", "--execute")),
    "mariadb": _sql_client(("-e", "--execute")),
    "sqlite3": _sql_client((), positional=True),
    "duckdb": _sql_client(("-c",), positional=True),
}
for _shell_name in SHELLS:
    PROGRAMS[_shell_name] = _shell

# Programs that run with other privileges or outside the sandbox: never proven harmless.
ESCAPES = frozenset(
    {"sudo", "su", "doas", "pkexec", "run0", "sudoedit", "runuser", "nsenter", "unshare"}
    | {"chroot", "systemd-run", "machinectl", "firejail", "bwrap", "setpriv", "capsh"}
    | {"lxc", "lxc-attach", "lxc-execute", "incus", "ctr", "nerdctl", "crictl", "kubectl-exec"}
    | {"systemd-nspawn", "flatpak-spawn", "setcap", "newgrp", "sg", "chsh", "passwd"}
    | {"visudo", "useradd", "usermod", "adduser", "mount", "umount", "modprobe", "insmod"}
    | {"rmmod", "sysctl", "iptables", "ip6tables", "nft", "ufw", "at", "batch", "trap"}
    | {"alias", "enable", "launchctl", "service", "screen", "tmux", "script", "expect"}
)
_SYSTEM_BIN = re.compile(r"/(?:usr/(?:local/)?)?s?bin/[^/]+")


def prove(cmd: Cmd) -> Judgement:
    """What `cmd` does when the guard knows it to be harmless, else why not."""
    if not cmd.name:  # only assignments or redirections
        return "read"
    argv0 = cmd.argv0 or cmd.name
    if "$" in argv0 or "`" in argv0:
        return _doubt("dynamic-program", "the program is computed at run time")
    if "/" in argv0 and _SYSTEM_BIN.fullmatch(argv0) is None:
        return _doubt("program-by-path", "run by path, it could be any program (a copy of rm?)")
    name = cmd.name
    if name in ESCAPES:
        return _ESCAPE
    if _PYTHON.fullmatch(name):
        return _python(cmd)
    check = PROGRAMS.get(name)
    if check is None:
        return _UNKNOWN
    known = LONG_OPTIONS.get(name)
    if known is not None and (unknown := unknown_long(cmd.args, known, name in NEGATABLE)):
        return _doubt("unknown-option", f"{unknown} is not an option of {name} the guard knows")
    return check(cmd)
