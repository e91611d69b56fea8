"""What the dashboard (`apps/web/control/`) reads beside the runtime, built from the
settings: the remembered approvals file the command guard uses, and the store-side
helpers a surface may not import from core directly (the approvals waiting across
sessions, a tenant's key prefix). Each call builds afresh, so what the page shows is
what the file and the store hold now."""

from __future__ import annotations

from seam.core.approvals_waiting import WaitingApproval, waiting_approvals
from seam.core.identity import parse_session_storage_key, tenant_key_prefix
from seam.plugins.guardrail.approvals import ApprovalCache, ApprovalFileError
from seam.wiring.guard import APPROVALS_FILE
from seam.wiring.settings import Settings


def remembered_approvals(settings: Settings) -> ApprovalCache:
    """The "always" and "always deny" answers as every gate of this home reads them
    (`$SEAM_HOME/approvals.json`). ApprovalFileError when the file cannot be read."""
    return ApprovalCache(settings.home / APPROVALS_FILE)


__all__ = [
    "ApprovalCache",
    "ApprovalFileError",
    "WaitingApproval",
    "parse_session_storage_key",
    "remembered_approvals",
    "tenant_key_prefix",
    "waiting_approvals",
]
