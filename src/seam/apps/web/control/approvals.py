"""The dashboard's Approvals section: pending approvals across sessions; the remembered always-
allow and always-deny lists, with removal.
"""

from __future__ import annotations

from fastapi import APIRouter

from seam.apps.web.control.deps import Control


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/...` routes (none yet)."""


__all__ = ["add_routes"]
