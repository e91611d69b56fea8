"""The dashboard's Personalities section: each personality's SOUL.md and its settings as a form
validated like config.toml.
"""

from __future__ import annotations

from fastapi import APIRouter

from seam.apps.web.control.deps import Control


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/...` routes (none yet)."""


__all__ = ["add_routes"]
