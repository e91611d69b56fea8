"""The dashboard (Control UI): one module a section, each adding its own `/api/...` routes
and each with its view in `static/control/<section>.js`.

Which sections a caller sees is decided by `access.py` (owner-only prefixes, key scopes)
and told to the page by `GET /api/control` (`nav.py`), so the page hides what the server
would refuse.
"""

from __future__ import annotations

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
    _nav.add_routes(api, control)
    _sessions.add_routes(api, control)
    _cron.add_routes(api, control)
    _memory.add_routes(api, control)
    _personalities.add_routes(api, control)
    _skills.add_routes(api, control)
    _mcp.add_routes(api, control)
    _approvals.add_routes(api, control)
    _usage.add_routes(api, control)
    _logs.add_routes(api, control)
    _channels.add_routes(api, control)
    _keys.add_routes(api, control)
    _settings.add_routes(api, control)


__all__ = ["Control", "add_control_routes"]
