"""The dashboard's Cron section over HTTP: a real `seam serve` app on loopback whose jobs
live in its real SQLite store, checked against the store `seam cron` reads (the same
`CronAdmin`), with the scripted model answering a run started from the API."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from seam.contracts.cron import CronJob
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from seam.wiring.cron import cron_store_of
from tests.web.harness import Served, serving

FILE = "file:cron/daily.md"


def job_body(**fields: Any) -> dict[str, Any]:
    return {"prompt": "summarise my inbox", "every": "2h", "deliver": FILE, **fields}


async def add(client: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    answer = await client.post("/api/cron/jobs", json=job_body(**fields))
    assert answer.status_code == 201, answer.text
    job: dict[str, Any] = answer.json()
    return job


async def stored(served: Served, job_id: str) -> CronJob:
    job = await cron_store_of(served.store).get_job(job_id)
    assert job is not None
    return job


def one_line_error(answer: httpx.Response, status: int, *words: str) -> str:
    assert answer.status_code == status, answer.text
    message: str = answer.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    for word in words:
        assert word in message, message
    return message


async def test_a_job_added_here_is_in_the_store_the_cli_reads(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        before = time.time()
        job = await add(owner, every="30m", continue_session=True, urgent=True)
        assert job["schedule"] == "30m" and job["schedule_kind"] == "interval"
        assert job["deliver"].endswith("/home/deliveries/cron/daily.md")  # canonical
        assert job["state"] == "on" and job["last_run"] is None
        assert job["consecutive_failures"] == 0 and job["next_run"].endswith("UTC")
        row = await stored(served, job["id"])
        assert row.continue_session and row.urgent and row.next_due_at is not None
        assert row.next_due_at >= before  # an interval job is first due when added
        listed = (await owner.get("/api/cron/jobs")).json()["jobs"]
        assert [j["id"] for j in listed] == [job["id"]]
        # One schedule text, read by its form, as the page's single field sends it.
        weekday = await add(owner, every=None, schedule="0 9 * * 1-5", tz="Europe/Berlin")
        assert weekday["schedule_kind"] == "cron" and weekday["tz"] == "Europe/Berlin"
        assert weekday["next_run"].endswith(("CET", "CEST"))


async def test_preview_gives_the_next_five_runs_of_each_schedule_form(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        now = time.time()
        every = (await owner.post("/api/cron/preview", json={"schedule": "30m"})).json()
        times = [r["at"] for r in every["runs"]]
        assert every["kind"] == "interval" and len(times) == 5
        assert abs(times[0] - now) < 60
        assert [b - a for a, b in itertools.pairwise(times)] == [1800.0] * 4
        body = {"schedule": "0 9 * * 1-5", "tz": "Europe/Berlin"}
        cron = (await owner.post("/api/cron/preview", json=body)).json()
        assert cron["kind"] == "cron" and len(cron["runs"]) == 5
        for run in cron["runs"]:
            local = datetime.fromtimestamp(run["at"], ZoneInfo("Europe/Berlin"))
            assert (local.hour, local.minute) == (9, 0) and local.isoweekday() <= 5, run
            assert run["text"].endswith((" 09:00 CET", " 09:00 CEST")), run
        once = (await owner.post("/api/cron/preview", json={"schedule": "2099-12-24T18:00"})).json()
        assert once["kind"] == "once" and [r["text"] for r in once["runs"]] == [
            "2099-12-24 18:00 UTC"
        ]


async def test_a_bad_schedule_zone_target_or_personality_is_one_line_400(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        preview = "/api/cron/preview"
        bad = await owner.post(preview, json={"schedule": "0 9 * *"})
        one_line_error(bad, 400, "'0 9 * *'", "interval", "cron expression", "ISO time")
        bad = await owner.post(preview, json={"schedule": "61 9 * * *"})
        one_line_error(bad, 400, "5-field cron expression")
        bad = await owner.post(preview, json={"schedule": "0 0 30 2 *"})  # no 30 February
        one_line_error(bad, 400, "no time Seam can schedule")
        bad = await owner.post(preview, json={"schedule": "10s"})
        one_line_error(bad, 400, "shorter than a minute")
        bad = await owner.post(preview, json={"schedule": "1h", "tz": "Mars/Olympus"})
        one_line_error(bad, 400, "Mars/Olympus")
        jobs = "/api/cron/jobs"
        one_line_error(await owner.post(jobs, json=job_body(every="soon")), 400, "not an interval")
        one_line_error(await owner.post(jobs, json=job_body(cron="0 9 * * *")), 400, "exactly one")
        one_line_error(await owner.post(jobs, json=job_body(every=None)), 400, "exactly one")
        one_line_error(await owner.post(jobs, json=job_body(deliver="owner")), 400, "owner")
        bad = await owner.post(jobs, json=job_body(deliver="file:../../etc/passwd"))
        one_line_error(bad, 400)
        bad = await owner.post(jobs, json=job_body(personality="nobody"))
        one_line_error(bad, 400, "no personality 'nobody'")
        bad = await owner.post(jobs, json=job_body(missed="sometimes"))
        assert bad.status_code in (400, 422) and "missed" in bad.json()["error"]["message"]
        assert (await owner.get(jobs)).json()["jobs"] == []


async def test_an_unknown_job_is_404_everywhere(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        await add(owner)  # a job exists, just not this one
        path = "/api/cron/jobs/nosuch"
        for method, url, body in [
            ("GET", f"{path}/runs", None),
            ("PATCH", path, {"prompt": "x"}),
            ("POST", f"{path}/pause", None),
            ("POST", f"{path}/resume", None),
            ("POST", f"{path}/run", None),
            ("DELETE", path, None),
        ]:
            answer = await owner.request(method, url, json=body)
            one_line_error(answer, 404, "no cron job 'nosuch'")


async def test_a_tenant_key_is_refused_every_cron_route(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        job = await add(owner)
        async with served.client("alpha") as alpha:
            path = f"/api/cron/jobs/{job['id']}"
            for method, url, body in [
                ("GET", "/api/cron/jobs", None),
                ("POST", "/api/cron/jobs", job_body()),
                ("POST", "/api/cron/preview", {"schedule": "1h"}),
                ("GET", f"{path}/runs", None),
                ("PATCH", path, {"prompt": "mine now"}),
                ("POST", f"{path}/pause", None),
                ("POST", f"{path}/run", None),
                ("DELETE", path, None),
            ]:
                one_line_error(await alpha.request(method, url, json=body), 403, "owner")
            sections = (await alpha.get("/api/control")).json()["sections"]
            assert "cron" not in [s["id"] for s in sections]
        row = await stored(served, job["id"])
        assert row.prompt == "summarise my inbox" and not row.paused


async def test_edit_keeps_the_next_run_unless_the_schedule_changes(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        job = await add(owner, cron="0 9 * * *", every=None)
        path = f"/api/cron/jobs/{job['id']}"
        await owner.post(f"{path}/pause")
        changed = await owner.patch(path, json={"prompt": "  plan my day  ", "urgent": True})
        assert changed.status_code == 200, changed.text
        row = await stored(served, job["id"])
        assert row.prompt == "plan my day" and row.urgent and row.paused
        assert row.next_due_at == job["next_due_at"] and row.created_at == job["created_at"]
        moved = (await owner.patch(path, json={"tz": "Asia/Tokyo"})).json()
        assert moved["tz"] == "Asia/Tokyo" and moved["next_due_at"] != job["next_due_at"]
        again = (await owner.patch(path, json={"schedule": "45m"})).json()
        assert again["schedule_kind"] == "interval" and again["state"] == "paused"
        bad = await owner.patch(path, json={"schedule": "0 25 * * *"})
        one_line_error(bad, 400, "cron expression")
        one_line_error(await owner.patch(path, json={"personality": "ghost"}), 400, "ghost")
        assert (await stored(served, job["id"])).schedule == "45m"


async def test_pause_resume_and_delete_are_what_the_store_holds(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        job = await add(owner)
        path = f"/api/cron/jobs/{job['id']}"
        paused = (await owner.post(f"{path}/pause")).json()
        assert paused["paused"] and paused["state"] == "paused"
        assert (await stored(served, job["id"])).paused
        # Changed behind the page's back (as `seam cron resume` does): the next read shows it.
        await cron_store_of(served.store).set_paused(job["id"], False)
        listed = (await owner.get("/api/cron/jobs")).json()["jobs"]
        assert listed[0]["paused"] is False
        resumed = (await owner.post(f"{path}/resume")).json()
        assert resumed["state"] == "on"
        assert (await owner.delete(path)).json() == {"deleted": job["id"]}
        assert await cron_store_of(served.store).get_job(job["id"]) is None
        assert (await owner.delete(path)).status_code == 404


async def test_run_now_answers_202_at_once_and_the_run_shows_its_reply(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("Three new mails, none urgent.")])
    async with serving(model, tmp_path) as served, served.client() as owner:
        job = await add(owner, cron="0 9 * * *", every=None)
        answer = await owner.post(f"/api/cron/jobs/{job['id']}/run")
        assert answer.status_code == 202, answer.text
        run = answer.json()
        assert run["job_id"] == job["id"] and run["note"] == "manual"
        assert run["submission_id"] == f"cron:{run['slot_key']}"
        driver = served.backend.turns._drivers.get(run["submission_id"])
        if driver is not None:
            await asyncio.wait_for(asyncio.shield(driver), 20)
        runs = (await owner.get(f"/api/cron/jobs/{job['id']}/runs")).json()["runs"]
        assert [r["slot_key"] for r in runs] == [run["slot_key"]]
        assert runs[0]["message"] == "Three new mails, none urgent."
        assert runs[0]["due"].endswith("UTC") and runs[0]["error"] is None
        listed = (await owner.get("/api/cron/jobs")).json()["jobs"][0]
        assert listed["last_run"]["note"] == "manual"


async def test_the_heartbeat_job_is_changed_in_config_not_here(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        job = await add(owner)
        row = await stored(served, job["id"])
        await cron_store_of(served.store).upsert(dataclasses.replace(row, kind="heartbeat"))
        bad = await owner.patch(f"/api/cron/jobs/{job['id']}", json={"prompt": "x"})
        one_line_error(bad, 400, "[heartbeat]", "config.toml")
        assert (await owner.post(f"/api/cron/jobs/{job['id']}/pause")).status_code == 200
