"""Where each tenant's own files live (`$SEAM_HOME/tenants/<T>/`), and the parts that
serve them to the tenant's turns: its memory and its personality overrides.

The owner is the default tenant (`local`): the CLI, the gateways, cron, and the web's
login cookie and owner keys all run its sessions, which keep the owner's memory and
personalities exactly as before.
"""

from __future__ import annotations

from pathlib import Path

from seam.core.personalities import TenantPersonalities
from seam.plugins.personalities.tenant import TenantOverrideFiles
from seam.wiring.settings import Settings

TENANTS_DIR = "tenants"
OWNER_TENANT = "local"  # `web_keys.DEFAULT_TENANT` is this one


def tenant_dir(tenants: Path, tenant: str) -> Path | None:
    """`tenants/<tenant>`, or None when the name would leave the folder."""
    if tenant in ("", ".", ".."):
        return None
    folder = (tenants / tenant).resolve()
    return folder if folder.parent == tenants.resolve() else None


def personality_overlay(settings: Settings) -> TenantPersonalities:
    """Each tenant's overrides of the owner's personalities, for its own sessions."""
    tenants = settings.home / TENANTS_DIR

    def overrides_of(tenant: str) -> Path | None:
        folder = tenant_dir(tenants, tenant)
        return None if folder is None else folder / "personalities"

    return TenantPersonalities(OWNER_TENANT, TenantOverrideFiles(overrides_of))


__all__ = ["OWNER_TENANT", "TENANTS_DIR", "personality_overlay", "tenant_dir"]
