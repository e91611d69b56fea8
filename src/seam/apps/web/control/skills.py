"""The dashboard's Skills section: installed skills, trusted or not (trust from here), each
one's SKILL.md.

Owner-only (`access.OWNER_PREFIXES`). Every request reads the skill folders, the trust file
and `config.toml`'s `[skills] dirs` afresh, so what `seam skills trust` did a moment ago
shows, and a trust given here is what the CLI and the running agent see next. Trusting is
`seam skills trust`'s own function, at the folder's content now.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from fastapi import Path as PathParam

from seam.apps.cli.skills import entry_named, show_text, trust_paths
from seam.apps.web.control.deps import Control
from seam.apps.web.control.mcp_config import fresh_settings
from seam.apps.web.errors import ApiError
from seam.wiring.skills import SkillError, UnknownSkill, catalog_for, skill_files, trust_store

if TYPE_CHECKING:
    from seam.wiring.settings import Settings
    from seam.wiring.skills import Entry

# One trust at a time: the trust file is read, changed and written back whole.
_TRUSTING = threading.Lock()
SKILL_NAME = PathParam(min_length=1, max_length=64, description="The skill's name.")


def entry_view(entry: Entry, settings: Settings) -> dict[str, Any]:
    """One skill found: where, offered or why not, and trusted or not (only the working
    directory's skills need trusting; the home's and `[skills] dirs` are the owner's)."""
    needs_trust = entry.origin == "project"
    return {
        "name": entry.name,
        "description": entry.skill.description if entry.skill else "",
        "folder": str(entry.folder),
        "origin": entry.origin,
        "offered": entry.offered,
        "problem": entry.problem,
        "needs_trust": needs_trust,
        "trusted": not needs_trust or trust_store(settings).trusted(entry.folder),
    }


def list_skills(settings: Settings) -> dict[str, Any]:
    catalog = catalog_for(settings)
    return {
        "skills": [entry_view(entry, settings) for entry in catalog.entries()],
        "looked_in": [{"path": str(d.path), "origin": d.origin} for d in catalog.dirs],
    }


def one_skill(name: str, settings: Settings) -> dict[str, Any]:
    """The skill `seam skills show NAME` shows, with its text (`text`), its body and its
    files; 404 when there is no such skill, 409 when none of that name can be read."""
    try:
        entry = entry_named(name, settings)
        text = show_text(name, settings)
    except UnknownSkill as exc:
        raise ApiError(404, str(exc)) from None
    except SkillError as exc:
        raise ApiError(409, str(exc)) from None
    skill = entry.skill
    view = entry_view(entry, settings)
    view.update(
        body=skill.body if skill else "",
        files=skill_files(entry.folder),
        text=text,
    )
    return view


def trust_named(name: str, settings: Settings) -> dict[str, Any]:
    """`seam skills trust FOLDER` for the working directory's skill `name`."""
    entries = [e for e in catalog_for(settings).entries() if e.name == name]
    mine = [e for e in entries if e.origin == "project"]
    if not mine:
        if entries:
            where = entries[0].origin
            raise ApiError(409, f"skill {name!r} is in the {where} folder: it needs no trust")
        raise ApiError(404, f"no skill named {name!r} in the working directory")
    try:
        with _TRUSTING:
            lines = [line for entry in mine for line in trust_paths(entry.folder, settings)]
    except (SkillError, OSError) as exc:
        raise ApiError(409, f"cannot trust {name!r}: {exc}") from None
    fresh = [e for e in catalog_for(settings).entries() if e.origin == "project" and e.name == name]
    return {"trusted": lines, "skills": [entry_view(e, settings) for e in fresh]}


def add_routes(api: APIRouter, control: Control) -> None:
    """`GET /api/skills`, `GET /api/skills/{name}`, `POST /api/skills/{name}/trust`."""

    @api.get("/skills")
    async def skills() -> dict[str, Any]:
        """Every skill found (the working directory's `.agents/skills`, `$SEAM_HOME/skills`,
        `[skills] dirs`): name, description, folder, whether it is offered and why not,
        and whether it is trusted."""
        settings = fresh_settings(control)
        return await asyncio.to_thread(list_skills, settings)

    @api.get("/skills/{name}")
    async def skill(name: str = SKILL_NAME) -> dict[str, Any]:
        """One skill: what `seam skills show NAME` prints (`text`), its SKILL.md body and
        its files. An untrusted skill is shown too, so it can be reviewed before trusting."""
        settings = fresh_settings(control)
        return await asyncio.to_thread(one_skill, name, settings)

    @api.post("/skills/{name}/trust")
    async def trust_skill(name: str = SKILL_NAME) -> dict[str, Any]:
        """Trust the working directory's skill `name` at its current content, as `seam
        skills trust FOLDER` does (a later change to its files untrusts it again)."""
        settings = fresh_settings(control)
        return await asyncio.to_thread(trust_named, name, settings)


__all__ = ["add_routes"]
