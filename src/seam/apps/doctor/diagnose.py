"""`seam doctor`'s run: every check in the order it prints them.

Nothing here loads the local model unless asked (`deep`): that takes seconds and a lot of
memory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from seam.apps.doctor.check import Check, Diagnosis
from seam.apps.doctor.checkpoints import checkpoints_check
from seam.apps.doctor.gateway import gateway_checks, updates_check
from seam.apps.doctor.model import generate_one_token, local_checks, provider_check, remote_live
from seam.apps.doctor.parts import (
    context_room,
    personality_checks,
    sandbox_check,
    store_check,
    tools_check,
)
from seam.wiring.settings import ConfigError, Settings, load_settings, seam_home

LIVE_CHECK_TIMEOUT = 5.0


async def diagnose(
    env: Mapping[str, str] | None = None,
    *,
    deep: bool = False,
    live_timeout: float = LIVE_CHECK_TIMEOUT,
) -> Diagnosis:
    env = os.environ if env is None else env
    home = seam_home(env)
    checks = [home_check(home)]
    try:
        settings = load_settings(env, home=home)
    except ConfigError as exc:
        hint = "fix it (or the variable it names) and run seam doctor again"
        checks.append(Check("config", False, str(exc), hint))
        return Diagnosis(checks, config_ok=False)
    path = settings.config_path
    checks.append(
        Check("config", True, f"{path}" if path.exists() else f"{path} (absent: defaults)")
    )
    checks += await _model_checks(settings, deep=deep, live_timeout=live_timeout)
    checks.append(await store_check(settings))
    checks.append(await checkpoints_check(settings))
    checks.append(sandbox_check(settings))
    checks.extend(personality_checks(settings))
    checks.append(tools_check())
    room = await context_room(settings)
    if room is not None:
        checks.append(room)
    checks.extend(gateway_checks(settings))
    updates = await updates_check(settings)
    if updates is not None:
        checks.append(updates)
    return Diagnosis(checks, config_ok=True)


async def _model_checks(settings: Settings, *, deep: bool, live_timeout: float) -> list[Check]:
    """The provider's line, then whether it answers (remote) or can load (local; `deep`
    generates one token too)."""
    checks = [provider_check(settings)]
    if settings.provider != "local":
        checks.append(await remote_live(settings, live_timeout))
        return checks
    local = local_checks(settings)
    checks.extend(local)
    if deep and all(check.ok for check in local):
        checks.append(await generate_one_token(settings))
    return checks


def home_check(home: Path) -> Check:
    if home.is_dir():
        if os.access(home, os.W_OK | os.X_OK):
            return Check("SEAM_HOME", True, f"{home} (writable)")
        return Check("SEAM_HOME", False, f"{home} is not writable", "fix its permissions")
    if home.exists():
        return Check("SEAM_HOME", False, f"{home} is not a directory", "set SEAM_HOME elsewhere")
    parent = next((p for p in home.parents if p.exists()), None)
    if parent is not None and os.access(parent, os.W_OK | os.X_OK):
        return Check("SEAM_HOME", True, f"{home} (created on first run)")
    return Check("SEAM_HOME", False, f"{home} cannot be created", "set SEAM_HOME elsewhere")
