"""The dashboard's MCP section: each server's state (connected, failed with its reason), its
tools and their approval settings.
"""

from __future__ import annotations

from fastapi import APIRouter

from seam.apps.web.control.deps import Control


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/...` routes (none yet)."""


__all__ = ["add_routes"]
