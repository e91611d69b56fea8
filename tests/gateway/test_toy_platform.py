"""A new chat platform is one module plus one line: `tests/gateway/toy_platform.py` is the
module, and the `monkeypatch` line below is the line (in the source tree it is one entry
in `wiring/chat_platforms.py`). From there `[gateway.toy]` validates, the gateway builds
and runs its adapter, its messages get `ty:` submission ids and answers, `seam doctor`
reports it, and `toy:<chat>` is a delivery target."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from seam.apps.doctor.gateway import gateway_checks
from seam.apps.gateway.book import ChatBook
from seam.apps.gateway.pairing import PairingStore
from seam.apps.gateway.runner import Gateway
from seam.apps.gateway.status import status_path
from seam.apps.gateway.supervisor import Supervisor, WatchOptions
from seam.core.execution import InMemoryExecutionStore
from seam.core.scripted_model import ScriptedModel, text_step
from seam.wiring import chat_platforms
from seam.wiring.delivery import build_delivery
from seam.wiring.gateway import adapter_specs
from seam.wiring.gateway_settings import gateway_section
from seam.wiring.settings import ConfigError, Settings, load_settings
from tests.gateway.harness import WAIT_LIMIT, WORKDIR, FreeLock, eventually, make_runtime
from tests.gateway.toy_platform import ROOMS, TOY, ToyRoom

CONFIG = '[gateway]\nowner = "toy:7"\n[gateway.toy]\nroom = "{room}"\nallow = ["7"]\n'


@pytest.fixture(autouse=True)
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(chat_platforms, "CHAT_PLATFORMS", (*chat_platforms.CHAT_PLATFORMS, TOY))
    yield


def toy_settings(tmp_path: Path, env: dict[str, str] | None = None) -> Settings:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(CONFIG.format(room=tmp_path.name), encoding="utf-8")
    return load_settings(
        {"TOY_TOKEN": "t"} if env is None else env, home=home, working_dir=tmp_path
    )


async def answered(room: ToyRoom, text: str) -> None:
    async with asyncio.timeout(WAIT_LIMIT):
        while ("toy:7", text) not in room.posted:
            room.changed.clear()
            await room.changed.wait()


async def test_a_registered_platform_receives_and_answers_through_the_gateway(
    tmp_path: Path,
) -> None:
    settings = toy_settings(tmp_path)
    section = gateway_section(settings)
    assert list(section.platforms()) == ["toy"] and section.allowed("toy") == {"7"}
    [spec] = adapter_specs(settings)
    store = InMemoryExecutionStore()
    runtime = make_runtime(ScriptedModel([text_step("Hello from the agent.")]), store)
    gateway = Gateway(
        runtime,
        section,
        PairingStore(tmp_path / "pairing.json"),
        working_dir=WORKDIR,
        book=ChatBook(tmp_path / "gateway-chats.json"),
    )
    supervisor = Supervisor(
        gateway,
        spec,
        FreeLock(),
        options=WatchOptions(check_every=0.05),
        status_path=status_path(settings),
        owner=section.owner,
    )
    task = asyncio.ensure_future(supervisor.run())
    try:
        room = ROOMS.setdefault(tmp_path.name, ToyRoom())
        msg = room.say("hi")
        await answered(room, "Hello from the agent.")
        sub = await store.submission(f"ty:7:{msg.message_id}")
        assert sub is not None and sub.outcome == "completed"

        async def doctor_sees_it() -> bool:
            [check] = gateway_checks(settings, clock=time.time)
            return check.name == "gateway toy" and check.ok and "connected" in check.detail

        await eventually(doctor_sees_it, "seam doctor's line for the toy platform")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await gateway.aclose()
        ROOMS.pop(tmp_path.name, None)


def test_its_token_and_targets_come_from_the_descriptor(tmp_path: Path) -> None:
    settings = toy_settings(tmp_path, env={})
    with pytest.raises(ConfigError, match=r"\[gateway.toy\] token_env: .*TOY_TOKEN is not set"):
        adapter_specs(settings)
    [check] = gateway_checks(settings)
    assert not check.ok and check.detail == "TOY_TOKEN not set"
    router = build_delivery(settings, InMemoryExecutionStore())
    assert router.check_target("toy:7:3") == "toy:7:3"
    assert router.resolve("owner") == "toy:7"


def test_without_its_line_the_table_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_platforms, "CHAT_PLATFORMS", chat_platforms.CHAT_PLATFORMS[:-1])
    with pytest.raises(ConfigError, match=r"\[gateway\] toy: Extra inputs are not permitted"):
        gateway_section(toy_settings(tmp_path))
