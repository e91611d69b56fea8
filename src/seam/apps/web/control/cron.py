"""The dashboard's Cron section: jobs with next run and last result; add with a preview of the
next five runs, edit, pause, resume, run now, delete; each job's runs.

All under `/api/cron`, the owner's alone (`access.py`). Every route goes through the
`CronAdmin` `seam cron` uses (cron_views.py), over the store every scheduler shares: a job
added here is in `seam cron list` at once, and one paused there is paused here on the next
read. Bodies: cron_models.py.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from seam.apps.web.control.cron_models import (
    JobChange,
    NewJob,
    Preview,
    changed_spec,
    job_options,
    schedule_spec,
)
from seam.apps.web.control.cron_views import (
    admin_of,
    check_personality_of,
    cron_errors,
    job_view,
    run_views,
    start_now,
)
from seam.apps.web.control.deps import Control
from seam.wiring.cron import describe, guessed_spec, run_dict, spec_of

JobId = Annotated[str, Path(min_length=1, max_length=64, description="The job's id.")]
PREVIEW_COUNT = 5


def add_routes(api: APIRouter, control: Control) -> None:
    """The section's `/api/cron/...` routes."""
    _add_reading_routes(api, control)
    _add_writing_routes(api, control)
    _add_state_routes(api, control)


def _add_reading_routes(api: APIRouter, control: Control) -> None:
    @api.get("/cron/jobs", tags=["cron"])
    async def cron_jobs() -> dict[str, Any]:
        """Every cron job (as `seam cron list --json`), each with its next run in its zone
        and its last run (outcome and when)."""
        admin = admin_of(control)
        return {"jobs": [await job_view(admin, job) for job in await admin.list()]}

    @api.get("/cron/jobs/{job_id}/runs", tags=["cron"])
    async def cron_runs(
        job_id: JobId, limit: Annotated[int, Query(ge=1, le=200)] = 20
    ) -> dict[str, Any]:
        """A job's run ledger, newest first (as `seam cron runs --json`), each run with
        its delivered message and why its delivery failed, if it did."""
        return {"runs": await run_views(control, job_id, limit)}

    @api.post("/cron/preview", tags=["cron"])
    async def cron_preview(body: Preview) -> dict[str, Any]:
        """The next five times a job with this schedule would run if added now (fewer
        for a one-shot job), or 400 naming what is wrong with it."""
        admin = admin_of(control)
        with cron_errors():
            spec = guessed_spec(body.schedule, body.tz)
            slots = admin.preview(spec, PREVIEW_COUNT)
        kind = spec.text_and_kind()[1]
        return {
            "kind": kind,
            "tz": body.tz,
            "runs": [{"at": at, "text": describe(at, body.tz)} for at in slots],
        }


def _add_writing_routes(api: APIRouter, control: Control) -> None:
    @api.post("/cron/jobs", tags=["cron"], status_code=201)
    async def cron_add(body: NewJob) -> dict[str, Any]:
        """Add a job, checked as `seam cron add` checks it (schedule, zone, delivery
        target, personality); 400 with one line when it cannot be added."""
        admin = admin_of(control)
        given = body.model_dump()
        with cron_errors():
            spec = schedule_spec(given, body.tz)
            check_personality_of(control, body.personality)
            job = await admin.add(body.prompt, spec, **job_options(given))
        return await job_view(admin, job)

    @api.patch("/cron/jobs/{job_id}", tags=["cron"])
    async def cron_edit(job_id: JobId, body: JobChange) -> dict[str, Any]:
        """Change a job's prompt, schedule, zone, delivery target, personality or
        policies, with the checks of adding one. A new schedule or zone is due anew;
        otherwise the job keeps its next run."""
        admin = admin_of(control)
        given = body.model_dump(exclude_unset=True)
        with cron_errors():
            old = await admin.job(job_id)
            spec = changed_spec(given, spec_of(old))
            if given.get("personality") is not None:
                check_personality_of(control, body.personality)
            job = await admin.edit(job_id, body.prompt, spec, job_options(given))
        return await job_view(admin, job)

    @api.delete("/cron/jobs/{job_id}", tags=["cron"])
    async def cron_delete(job_id: JobId) -> dict[str, Any]:
        """Remove a job and its run ledger (as `seam cron rm`)."""
        admin = admin_of(control)
        with cron_errors():
            await admin.job(job_id)  # 404 with the CLI's line when there is none
        await admin.remove(job_id)
        return {"deleted": job_id}


def _add_state_routes(api: APIRouter, control: Control) -> None:
    _add_pause_route(api, control, "pause", "Pause a job: nothing of it runs until it is resumed.")
    _add_pause_route(
        api, control, "resume", "Resume a paused job (its failure count starts again at 0)."
    )

    @api.post("/cron/jobs/{job_id}/run", tags=["cron"], status_code=202)
    async def cron_run(job_id: JobId) -> dict[str, Any]:
        """Run a job now, once, as a scheduled run (its reply delivered the same way):
        answered at once (202) with the run's ledger row, while the turn runs here in
        the background; follow it in the job's runs."""
        return run_dict(await start_now(control, job_id))


def _add_pause_route(api: APIRouter, control: Control, action: str, description: str) -> None:
    """`POST /api/cron/jobs/{id}/pause` or `/resume` (as `seam cron pause|resume`)."""

    @api.post(f"/cron/jobs/{{job_id}}/{action}", tags=["cron"], description=description)
    async def cron_pause_or_resume(job_id: JobId) -> dict[str, Any]:
        admin = admin_of(control)
        with cron_errors():
            job = await (admin.pause if action == "pause" else admin.resume)(job_id)
        return await job_view(admin, job)


__all__ = ["add_routes"]
