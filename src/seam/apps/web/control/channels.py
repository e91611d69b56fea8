"""The dashboard's Channels section: each gateway platform's state, pending pairing requests
(approve, deny), paired users (revoke).
"""

from __future__ import annotations

from fastapi import APIRouter

from seam.apps.web.control.deps import Control


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/...` routes (none yet)."""


__all__ = ["add_routes"]
