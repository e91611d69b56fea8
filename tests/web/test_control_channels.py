"""The Channels section's API: each gateway platform's state, and pairing approved, denied
and revoked from the page, seen at once by `seam pairing list` (a subprocess on the same
SEAM_HOME). Requests are made the way a gateway makes them: the pairing store's own API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from seam.apps.gateway.inbox import RETRY_PREFIX
from seam.apps.gateway.pairing import PairingStore
from seam.apps.gateway.status import status_path, write_status
from seam.contracts.outbox import Outgoing
from seam.core import ScriptedModel
from seam.wiring.settings import Settings
from tests.web.harness import serving

SEAM = Path(sys.executable).with_name("seam")


def pairing_list(home: Path) -> str:
    """What `seam pairing list` prints for `home` (a real subprocess)."""
    env = {**os.environ, "SEAM_HOME": str(home), "HOME": str(home.parent)}
    done = subprocess.run(
        [str(SEAM), "pairing", "list"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def store(tmp: Path) -> PairingStore:
    return PairingStore.for_settings(Settings(home=tmp / "home", working_dir=tmp))


async def test_approve_deny_and_revoke_change_what_the_cli_lists(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        ann = store(tmp_path).request("telegram", "42", "Ann", "42")
        bob = store(tmp_path).request("slack", "U7", "Bob", "C1")
        listed = (await owner.get("/api/channels")).json()
        assert [p["code"] for p in listed["pending"]] == [ann.code, bob.code]
        assert listed["pending"][0]["user_name"] == "Ann"
        assert listed["pending"][0]["minutes_left"] >= 59

        approved = await owner.post(f"/api/channels/pairing/{ann.code.lower()}/approve")
        assert approved.status_code == 200, approved.text
        assert approved.json()["approved"] == "telegram:42"
        denied = await owner.post(f"/api/channels/pairing/{bob.code}/deny")
        assert denied.status_code == 200, denied.text
        cli = pairing_list(tmp_path / "home")
        assert "paired\ttelegram:42\tAnn" in cli
        assert bob.code not in cli and "waiting" not in cli
        after = (await owner.get("/api/channels")).json()
        assert after["pending"] == [] and [u["ref"] for u in after["paired"]] == ["telegram:42"]

        revoked = await owner.delete("/api/channels/telegram/users/42")
        assert revoked.status_code == 200, revoked.text
        assert revoked.json() == {"revoked": ["telegram:42"]}
        assert pairing_list(tmp_path / "home") == "nobody is waiting and nobody is paired\n"


async def test_wrong_codes_and_unknown_users_are_one_line_errors(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        wrong = await owner.post("/api/channels/pairing/NOPE2345/approve")
        assert wrong.status_code == 400
        message = wrong.json()["error"]["message"]
        assert "not a pairing code waiting" in message and "\n" not in message
        assert (await owner.post("/api/channels/pairing/NOPE2345/deny")).status_code == 404
        gone = await owner.delete("/api/channels/telegram/users/99")
        assert gone.status_code == 404 and "not paired" in gone.json()["error"]["message"]
        too_long = await owner.post("/api/channels/pairing/" + "A" * 40 + "/approve")
        assert too_long.status_code == 422


async def test_each_platform_shows_its_adapter_state_and_dead_updates(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        settings = Settings(home=tmp_path / "home", working_dir=tmp_path)
        entry = {"state": "backoff", "last_error": "401 Unauthorized", "pid": 7, "rebuilds": 2}
        write_status(status_path(settings), {"telegram": entry})
        target = f"{RETRY_PREFIX}telegram:42/"
        await served.store.enqueue("tg-1:inbound", Outgoing(target, "{}", source="tg-1"))
        await served.store.mark_failed("tg-1:inbound", "the turn crashed", retry_at=None)
        body = (await owner.get("/api/channels")).json()
        by_name = {p["name"]: p for p in body["platforms"]}
        assert list(by_name) == ["telegram", "slack", "discord"]
        assert not any(p["configured"] for p in body["platforms"])
        telegram = by_name["telegram"]
        assert telegram["status"]["state"] == "backoff"
        assert telegram["status"]["last_error"] == "401 Unauthorized"
        [dead] = telegram["updates"]
        assert (dead["state"], dead["chat"], dead["source"]) == ("dead", "telegram:42", "tg-1")
        assert dead["error"] == "the turn crashed"
        assert by_name["slack"]["status"] is None and by_name["slack"]["updates"] == []


async def test_a_tenant_reaches_no_channel_route(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client("alpha") as alpha:
        code = store(tmp_path).request("telegram", "42", "Ann", "42").code
        for method, path in (
            ("GET", "/api/channels"),
            ("POST", f"/api/channels/pairing/{code}/approve"),
            ("POST", f"/api/channels/pairing/{code}/deny"),
            ("DELETE", "/api/channels/telegram/users/42"),
        ):
            response = await alpha.request(method, path)
            assert response.status_code == 403, (method, path, response.text)
            assert "owner" in response.json()["error"]["message"]
        assert json.loads((tmp_path / "home" / "pairing.json").read_text())["pending"]
        assert "waiting\t" + code in pairing_list(tmp_path / "home")
