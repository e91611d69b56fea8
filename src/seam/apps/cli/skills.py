"""`seam skills list | show NAME | trust PATH`: the Agent Skills Seam finds, and trusting
the ones that came with the working directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


async def list_skills() -> int:
    from seam.wiring.skills import list_lines

    for line in list_lines():
        sys.stdout.write(line + "\n")
    return 0


async def show_skill(name: str) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.skills import SkillError, show_text

    try:
        sys.stdout.write(show_text(name) + "\n")
    except SkillError as exc:
        raise CliError(str(exc)) from None
    return 0


async def trust_skill(path: Path) -> int:
    from seam.apps.cli.runner import CliError
    from seam.wiring.skills import SkillError, trust_paths

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
