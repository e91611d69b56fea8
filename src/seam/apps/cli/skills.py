"""`seam skills list | show NAME | trust PATH`: the Agent Skills Seam finds, and trusting
the ones that came with the working directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from seam.wiring.settings import Settings
    from seam.wiring.skills import Entry


def list_lines(settings: Settings | None = None) -> list[str]:
    """`seam skills list` and `/skills`: every skill found, offered or why not."""
    from seam.wiring.skills import catalog_for

    catalog = catalog_for(settings)
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


def entry_named(name: str, settings: Settings | None = None) -> Entry:
    """The skill `name` as `seam skills show` and the dashboard pick it: the offered one,
    else the first found with a readable SKILL.md (an untrusted or flagged one, so the
    person can review it before trusting); raises SkillError (UnknownSkill: none at all)."""
    from seam.wiring.skills import catalog_for

    catalog = catalog_for(settings)
    named = [entry for entry in catalog.entries() if entry.name == name]
    chosen = next((e for e in named if e.offered), None) or next(
        (e for e in named if e.skill is not None), None
    )
    if chosen is None:
        catalog.get(name)  # raises the SkillError that says why there is none
        raise AssertionError("an offered skill has an entry")  # pragma: no cover
    return chosen


def show_text(name: str, settings: Settings | None = None) -> str:
    """`seam skills show NAME`: the front matter's fields and the body; raises SkillError.

    A skill that is not offered (untrusted, flagged) is shown too, with the reason, so the
    person can review it before `seam skills trust`."""
    from seam.wiring.skills import render_body

    entry = entry_named(name, settings)
    skill, problem = entry.skill, entry.problem
    assert skill is not None  # entry_named returns only readable skills
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
    from seam.wiring.settings import load_settings
    from seam.wiring.skills import SKILL_FILE, SkillError, trust_store

    if settings is None:
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
    store = trust_store(settings)
    return [f"trusted {folder} (sha256 {store.trust(folder)[:12]})" for folder in folders]


async def list_skills() -> int:
    for line in list_lines():
        sys.stdout.write(line + "\n")
    return 0


async def show_skill(name: str) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.skills import SkillError

    try:
        sys.stdout.write(show_text(name) + "\n")
    except SkillError as exc:
        raise CliError(str(exc)) from None
    return 0


async def trust_skill(path: Path) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.skills import SkillError

    try:
        lines = trust_paths(path)
    except SkillError as exc:
        raise CliError(str(exc)) from None
    for line in lines:
        sys.stdout.write(line + "\n")
    return 0


def register(app: typer.Typer) -> None:
    """Add the `skills` command group to the `seam` app."""
    skills_app = typer.Typer(help="Agent Skills (SKILL.md folders).", no_args_is_help=True)

    @skills_app.command("list")
    def list_command() -> None:
        """Every skill found, where, and why one is not offered."""
        from seam.apps.cli.runner import execute

        execute(list_skills())

    @skills_app.command("show")
    def show_command(name: Annotated[str, typer.Argument(help="The skill's name.")]) -> None:
        """A skill's front matter, instructions and files."""
        from seam.apps.cli.runner import execute

        execute(show_skill(name))

    @skills_app.command("trust")
    def trust_command(
        path: Annotated[Path, typer.Argument(help="A skill folder, or a folder of skills.")],
    ) -> None:
        """Trust working-directory skills at their current content (a change untrusts)."""
        from seam.apps.cli.runner import execute

        execute(trust_skill(path))

    app.add_typer(skills_app, name="skills")
