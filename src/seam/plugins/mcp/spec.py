"""`ServerSpec`: one configured MCP server, as wiring resolved it (env expanded)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal

# always: every tool asks; never: none does; auto: a tool asks unless the server marks it
# read-only or explicitly not destructive (MCP's `destructiveHint` defaults to true).
Approval = Literal["always", "never", "auto"]

DEFAULT_CONNECT_TIMEOUT = 60.0
DEFAULT_CALL_TIMEOUT = 120.0


@dataclass(frozen=True)
class ServerSpec:
    """`command` (stdio: argv) or `url` (Streamable HTTP). `env` is the whole of what the
    child gets beyond the SDK's minimal set (PATH, HOME, USER, SHELL, TERM, LOGNAME);
    `problem` is a configuration error found while resolving it (an unset `$VAR`): the
    server then reports it instead of starting."""

    name: str
    command: tuple[str, ...] = ()
    url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    approval: Approval = "auto"
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    cwd: str | None = None
    errlog: str | None = None  # file the stdio child's stderr is appended to
    problem: str = ""
    # None: the owner configured it, it goes where it says. A tuple (servers added at run
    # time, by an editor over ACP): its URL must be a public address or on this list.
    allow_private: tuple[str, ...] | None = None

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    def offers(self, tool: str) -> bool:
        """Whether the server's tool passes `tools = { allow, deny }` (an empty allow
        list allows everything; deny wins)."""
        if any(fnmatchcase(tool, pattern) for pattern in self.deny):
            return False
        return not self.allow or any(fnmatchcase(tool, pattern) for pattern in self.allow)
