"""The dashboard's Personalities section: each personality's SOUL.md and its settings as a form
validated like config.toml.

The list and the SOUL.md/config.toml text are the existing routes (`GET /api/personalities`,
`GET/PUT /api/personalities/{pid}` in app.py). This module adds the settings form: its JSON
Schema (the pydantic model's, `personality_settings.py`), the caller's current values,
which keys the caller may set, and the limit SOUL.md is counted against; and the write
of the form's values into config.toml. Files are read fresh on every request, so an edit
by hand or by the CLI shows at once, and the page's edits are what the next turn loads.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict

from seam.apps.web.auth import Principal
from seam.apps.web.control import personality_settings as form
from seam.apps.web.control import personality_store as store
from seam.apps.web.control.deps import Control


class SettingsEdit(BaseModel):
    """The form's values: the keys to set (null: remove the key so its default applies);
    keys left out keep what the file says."""

    model_config = ConfigDict(extra="forbid")
    values: dict[str, Any]


def settings_answer(control: Control, who: Principal, pid: str) -> dict[str, Any]:
    """What the settings form shows for `pid` to this caller."""
    files = store.files_of(control.backend, who, pid)
    schema = form.settings_schema()
    return {
        "id": pid,
        "tenant": who.tenant if files.tenant else None,
        "schema": schema,
        "values": form.current_values(files.config),
        "effective": store.effective(control.backend, pid),
        "editable": store.editable_keys(who, list(schema["properties"])),
        "soul": {"chars": len(files.soul), "limit": form.SOUL_LIMIT},
        "stored_in_files": files.folder is not None,
    }


def add_routes(api: APIRouter, control: Control) -> None:
    @api.get("/personalities/{pid}/settings", tags=["control"])
    async def personality_settings(request: Request, pid: str) -> dict[str, Any]:
        """A personality's settings form: the JSON Schema of its config.toml, the values
        the caller's file sets (a tenant: its own override), the values in effect, the
        keys the caller may set, and SOUL.md's characters used of its limit."""
        return settings_answer(control, request.state.principal, pid)

    @api.put("/personalities/{pid}/settings", tags=["control"])
    async def put_personality_settings(
        request: Request, pid: str, body: SettingsEdit
    ) -> dict[str, Any]:
        """Set a personality's settings in its config.toml (comments kept): checked by the
        schema (400 naming the field) and by loading the file as a start-up would, so a
        refused edit writes nothing. A tenant sets only its own override, never a safety
        setting (403 naming the key)."""
        who: Principal = request.state.principal
        edit = form.checked(body.values)
        files = store.files_of(control.backend, who, pid)
        store.save_config(control.backend, files, form.merged(files.config, edit))
        return settings_answer(control, who, pid)


__all__ = ["SettingsEdit", "add_routes", "settings_answer"]
