"""`seam guard check "<command>"`: what the guard would decide, and which rule decided.

Exit codes, so a script can ask before it runs something: 0 safe, 1 needs approval,
3 forbidden (2 stays "bad usage or config", as for every seam command).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

EXIT_CODES = {"safe": 0, "needs_approval": 1, "forbidden": 3}


def guard_check(command: str) -> int:
    """Print the verdict, the rule, its reason, whether it only reads, and the command as
    the guard read it."""
    from seam.apps.cli.render import Style
    from seam.wiring.guard import build_guardrail
    from seam.wiring.settings import load_settings

    settings = load_settings()
    found = build_guardrail(settings).classify(command, cwd=str(settings.working_dir))
    style = Style.for_stream(sys.stdout)
    paint = {"safe": style.green, "needs_approval": style.bold, "forbidden": style.red}
    sys.stdout.write(
        f"verdict: {paint[found.verdict](found.verdict)}\n"
        f"rule: {found.rule}\n"
        f"reason: {found.reason}\n"
        # Without a sandbox (the local backend) only read-only commands run unasked.
        f"read-only: {'yes' if found.read_only else 'no'}\n"
        f"command: {found.normalized}\n"
    )
    return EXIT_CODES[found.verdict]


async def _check(command: str) -> int:
    return guard_check(command)


def register(app: typer.Typer) -> None:
    """Add the `guard` command group to the `seam` app."""
    guard_app = typer.Typer(help="Check commands against the safety rules.", no_args_is_help=True)

    @guard_app.command("check")
    def check(
        command: Annotated[str, typer.Argument(help="The shell command; - reads it from stdin.")],
    ) -> None:
        """Classify a command: exit 0 safe, 1 needs approval, 3 forbidden."""
        from seam.apps.cli.runner import execute

        execute(_check(sys.stdin.read() if command == "-" else command))

    app.add_typer(guard_app, name="guard")
