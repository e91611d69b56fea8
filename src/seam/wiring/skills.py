"""Agent Skills as the settings describe them: where skills are looked for, the trust
file, the injection scanner, and the text of a `/<skill-name>` turn.

Precedence: `<working dir>/.agents/skills` (untrusted until `seam skills trust PATH`),
`$SEAM_HOME/skills` (where `skill_write` drafts), then each of `[skills] dirs`. Surfaces
use the functions here, never the plugin; what `seam skills` prints is apps/cli/skills.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sandbox import SKILLS_MOUNT
from seam.plugins.guardrail.skill_runs import SkillPlaces
from seam.plugins.safety.injection import scan
from seam.plugins.skills.catalog import Entry, NoticeText, SkillCatalog, SkillDir, UnknownSkill
from seam.plugins.skills.skill import SKILL_FILE, SkillError
from seam.plugins.skills.tools import render_body, skill_files
from seam.plugins.skills.trust import TrustStore
from seam.wiring.default_tools import DefaultGets
from seam.wiring.settings import Settings

PROJECT_SKILLS = Path(".agents") / "skills"
TRUST_FILE = "skills-trust.json"
__all__ = [
    "SKILL_FILE",
    "Entry",
    "SkillError",
    "UnknownSkill",
    "build_skills",
    "catalog_for",
    "render_body",
    "skill_files",
    "skill_turn_text",
    "trust_store",
]
SKILL_TOOLS = ("skill_view", "skill_write")


def injection_kinds(text: str) -> list[str]:
    return [finding.kind for finding in scan(text)]


def skill_dirs(settings: Settings, working_dir: Path | None = None) -> list[SkillDir]:
    cwd = working_dir or settings.working_dir
    dirs = [SkillDir(cwd / PROJECT_SKILLS, "project"), SkillDir(settings.home / "skills", "home")]
    for raw in settings.config.skills.dirs:
        path = Path(raw).expanduser()
        dirs.append(SkillDir(path if path.is_absolute() else settings.home / path, "config"))
    return dirs


def build_skills(settings: Settings, working_dir: Path | None = None) -> SkillCatalog:
    return SkillCatalog(
        skill_dirs(settings, working_dir),
        trust_store(settings),
        scanner=injection_kinds,
        index_chars=settings.config.skills.index_chars,
        home_dir=settings.home / "skills",
        project=PROJECT_SKILLS,
    )


def trusted_skill_folders(settings: Settings) -> Callable[[str], dict[str, str]]:
    """`{name: folder}` of the skills offered to a session working in a directory (the
    trusted ones): what the sandbox shows read-only at `/skills/<name>`. Asked before each
    command, so it reads trust and content as they are then; an unreadable folder shows
    no skill."""
    catalog = build_skills(settings)

    def folders(working_dir: str) -> dict[str, str]:
        try:
            return {s.name: str(s.path) for s in catalog.at(working_dir).offered()}
        except OSError:
            return {}

    return folders


def skill_places(settings: Settings) -> SkillPlaces:
    """Where skills live and which are trusted, as the guard reads commands: a script of a
    skill offered in the session's working directory (at its folder or at the sandbox's
    `/skills/<name>`) runs unasked, one of any other skill asks."""
    catalog = build_skills(settings)
    roots = [SKILLS_MOUNT, *(str(d.path) for d in catalog.dirs if d.origin != "project")]

    def trusted(cwd: str | None) -> list[str]:
        seen = catalog.at(cwd or settings.working_dir)
        folders: list[str] = []
        for skill in seen.offered():
            folders += (str(skill.path), os.path.realpath(skill.path))
            folders.append(f"{SKILLS_MOUNT}/{skill.name}")
        return folders

    return SkillPlaces(tuple(roots), PROJECT_SKILLS.as_posix(), trusted)


def skills_index(catalog: SkillCatalog) -> Any:
    """The context builder's `skills` callable: the index for a session's working
    directory, read off the event loop; a failure to read leaves the index out rather
    than failing the turn."""

    async def index(working_dir: str | None = None) -> tuple[str, Sequence[NoticeText]]:
        seen = catalog if working_dir is None else catalog.at(working_dir)
        try:
            return await asyncio.to_thread(seen.index)
        except Exception as exc:
            return "", (("skills", f"skills could not be read: {exc}"),)

    return index


def default_gets_skills(inner: PersonalityRegistry) -> DefaultGets:
    """The default personality gets `skill_view` and `skill_write`."""
    return DefaultGets(inner, SKILL_TOOLS)


async def offer_skills_in(runtime: Any, working_dir: str) -> None:
    """Look again (off the event loop) for the skills of a directory a session starts
    working in: its sessions get the skill tools when one is offered there, and only
    then (`SkillCatalog.has_skills`, which the tools' factories ask)."""
    catalog: SkillCatalog | None = getattr(runtime, "skills", None)
    if catalog is None:
        return
    with contextlib.suppress(OSError):
        await asyncio.to_thread(catalog.at(working_dir).offered)


# -- what surfaces use --


def catalog_for(settings: Settings | None) -> SkillCatalog:
    """The skills the settings describe (None: the environment's settings)."""
    if settings is None:
        from seam.wiring.settings import load_settings

        settings = load_settings()
    return build_skills(settings)


def trust_store(settings: Settings) -> TrustStore:
    """`$SEAM_HOME/skills-trust.json`: the working-directory skills trusted, by content."""
    return TrustStore(settings.home / TRUST_FILE)


def skill_turn_text(
    settings: Settings | None, name: str, text: str, working_dir: Path | None = None
) -> str:
    """The message of a `/<skill-name> ...` turn: the skill's body, then the person's
    text; raises SkillError when that skill is not offered (in `working_dir`, default the
    settings' own)."""
    catalog = (
        catalog_for(settings) if working_dir is None else catalog_for(settings).at(working_dir)
    )
    skill = catalog.get(name)
    ask = text.strip() or f"Follow the {skill.name} skill."
    return f'<skill name="{skill.name}">\n{render_body(skill)}\n</skill>\n\n{ask}'


def skill_commands(settings: Settings | None, working_dir: Path) -> list[tuple[str, str]]:
    """(name, description) of each skill offered in `working_dir`: the `/<skill-name>`
    commands an editor lists (ACP's available commands)."""
    return [(s.name, s.description) for s in catalog_for(settings).at(working_dir).offered()]
