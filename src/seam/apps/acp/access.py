"""Who the editor is to the agent, and what only the owner may do over ACP.

`seam acp` speaks for whoever started it on stdin/stdout. By default that is the machine's
owner (the default tenant, as `seam chat` and the login cookie are): the editor's sessions
are the owner's, and it keeps every owner's right (lasting approval answers, its own MCP
servers added at run time).

`seam acp --tenant T` runs the editor's sessions as tenant T instead: the way to hand an
editor to someone else on the owner's machine (an ssh forced command,
`command="seam acp --tenant bob"`, or a shared launcher). The same rule as the web API's
scoped keys (`apps/web/access.py`, `backend.py`) then holds: its sessions are T's (its
session ids resolve in T only, so it never loads the owner's), and it cannot loosen safety
for anyone. Each refusal is one line:

- MCP servers passed in `session/new` / `session/load` are refused (MCP servers are the
  owner's to add; the session is not opened);
- permission requests offer "Allow once" and "Reject" only, and a lasting answer the
  editor sends anyway ("allow_always", "reject_always") is taken as a denial, with the
  reason shown in the session;
- `session/set_mode` is refused (the agent has no modes a tenant may switch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import PermissionOption

from seam.apps.acp.mapping import PERMISSION_OPTIONS
from seam.contracts.names import clean_name

# The permission answers that change the rules for every session.
LASTING_OPTIONS = frozenset({"allow_always", "reject_always"})
LASTING_REFUSAL = (
    "Only the owner answers 'always': it changes the rules for everyone; this call is denied."
)


def tenant_problem(tenant: str) -> str | None:
    """Why `tenant` cannot name a tenant (`--tenant`), or None."""
    if not tenant or clean_name(tenant) != tenant or tenant in (".", "..") or "/" in tenant:
        return f"--tenant {tenant!r} is not a tenant name: use letters, digits, - and _"
    return None


class EditorAccess:
    """The owner (`tenant` None), or tenant `tenant`, and what each may do."""

    def __init__(self, tenant: str | None = None) -> None:
        self.tenant = tenant

    @property
    def owner(self) -> bool:
        return self.tenant is None

    def mcp_refusal(self, servers: Sequence[Any] | None) -> str | None:
        if self.owner or not servers:
            return None
        return (
            f"MCP servers are the owner's to add: this editor runs as tenant {self.tenant!r}; "
            "remove them from the editor's settings for this agent"
        )

    def permission_options(self) -> list[PermissionOption]:
        if self.owner:
            return list(PERMISSION_OPTIONS)
        return [o for o in PERMISSION_OPTIONS if o.option_id not in LASTING_OPTIONS]

    def answer_refusal(self, option_id: str | None) -> str | None:
        """Why the chosen permission answer is refused (it is then a denial), or None."""
        if self.owner or option_id not in LASTING_OPTIONS:
            return None
        return LASTING_REFUSAL

    def mode_refusal(self) -> str | None:
        if self.owner:
            return None
        return f"session modes are the owner's to set: this editor runs as tenant {self.tenant!r}"


__all__ = ["LASTING_OPTIONS", "LASTING_REFUSAL", "EditorAccess", "tenant_problem"]
