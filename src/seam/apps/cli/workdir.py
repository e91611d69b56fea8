"""The check `seam chat` and `seam run` make before starting in a risky place.

Started in the home directory itself (or in `/`), commands and file tools work on all of
it: the person is told so and asked to continue. `--yes` answers for scripts; without a
terminal to ask on and without `--yes`, the command refuses with one line.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from seam.apps.cli.exits import USAGE
from seam.apps.cli.runner import CliError

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

RISK = "commands and file edits could write anywhere in it"


def confirm_working_dir(yes: bool) -> None:
    """Return to go on; raise CliError to stop (the reason on one line, exit code 2)."""
    from seam.wiring.reach import risky_start

    reason = risky_start()
    if reason is None:
        return
    if yes:
        sys.stderr.write(f"seam: warning: {reason}: {RISK} (continuing: --yes)\n")
        sys.stderr.flush()
        return
    stdin = sys.stdin  # None when stdin is closed: nobody to ask
    if not (stdin is not None and stdin.isatty() and sys.stderr.isatty()):
        raise CliError(
            f"{reason}: {RISK}; cd into a project folder, or pass --yes to start here anyway",
            USAGE,
        )
    sys.stderr.write(f"warning: {reason}: {RISK}.\nContinue here? [y/N] ")
    sys.stderr.flush()
    answer = stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise CliError("not started: cd into a project folder (or pass --yes)", USAGE)


def sandbox_banner(runtime: Runtime) -> tuple[str, bool]:
    """The chat banner's sandbox line, and whether commands are isolated."""
    from seam.apps.cli.sandbox_line import runtime_sandbox

    return runtime_sandbox(runtime)
