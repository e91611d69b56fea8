"""`seam doctor`: one line per check, so a problem and its fix are easy to spot."""

from __future__ import annotations

import sys

from seam.apps.cli.exits import FAILURE, USAGE
from seam.apps.cli.render import Style


async def run_doctor(deep: bool) -> int:
    from seam.apps.doctor.diagnose import diagnose

    diagnosis = await diagnose(deep=deep)
    style = Style.for_stream(sys.stdout)
    lines = []
    for check in diagnosis.checks:
        if check.ok:
            lines.append(f"{style.green('✓')} {check.name}: {check.detail}")
        else:
            hint = style.dim(f" — {check.hint}") if check.hint else ""
            lines.append(f"{style.red('✗')} {check.name}: {check.detail}{hint}")
    problems = sum(not check.ok for check in diagnosis.checks)
    lines.append(f"{problems} problem(s) found" if problems else "everything needed works")
    sys.stdout.write("\n".join(lines) + "\n")
    if not diagnosis.config_ok:
        return USAGE
    return FAILURE if problems else 0
