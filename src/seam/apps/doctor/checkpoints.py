"""The doctor's line for undo: whether checkpoints are taken, and the disk they use
against `[checkpoints] budget_mb` (git is what takes them)."""

from __future__ import annotations

import shutil

from seam.apps.doctor.check import Check
from seam.wiring.settings import Settings

GIT_HINT = "install git (apt-get install git): without it no turn can be undone"


async def checkpoints_check(settings: Settings) -> Check:
    from seam.wiring.checkpoints import build_engine, checkpoint_settings

    wanted = checkpoint_settings(settings)
    if not wanted.enabled:
        return Check("checkpoints", True, "off ([checkpoints] enabled = false): no undo")
    if shutil.which("git") is None:
        return Check("checkpoints", False, "git is not installed", GIT_HINT)
    engine = build_engine(settings)
    used = await engine.disk_usage()
    detail = f"{used / 1e6:.1f} MB of {wanted.budget_mb:g} MB in {engine.root}"
    return Check("checkpoints", True, detail)
