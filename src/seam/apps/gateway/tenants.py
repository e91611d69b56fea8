"""Who a chat user is to the agent: the owner, or a tenant of their own.

The owner is whoever the config lets in by name: the `allow` list of the user's platform,
and the user of the `[gateway] owner` chat when that is a private chat on it. Their chats
run as the owner's tenant (the one `seam chat`, the login cookie and the CLI use), with
the owner's memory and personalities.

Everyone else got in by pairing, and a paired stranger is never the owner: their chats run
as a tenant of their own, named from the platform and their user id (`telegram-12345`,
control characters dropped, no path separators), so their turns get that tenant's memory
and personality overrides (`$SEAM_HOME/tenants/<tenant>/`), and a web key made with
`seam keys create NAME --tenant telegram-12345` reaches the same tenant. The name stays
the same across restarts, renames and re-pairing, so a returning user finds their own.

Sessions of paired users from before this rule were stored under the owner's tenant. They
are left where they are: a turn already admitted there is still driven and answered
(turns are driven by their stored key), and the owner can read them with `seam sessions`;
the user's next message starts their tenant's own conversation in that chat.
"""

from __future__ import annotations

import re

from seam.contracts.names import clean_name
from seam.wiring.gateway_settings import GatewaySection
from seam.wiring.web import tenant_session_key, tenant_session_name

# Characters a tenant name never carries (it names a folder under `tenants/`).
_UNSAFE = re.compile(r"[\s/\\]+")


def chat_tenant(platform: str, user_id: str) -> str:
    """The tenant of a paired user: `<platform>-<user id>`, safe to print and to use as a
    folder name."""
    name = _UNSAFE.sub("_", clean_name(f"{platform}-{user_id}"))
    return name.strip(".") or f"{platform}-user"


class ChatTenants:
    """The owner's tenant and the rule above, over the `[gateway]` section."""

    def __init__(self, section: GatewaySection, owner_tenant: str, harness: str) -> None:
        self.section = section
        self.owner_tenant = owner_tenant
        self.harness = harness

    def is_owner(self, platform: str, user_id: str) -> bool:
        """Whether the config names this user (its `allow` list or the owner's chat)."""
        return user_id in self.section.allowed(platform)

    def tenant_of(self, platform: str, user_id: str) -> str:
        if self.is_owner(platform, user_id):
            return self.owner_tenant
        return chat_tenant(platform, user_id)

    def key(self, tenant: str, name: str) -> str:
        """The durable key of `tenant`'s session `name`."""
        return tenant_session_key(tenant, self.harness, name)

    def owners_session(self, key: str) -> bool:
        """Whether a session key is one of the owner's (not a paired user's)."""
        return tenant_session_name(self.owner_tenant, key) is not None


__all__ = ["ChatTenants", "chat_tenant"]
