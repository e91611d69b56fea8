"""`seam models`: the configured providers, each checked, one line per failure."""

from __future__ import annotations

import sys

from seam.apps.cli.render import Style


async def run_models(seconds: float) -> int:
    from seam.apps.doctor.providers import check_models
    from seam.wiring.settings import load_settings

    entries = await check_models(load_settings(), seconds=seconds)
    style = Style.for_stream(sys.stdout)
    lines = []
    for entry in entries:
        mark = style.green("✓") if entry.ok else style.red("✗")
        lines.append(f"{mark} {entry.role:<18} {entry.ref}  {entry.detail}")
        lines.extend(f"    key {key}" for key in entry.keys)
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if all(entry.ok for entry in entries) else 1
