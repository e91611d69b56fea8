"""The heartbeat and delivery as the settings wire them: checklist files, the agent's reach,
`seam heartbeat status` lines, and `seam dnd` over a real outbox."""

from __future__ import annotations

from pathlib import Path

from seam.contracts.delivery import Notice
from seam.contracts.messages import Usage
from seam.contracts.storage import Reach
from seam.core.execution import InMemoryExecutionStore
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, text_step
from seam.testing.clock import ManualClock
from seam.wiring import assemble_runtime
from seam.wiring.delivery import build_dnd, delivery_for, dnd_command
from seam.wiring.heartbeat import (
    beat,
    checklist_path,
    heartbeat_kind,
    status_lines,
    with_heartbeat,
)
from seam.wiring.reach import fs_deny
from seam.wiring.settings import Settings, load_settings

NOON = 1_781_092_800.0  # 2026-06-10 12:00 UTC


def settings_with(tmp_path: Path, config: str) -> Settings:
    home = tmp_path / ".seam"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(config)
    return load_settings({"HOME": str(tmp_path)}, home=home, working_dir=tmp_path)


def test_the_personality_folder_checklist_wins_over_the_home_one(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, '[heartbeat]\nevery = "30m"\npersonality = "work"\n')
    assert checklist_path(settings) == settings.home / "HEARTBEAT.md"
    own = settings.personalities_dir / "work" / "HEARTBEAT.md"
    own.parent.mkdir(parents=True)
    own.write_text("- work things")
    assert checklist_path(settings) == own


def test_the_agent_cannot_reach_the_toggle_the_checklist_or_the_ledger(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, "")
    reach = Reach(read=(str(tmp_path),), write=(str(tmp_path),), deny=tuple(fs_deny(settings)))
    for name in ("dnd.json", "HEARTBEAT.md", "heartbeat.jsonl", "deliveries/out.md"):
        path = str((settings.home / name).resolve())
        assert not reach.readable(path) and not reach.writable(path), name


async def test_status_shows_the_last_runs_tokens_cost_and_next_due(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, '[heartbeat]\nevery = "30m"\ndeliver = "file:beats.md"\n')
    (settings.home / "HEARTBEAT.md").write_text("- Is the disk full?")
    clock = ManualClock(NOON)
    model = ScriptedModel(
        [
            text_step("HEARTBEAT_OK", usage=Usage(input_tokens=150, output_tokens=3)),
            text_step("The disk is 95% full.", usage=Usage(input_tokens=152, output_tokens=8)),
        ]
    )
    runtime = assemble_runtime(
        model=model,
        store=InMemoryExecutionStore(clock=clock),
        personalities=with_heartbeat(StaticPersonalityRegistry(), settings),
        settings=settings,
        pricing=lambda provider, name, usage: usage.input_tokens * 1e-6,
    )
    await beat(runtime, clock=clock)
    clock.advance(1800)
    await beat(runtime, clock=clock)
    clock.advance(1800)
    await dnd_command("on", build_dnd(settings, clock=clock), runtime.store, now=clock())  # type: ignore[arg-type]
    await beat(runtime, clock=clock)

    lines = status_lines(settings, now=clock.now)
    assert lines == [
        "heartbeat: every 30m as default, delivers to file:beats.md",
        "next due: 2026-06-10 13:30 UTC",
        f"checklist: {settings.home / 'HEARTBEAT.md'}",
        "idle beats: skipped, no model call, when nothing is new since the last all-clear",
        "last runs:",
        "  2026-06-10T13:00:00Z  skipped    quiet hours",
        "  2026-06-10T12:30:00Z  delivered  160 tokens (152 in)  $0.0002  queued"
        "  'The disk is 95% full.'",
        "  2026-06-10T12:00:00Z  ok         153 tokens (150 in)  $0.0001",
        "last 3 runs: 313 tokens, $0.0003",
    ]


def test_status_when_off(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, "")
    assert status_lines(settings, now=NOON) == [
        f'heartbeat: off (set [heartbeat] every = "30m" in {settings.config_path})',
        f"checklist: {settings.home / 'HEARTBEAT.md'} (missing: beats skip)",
        "last runs: none yet",
    ]


async def test_the_cron_kind_is_built_from_the_runtimes_settings(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, '[heartbeat]\nevery = "30m"\n')
    (settings.home / "HEARTBEAT.md").write_text("- Is the disk full?")
    runtime = assemble_runtime(
        model=ScriptedModel([]),
        personalities=with_heartbeat(StaticPersonalityRegistry(), settings),
        settings=settings,
    )
    kind = heartbeat_kind(runtime)
    assert kind.checklist() == "- Is the disk full?"
    assert await kind.skip_reason(object(), NOON) is None  # type: ignore[arg-type]
    await build_dnd(settings).toggle_indefinite(True)
    assert await kind.skip_reason(object(), NOON) == "quiet hours"  # type: ignore[arg-type]


async def test_owner_is_the_gateway_owner_of_the_config(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, '[gateway]\nowner = "telegram:123456789"\n')
    runtime = assemble_runtime(model=ScriptedModel([]), settings=settings)
    delivery = delivery_for(runtime)
    assert delivery.resolve("owner") == "telegram:123456789"
    result = await delivery.deliver("owner", "hello", Notice(key="k"))
    assert result.item is not None and result.item.target == "telegram:123456789"
