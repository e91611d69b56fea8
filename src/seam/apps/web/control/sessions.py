"""The dashboard's Sessions section: search (full text), rename, delete, export (markdown,
JSON), fork, undo, tokens and cost of each.
"""

from __future__ import annotations

from fastapi import APIRouter

from seam.apps.web.control.deps import Control


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/...` routes (none yet)."""


__all__ = ["add_routes"]
