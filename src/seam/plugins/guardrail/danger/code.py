"""The tests of the dangerous patterns over code: downloads or decoded text run as
programs, secrets sent away, reverse shells, destructive inline code and SQL."""

from __future__ import annotations

import re
from collections.abc import Iterable

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.normalize import (
    SHELLS,
    is_interpreter,
    reads_program_from_stdin,
    script_operand,
)

DOWNLOADERS = frozenset(
    {"curl", "wget", "fetch", "http", "https", "xh", "aria2c", "lwp-request", "lynx", "nc"}
    | {"ncat", "netcat", "socat", "ftp", "tftp"}
)
DOWNLOAD_IN_TEXT = re.compile(
    r"(?:^|[\s(|;&`])(?:curl|wget|fetch|https?|xh|aria2c|lwp-request|nc|ncat|netcat|socat)\s"
)
DECODE_FLAGS = frozenset({"-d", "-D", "--decode", "-r", "--reverse"})
DECOMPRESSORS = frozenset({"gunzip", "zcat", "bzcat", "xzcat", "zstdcat", "unxz", "uudecode"})
ECHOES = frozenset({"echo", "printf"})


def is_decoder(cmd: Cmd) -> bool:
    if cmd.name in DECOMPRESSORS or cmd.name == "rev":
        return True
    if cmd.name in ("base64", "base32", "basenc", "xxd", "openssl", "gzip", "bzip2", "xz", "zstd"):
        letters, longs, _ = cmd.options
        return not DECODE_FLAGS.isdisjoint({*(f"-{c}" for c in letters), *longs})
    return False


def runs_stdin(cmd: Cmd) -> bool:
    return bool(cmd.upstream) and reads_program_from_stdin(cmd.name, cmd.args)


def download_into_interpreter(cmd: Cmd) -> bool:
    if runs_stdin(cmd) and any(u.name in DOWNLOADERS for u in cmd.upstream):
        return True
    if is_interpreter(cmd.name) and any(
        a.startswith("<(") and DOWNLOAD_IN_TEXT.search(a[2:]) for a in cmd.args
    ):
        return True
    # A command whose very name comes from a download: `$(curl -s x)`, `eval "$(wget ...)"`.
    return is_dynamic(cmd) and DOWNLOAD_IN_TEXT.search(cmd.name) is not None


def decode_into_interpreter(cmd: Cmd) -> bool:
    return runs_stdin(cmd) and any(is_decoder(u) for u in cmd.upstream)


def pipe_into_shell(cmd: Cmd) -> bool:
    """Anything but literal text (echo/printf, classified on its own) piped into a shell."""
    if not runs_stdin(cmd) or (cmd.name not in SHELLS and cmd.name not in ("source", ".")):
        return False
    return any(u.name not in ECHOES for u in cmd.upstream)


def is_dynamic(cmd: Cmd) -> bool:
    return cmd.name.startswith(("$", "`")) or "$(" in cmd.name


def run_downloaded(cmd: Cmd) -> bool:
    """`curl -o i.sh URL && bash i.sh` (or `./i.sh`): a pipe into a shell, in two steps."""
    if not cmd.downloaded:
        return False
    if "/" in cmd.argv0 and cmd.path(cmd.argv0) in cmd.downloaded:
        return True
    script = script_operand(cmd.name, cmd.args)
    return script is not None and cmd.path(script) in cmd.downloaded


SECRET = re.compile(
    r"\.ssh/|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|\.netrc\b|\.pgpass\b|/etc/shadow"
    r"|\.gnupg/|\.git-credentials|\.docker/config\.json|\.kube/config|(?:^|[/@])\.env(?:$|\.)"
)
NETWORK_SENDERS = frozenset({"scp", "rsync", "sftp"}) | DOWNLOADERS


# Options whose value names a key used to log in, not data being sent.
LOGIN_OPTIONS = {
    "scp": frozenset({"-i", "-F", "-o", "-S"}),
    "sftp": frozenset({"-i", "-F", "-o", "-S"}),
    "rsync": frozenset({"-e", "--rsh"}),
    "curl": frozenset({"--key", "--cert", "-E", "--cacert"}),
}


def secret_exfil(cmd: Cmd) -> bool:
    args = cmd.args
    login = LOGIN_OPTIONS.get(cmd.name, frozenset())
    for i, arg in enumerate(args):
        if (i and args[i - 1] in login) or arg.partition("=")[0] in login:
            continue
        if SECRET.search(arg):
            return True
    return any(SECRET.search(a) for u in cmd.upstream for a in u.args)


def reverse_shell(cmd: Cmd) -> bool:
    if any(r.target.startswith(("/dev/tcp/", "/dev/udp/")) for r in cmd.redirects):
        return True
    if cmd.name in ("nc", "ncat", "netcat"):
        return any(a in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for a in cmd.args)
    if cmd.name == "socat":
        return any(a.lower().startswith(("exec:", "system:")) for a in cmd.args)
    return False


DESTRUCTIVE_CODE = re.compile(
    r"rmtree|\b(?:unlink|rmdir|removedirs)\b|os\.(?:remove|system|popen|exec\w*|spawn\w*)"
    r"|subprocess|\b(?:exec|eval|system|popen)\s*[(\"']|rmSync|rimraf|unlinkSync|child_process"
    r"|FileUtils\.rm|File\.delete|Remove-Item|\bpty\.spawn|open\s*\([^)]*,\s*['\"][wax]"
)
# In perl, ruby and php code, backticks and %x(...) run a shell command.
SHELL_IN_CODE = re.compile(r"`|%x[({\[]|\bqx\s*[({/]")
CODE_RUNNERS = re.compile(
    r"(?:python|pypy)[\d.]*|perl[\d.]*|ruby[\d.]*|node(?:js)?|php[\d.]*|[gmn]?awk|deno|bun"
)


def inline_code(cmd: Cmd) -> bool:
    if CODE_RUNNERS.fullmatch(cmd.name) is None:
        return False
    if any(DESTRUCTIVE_CODE.search(a) for a in cmd.args):
        return True
    return cmd.name.startswith(("perl", "ruby", "php")) and any(
        SHELL_IN_CODE.search(a) for a in cmd.args
    )


SQL = re.compile(
    r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA|USER|ROLE)\b|\bTRUNCATE\s+(?:TABLE\s+)?[\w.\"`\[]"
    r"|\bDELETE\s+FROM\s+[\w.\"`\[\]]+\s*(?:;|$|\))|\bFLUSH(?:ALL|DB)\b|\.drop(?:Database)?\(\)",
    re.IGNORECASE,
)


SQL_CLIENTS = frozenset(
    {"psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "clickhouse-client", "cockroach"}
    | {"duckdb", "mongo", "mongosh", "redis-cli", "cqlsh", "snowsql", "bq"}
)


def destructive_sql(cmd: Cmd) -> bool:
    """Destructive SQL anywhere in the arguments; in the input only of a database client
    (a here-document written to a file with `cat` is just text)."""
    if cmd.name in ("dropdb", "dropuser"):
        return True
    if any(SQL.search(a) for a in cmd.args):
        return True
    if cmd.name not in SQL_CLIENTS:
        return False
    texts: Iterable[str] = (r.body or r.target for r in cmd.redirects if r.op.startswith("<<"))
    return any(SQL.search(t) for t in texts)
