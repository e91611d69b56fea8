"""System, network and container tools: what asks the network, changes the system or
escapes the sandbox."""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.programs.base import (
    ESCAPE,
    EXECUTES,
    READ,
    RUN,
    STDIN,
    Check,
    Judgement,
    doubt,
    has_option,
    subcommand_index,
)

_GH_GROUP_READS = frozenset({"list", "view", "status", "diff", "checks", "ls", "watch"})
_GH_TOP_READS = frozenset({"search", "status", "browse", "--version", "version", "help"})


def gh(cmd: Cmd) -> Judgement:
    """GitHub's CLI: listing and viewing ask the network; anything else (create, merge,
    delete, edit, comment, api) changes what others see."""
    start = subcommand_index(cmd.args, frozenset({"-R", "--repo"}))
    if start >= len(cmd.args):
        return READ
    group, rest = cmd.args[start], cmd.args[start + 1 :]
    if group in _GH_TOP_READS:
        return RUN if group != "help" else READ
    action_at = subcommand_index(rest, frozenset({"-R", "--repo"}))
    action = rest[action_at] if action_at < len(rest) else ""
    if action in _GH_GROUP_READS and not has_option(cmd, "--web", "-w"):
        return RUN
    return "write"


def journalctl(cmd: Cmd) -> Judgement:
    mutating = (
        "--vacuum-size", "--vacuum-time", "--vacuum-files", "--rotate", "--flush",
        "--relinquish-var", "--setup-keys", "--update-catalog", "--sync",
    )  # fmt: skip
    return doubt("journal", "changes the system journal") if has_option(cmd, *mutating) else "read"


def crontab(cmd: Cmd) -> Judgement:
    letters, _, operands = cmd.options
    if letters <= {"l", "u"} and "l" in letters and len(operands) <= 1:
        return "read"
    return doubt("crontab", "changes the user's scheduled jobs (they run later, unasked)")


def kill(cmd: Cmd) -> Judgement:
    """A signal to a process (kill -9 and kill -1 have their own rules): never harmless."""
    return doubt("signals", "sends a signal that can stop a running process")


def partitions(cmd: Cmd) -> Judgement:
    """fdisk -l, parted ... print: listing a disk's partitions only reads."""
    listing = {"-l", "--list", "print", "-p", "--print"} & set(cmd.args)
    return "read" if listing else doubt("partition", "changes a disk's partition table")


def ip(cmd: Cmd) -> Judgement:
    changing = {"add", "del", "delete", "set", "flush", "change", "replace", "append", "exec"}
    return (
        doubt("network-config", "changes network settings") if changing & set(cmd.args) else "read"
    )


def openssl(cmd: Cmd) -> Judgement:
    sub = cmd.args[0] if cmd.args else ""
    known = {"rand", "version", "dgst", "x509", "req", "genrsa", "genpkey", "rsa", "pkey"}
    known |= {"s_client", "speed", "list", "ciphers", "base64", "enc", "sha256", "sha1", "md5"}
    known |= {"verify", "crl", "pkcs12", "ec", "ecparam", "passwd", "prime", "asn1parse"}
    if sub not in known:
        return doubt("subcommand", f"`openssl {sub}` is not known to be harmless")
    return "write" if "-out" in cmd.args else "read"


# --- network tools -------------------------------------------------------------------------


def curl(cmd: Cmd) -> Judgement:
    """GETs and downloads are fine; uploading a file (`-T`, `-d @file`, `-F x=@file`) or
    reading options from a config file (`-K`) may send what it should not."""
    args = cmd.args
    for i, arg in enumerate(args):
        value = args[i + 1] if i + 1 < len(args) else ""
        name, _, attached = arg.partition("=")
        if arg in ("-K", "--config") or arg.startswith("-K"):
            return doubt("curl-config", "reads curl options from a file")
        if arg in ("-T", "--upload-file") or arg.startswith("-T"):
            return doubt("upload", "uploads a local file")
        data_options = ("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode")
        if name in data_options or arg in ("-F", "--form", "--form-string"):
            payload = attached if attached and name.startswith("--") else value
            if "@" in payload or "<" in payload:
                return doubt("upload", "uploads a local file")
    writes = has_option(cmd, "-o", "--output", "-O", "--remote-name", "--output-dir", "-D")
    return "write" if writes else "run"


_SSH_OK_VALUES = frozenset({"-p", "-i", "-l", "-L", "-R", "-D", "-J", "-W", "-E", "-c", "-m"})


def ssh(cmd: Cmd) -> Judgement:
    """ssh's own options; `-o` and `-F` can name a local command (ProxyCommand)."""
    for arg in cmd.args:
        if not arg.startswith("-"):
            break
        if arg in ("-o", "-F", "-S") or arg.startswith(("-o", "-F")):
            return EXECUTES
    return "run"


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


def docker(cmd: Cmd) -> Judgement:
    """The daemon runs containers outside any sandbox, as root: only containers without
    access to the host (no mounts, no privileges, no host namespaces) are harmless."""
    start = subcommand_index(cmd.args, frozenset({"-H", "--host", "-c", "--context", "--config"}))
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
        action_at = subcommand_index(words, frozenset({"-f", "--file", "-p", "--project-name"}))
        action = words[action_at] if action_at < len(words) else ""
        if action in ("ps", "logs", "config", "ls", "images", "top", "version", "down", "stop"):
            return "read" if action not in ("down", "stop") else "write"
        return doubt("container", "compose files can mount the host and run as root")
    probe = Cmd(cmd.name, rest)
    if sub in ("run", "create", "exec", "start", "build", "buildx"):
        if has_option(probe, *_DOCKER_HOST_ACCESS) or (
            sub == "exec" and has_option(probe, "-u", "--user")
        ):
            return ESCAPE
        return "run"
    if sub in ("rm", "rmi", "stop", "kill", "restart", "pull", "tag", "rename", "pause"):
        return "write"
    if sub in ("unpause", "wait", "attach", "cp", "commit", "save", "load", "push"):
        return ESCAPE if sub == "cp" else "write"
    return doubt("subcommand", f"`{cmd.name} {sub}` is not known to be harmless")


def sql_client(sql_options: tuple[str, ...], *, positional: bool = False) -> Check:
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
            return STDIN
        return (
            "read"
            if all(_read_only_sql(t) for t in texts)
            else doubt("sql", "SQL that is not a plain query")
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
