"""The dashboard (Control UI): one module a section, each adding its own `/api/...` routes
and each with its view in `static/control/<section>.js`.

Which sections a caller sees is decided by `access.py` (owner-only prefixes, key scopes)
and told to the page by `GET /api/control` (`nav.py`), so the page hides what the server
would refuse.
"""

from __future__ import annotations

from types import ModuleType

from fastapi import APIRouter

from seam.apps.web.control import approvals as _approvals
from seam.apps.web.control import channels as _channels
from seam.apps.web.control import cron as _cron
from seam.apps.web.control import keys as _keys
from seam.apps.web.control import logs as _logs
from seam.apps.web.control import mcp as _mcp
from seam.apps.web.control import memory as _memory
from seam.apps.web.control import nav as _nav
from seam.apps.web.control import personalities as _personalities
from seam.apps.web.control import sessions as _sessions
from seam.apps.web.control import settings as _settings
from seam.apps.web.control import skills as _skills
from seam.apps.web.control import usage as _usage
from seam.apps.web.control.deps import Control


def add_control_routes(api: APIRouter, control: Control) -> None:
    """Every section's routes, on the app's `/api` router."""
    sections: tuple[ModuleType, ...] = (_nav, _sessions, _cron, _memory, _personalities)
    sections += (_skills, _mcp, _approvals, _usage, _logs, _channels, _keys, _settings)
    for section in sections:  # the navigation bar's order
        section.add_routes(api, control)


__all__ = ["Control", "add_control_routes"]
