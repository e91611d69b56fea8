"""`seam dnd on|off|status`: the indefinite do-not-disturb toggle and the quiet hours.

`on` holds every delivery the agent makes on its own time (cron output, heartbeats,
alerts) until `off`, which sends what was held; urgent jobs go through either way.
Rules by time window live in `[dnd] rules` in config.toml.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from seam.contracts.outbox import Outbox
    from seam.wiring.delivery import DndAction
    from seam.wiring.runtime import Runtime

ACTIONS: tuple[DndAction, ...] = ("on", "off", "status")


async def run_dnd(action: str) -> int:
    from seam.apps.cli.exits import USAGE
    from seam.apps.cli.runner import CliError, open_runtime
    from seam.wiring.delivery import build_dnd, dnd_command

    if action not in ACTIONS:
        raise CliError(f"dnd {action!r}: use seam dnd on, off or status", USAGE)
    async with open_runtime() as runtime:
        assert runtime.settings is not None  # open_runtime loads them
        lines = await dnd_command(action, build_dnd(runtime.settings), outbox_of(runtime))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def outbox_of(runtime: Runtime) -> Outbox | None:
    """The runtime's outbox, or None when its store keeps none (the toggle still works)."""
    from seam.contracts.outbox import Outbox

    return runtime.store if isinstance(runtime.store, Outbox) else None


def register(app: typer.Typer) -> None:
    """Add the `dnd` command to the `seam` app."""

    @app.command("dnd")
    def dnd_command(
        action: Annotated[
            str, typer.Argument(help="on, off or status (the default).", metavar="on|off|status")
        ] = "status",
    ) -> None:
        """Do not disturb: hold what the agent delivers unasked (on), send it (off)."""
        from seam.apps.cli.runner import execute

        execute(run_dnd(action))
