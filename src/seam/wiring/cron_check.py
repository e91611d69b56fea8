"""Cron checks as the runtime builds them: the guard that classifies a check command
(when it is added and before each run) and the sandbox it runs in, the one the job's
turns would get (its personality's network, the runtime's working directory). What a
check is and decides is plugins/cron/check.py."""

from __future__ import annotations

from typing import Any

from seam.contracts.cron import CronJob
from seam.contracts.guardrail import Classification
from seam.contracts.sandbox import Sandbox
from seam.plugins.cron.check import CheckRun, Classify, SandboxCheck
from seam.wiring.guard import deferred_guardrail


def check_classifier(runtime: Any) -> Classify | None:
    """The guard's classification of a check command (None: a runtime without settings)."""
    settings = getattr(runtime, "settings", None)
    if settings is None:
        return None
    guard = deferred_guardrail(settings)
    return lambda command: guard.classify(command)


def check_runner(runtime: Any) -> CheckRun | None:
    """What runs a job's check in this runtime; None without settings or a sandbox (a job
    with a check then runs every slot, and its runs say so)."""
    settings = getattr(runtime, "settings", None)
    loop = getattr(runtime, "loop", None)
    sandboxes = getattr(loop, "sandboxes", None)
    if settings is None or loop is None or sandboxes is None:
        return None
    guard = deferred_guardrail(settings)

    def sandbox_for(job: CronJob) -> Sandbox:
        registry = runtime.personalities
        personality = registry.get(job.personality or registry.default_id)
        key = runtime.session_key_for(f"cron:{job.id}:check")
        working_dir: str = loop.working_dir_for(key)
        found: Sandbox = sandboxes.for_session(
            key, working_dir=working_dir, network=personality.network
        )
        return found

    def classify(command: str, cwd: str) -> Classification:
        return guard.classify(command, cwd=cwd)

    return SandboxCheck(sandbox_for, classify, redact=loop.redact)
