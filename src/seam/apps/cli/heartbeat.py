"""`seam heartbeat status | run`: what the heartbeat did, cost and does next; one beat now.

The heartbeat (`[heartbeat] every = "30m"`, off by default) runs in `seam worker`,
`seam gateway` and `seam serve` with the cron jobs. `run` beats once at this moment, the
way a scheduled beat would (skipped in quiet hours), to try a checklist.
"""

from __future__ import annotations

import sys

import typer


async def heartbeat_status() -> int:
    from seam.wiring.heartbeat import status_lines
    from seam.wiring.settings import load_settings

    sys.stdout.write("\n".join(status_lines(load_settings())) + "\n")
    return 0


async def heartbeat_run() -> int:
    from seam.apps.cli.runner import open_runtime
    from seam.wiring.heartbeat import beat, run_line

    async with open_runtime() as runtime:
        run = await beat(runtime)
    sys.stdout.write(run_line(run) + "\n")
    return 1 if run.status == "failed" else 0


def register(app: typer.Typer) -> None:
    """Add the `heartbeat` command group to the `seam` app."""
    heartbeat_app = typer.Typer(
        help="The heartbeat: a periodic check that stays silent unless it matters.",
        no_args_is_help=True,
    )

    @heartbeat_app.command("status")
    def status_command() -> None:
        """The setting, the next beat, the last runs with their tokens and cost."""
        from seam.apps.cli.runner import execute

        execute(heartbeat_status())

    @heartbeat_app.command("run")
    def run_command() -> None:
        """Beat once now (skipped in quiet hours), and say what it did."""
        from seam.apps.cli.runner import execute

        execute(heartbeat_run())

    app.add_typer(heartbeat_app, name="heartbeat")
