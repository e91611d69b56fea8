"""`POST /api/doctor`: `seam doctor`'s checks, run from the Settings section.

The same checks as the command (`apps/doctor/diagnose.py`), for the server's home and
environment, so the page says what `seam doctor` would. Some checks block (the sandbox
starts a process, the store opens a file), so they run in a thread with their own event
loop, never on the server's; and they are bounded: past `DOCTOR_SECONDS` the answer says
they did not finish. One run at a time: a second click while one runs gets a 409.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter

from seam.apps.doctor.check import Diagnosis
from seam.apps.web.control.deps import Control
from seam.apps.web.errors import ApiError

DOCTOR_SECONDS = 15.0
_RUNNING = threading.Lock()


def _diagnose(env: Mapping[str, str]) -> Diagnosis:
    """The checks, in a thread of their own (its own event loop); the lock is released
    when they end, even after the request stopped waiting for them."""
    from seam.apps.doctor.diagnose import diagnose

    try:
        return asyncio.run(diagnose(env))
    finally:
        _RUNNING.release()


def diagnosis_body(diagnosis: Diagnosis) -> dict[str, Any]:
    checks = [
        {
            "name": c.name,
            "status": "ok" if c.ok else "failed",
            "detail": c.detail,
            "hint": c.hint,
        }
        for c in diagnosis.checks
    ]
    return {"ok": diagnosis.ok, "config_ok": diagnosis.config_ok, "checks": checks}


async def run_checks(env: Mapping[str, str], seconds: float = DOCTOR_SECONDS) -> dict[str, Any]:
    """`seam doctor`'s checks for `env` (which names SEAM_HOME), as the API answers them."""
    if not _RUNNING.acquire(blocking=False):
        raise ApiError(409, "the checks are running already; wait for their results")
    try:
        job = asyncio.ensure_future(asyncio.to_thread(_diagnose, env))
    except BaseException:
        _RUNNING.release()
        raise
    try:
        diagnosis = await asyncio.wait_for(asyncio.shield(job), seconds)
    except TimeoutError:
        return {
            "ok": False,
            "config_ok": True,
            "checks": [
                {
                    "name": "doctor",
                    "status": "failed",
                    "detail": f"the checks did not finish within {seconds:g} s",
                    "hint": "run seam doctor in a terminal to see which one hangs",
                }
            ],
        }
    return diagnosis_body(diagnosis)


def add_routes(api: APIRouter, control: Control) -> None:
    """`POST /api/doctor` (the owner's alone: access.py)."""

    @api.post("/doctor", tags=["settings"])
    async def doctor() -> dict[str, Any]:
        """Run `seam doctor`'s checks for this server's home; each check's name, status
        (`ok` or `failed`), detail and hint. 409 while a run is under way."""
        settings = control.need_settings()
        env = {**settings.env, "SEAM_HOME": str(settings.home)}
        return await run_checks(env)


__all__ = ["DOCTOR_SECONDS", "add_routes", "diagnosis_body", "run_checks"]
