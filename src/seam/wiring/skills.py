"""Agent Skills as the settings describe them: where skills are looked for, the trust
file, the injection scanner, and what surfaces show (`seam skills`, `/skills`,
`/<skill-name>`).

Precedence: `<working dir>/.agents/skills` (untrusted until `seam skills trust PATH`),
`$SEAM_HOME/skills` (where `skill_write` drafts), then each of `[skills] dirs`. Surfaces
use the functions here, never the plugin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seam.contracts.personality import PersonalityRegistry
from seam.plugins.safety.injection import scan
from seam.plugins.skills.catalog import Entry, NoticeText, SkillCatalog, SkillDir, UnknownSkill
from seam.plugins.skills.skill import SKILL_FILE, SkillError
from seam.plugins.skills.tools import render_body
from seam.plugins.skills.trust import TrustStore
from seam.wiring.default_tools import DefaultGets
from seam.wiring.settings import Settings

PROJECT_SKILLS = Path(".agents") / "skills"
TRUST_FILE = "skills-trust.json"
__all__ = ["SkillError", "UnknownSkill", "build_skills", "list_lines", "show_text", "trust_paths"]
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
        TrustStore(settings.home / TRUST_FILE),
        scanner=injection_kinds,
        index_chars=settings.config.skills.index_chars,
        home_dir=settings.home / "skills",
        project=PROJECT_SKILLS,
    )


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
    """Give the default personality the skill tools once a session works in a directory
    with skills (start-up looked only in the runtime's own, and with none found there the
    tools were left out to keep the prompt lean)."""
    catalog: SkillCatalog | None = getattr(runtime, "skills", None)
    if catalog is None:
        return
    current = runtime.loop.personalities
    try:
        toolset = current.get(current.default_id).toolset
    except KeyError:
        return
    if toolset is None or SKILL_TOOLS[0] in toolset:
        return
    try:
        found = await asyncio.to_thread(catalog.at(working_dir).offered)
    except OSError:
        return
    if found:
        runtime.loop.personalities = default_gets_skills(current)
        runtime.personalities = runtime.loop.personalities


# -- what surfaces show --


def _catalog(settings: Settings | None) -> SkillCatalog:
    if settings is None:
        from seam.wiring.settings import load_settings

        settings = load_settings()
    return build_skills(settings)


def list_lines(settings: Settings | None = None) -> list[str]:
    """`seam skills list` and `/skills`: every skill found, offered or why not."""
    catalog = _catalog(settings)
    entries = catalog.entries()
    if not entries:
        where = ", ".join(str(d.path) for d in catalog.dirs)
        return [f"no skills found (looked in {where})"]
    return [_entry_line(entry) for entry in entries]


def _entry_line(entry: Entry) -> str:
    description = entry.skill.description if entry.skill else ""
    if len(description) > 80:
        description = description[:79] + "…"
    head = f"{entry.name}  [{entry.origin}]  {entry.folder}"
    if entry.offered:
        return f"{head}\n  {description}"
    return f"{head}\n  not offered: {entry.problem}"


def show_text(name: str, settings: Settings | None = None) -> str:
    """`seam skills show NAME`: the front matter's fields and the body; raises SkillError.

    A skill that is not offered (untrusted, flagged) is shown too, with the reason, so the
    person can review it before `seam skills trust`."""
    catalog = _catalog(settings)
    problem = ""
    try:
        skill = catalog.get(name)
    except SkillError:
        found = [e for e in catalog.entries() if e.name == name and e.skill is not None]
        if not found or found[0].skill is None:
            raise
        skill, problem = found[0].skill, found[0].problem
    lines = [f"name: {skill.name}", f"description: {skill.description}", f"path: {skill.path}"]
    if problem:
        lines.insert(0, f"NOT OFFERED: {problem}")
    for label, value in (("license", skill.license), ("compatibility", skill.compatibility)):
        if value:
            lines.append(f"{label}: {value}")
    if skill.allowed_tools:
        lines.append("allowed-tools: " + " ".join(skill.allowed_tools))
    return "\n".join(lines) + "\n\n" + render_body(skill)


def trust_paths(path: Path, settings: Settings | None = None) -> list[str]:
    """`seam skills trust PATH`: PATH is a skill folder, or a folder of skills (each is
    trusted). Returns a line per skill trusted; raises SkillError when there is none."""
    if settings is None:
        from seam.wiring.settings import load_settings

        settings = load_settings()
    path = path.expanduser().resolve()
    if (path / SKILL_FILE).is_file():
        folders = [path]
    elif path.is_dir():
        folders = sorted(child for child in path.iterdir() if (child / SKILL_FILE).is_file())
    else:
        raise SkillError(f"{path} is not a folder")
    if not folders:
        raise SkillError(f"no SKILL.md in {path} or its subfolders")
    store = TrustStore(settings.home / TRUST_FILE)
    return [f"trusted {folder} (sha256 {store.trust(folder)[:12]})" for folder in folders]


def skill_turn_text(
    settings: Settings | None, name: str, text: str, working_dir: Path | None = None
) -> str:
    """The message of a `/<skill-name> ...` turn: the skill's body, then the person's
    text; raises SkillError when that skill is not offered (in `working_dir`, default the
    settings' own)."""
    catalog = _catalog(settings) if working_dir is None else _catalog(settings).at(working_dir)
    skill = catalog.get(name)
    ask = text.strip() or f"Follow the {skill.name} skill."
    return f'<skill name="{skill.name}">\n{render_body(skill)}\n</skill>\n\n{ask}'


def skill_commands(settings: Settings | None, working_dir: Path) -> list[tuple[str, str]]:
    """(name, description) of each skill offered in `working_dir`: the `/<skill-name>`
    commands an editor lists (ACP's available commands)."""
    return [(s.name, s.description) for s in _catalog(settings).at(working_dir).offered()]
