"""The dashboard's Settings section: the effective configuration, secrets masked, where each
value came from; edits as a schema form written back with comments kept; seam doctor's
checks.
"""

from __future__ import annotations

from fastapi import APIRouter

from seam.apps.web.control.deps import Control


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/...` routes (none yet)."""


__all__ = ["add_routes"]
