"""The dashboard's Settings section: the effective configuration, secrets masked, where each
value came from; edits as a schema form written back with comments kept; seam doctor's
checks.

Every request reads `config.toml` again (settings_view.py), so what `seam` commands or an
editor changed shows at once; a save is seen by every `seam` command started after it,
while a running `seam serve` keeps the settings it started with until it is restarted
(the answer to a save says so, and the page shows it).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web.control import doctor as _doctor
from seam.apps.web.control.deps import Control
from seam.apps.web.control.settings_view import RESTART, settings_body
from seam.apps.web.control.settings_write import apply_patch
from seam.apps.web.errors import ApiError
from seam.wiring.settings import ConfigFile

MAX_VALUES = 200


class SettingsPatch(BaseModel):
    """`PATCH /api/settings`: `{"values": {"section.key": value, ...}}`; `null` removes the
    key from the file (its default again)."""

    model_config = ConfigDict(extra="forbid")

    values: dict[str, Any] = Field(max_length=MAX_VALUES)


def add_routes(api: APIRouter, control: Control) -> None:
    """`/api/settings` and `/api/doctor` (both the owner's alone: access.py)."""

    @api.get("/settings", tags=["settings"])
    async def show_settings() -> dict[str, Any]:
        """The configuration in effect (config.toml read now, and the environment), every
        secret masked, each value with its source: default, file or environment."""
        settings = control.need_settings()
        return await asyncio.to_thread(settings_body, settings)

    @api.get("/settings/schema", tags=["settings"])
    async def settings_schema() -> dict[str, Any]:
        """The configuration's JSON Schema (the pydantic models config.toml is read with)."""
        return ConfigFile.model_json_schema()

    @api.patch("/settings", tags=["settings"])
    async def patch_settings(body: SettingsPatch) -> dict[str, Any]:
        """Write `section.key` values into config.toml, comments and order kept; all or
        nothing (400 naming the key). A running seam serve uses them after a restart."""
        settings = control.need_settings()
        if not body.values:
            raise ApiError(400, "values: give at least one section.key to change")
        written = await asyncio.to_thread(apply_patch, settings, body.values)
        shown = await asyncio.to_thread(settings_body, settings)
        return {**shown, "written": written, "restart": RESTART}

    _doctor.add_routes(api, control)


__all__ = ["SettingsPatch", "add_routes"]
