"""The dashboard's Cron section: jobs with next run and last result; add with a preview of the
next five runs, edit, pause, resume, run now, delete; each job's runs.
"""

from __future__ import annotations

from fastapi import APIRouter

from seam.apps.web.control.deps import Control


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/...` routes (none yet)."""


__all__ = ["add_routes"]
