"""`seam.wiring.guard`: the gate and classifier built from `$SEAM_HOME` and `[guard]`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from seam.contracts.guardrail import ApprovalDecision
from seam.wiring.guard import build_gate, build_guardrail
from seam.wiring.settings import ConfigError, Settings, load_settings


class Silent:
    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class Always:
    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision:
        return "always"


def settings(home: Path, config: str = "") -> Settings:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(config)
    return load_settings({}, home=home)


def test_the_guard_section_feeds_the_classifier(tmp_path: Path) -> None:
    guard = build_guardrail(settings(tmp_path, '[guard]\ndeny = ["make deploy*"]\n'))
    assert guard.classify("make && make deploy").rule == "user:deny:make deploy*"


async def test_always_approvals_live_in_seam_home(tmp_path: Path) -> None:
    config = settings(tmp_path)
    decision = await build_gate(config).check(
        "rm -rf build",
        session_key="s",
        tool="terminal",
        call_id="c",
        approver=Always(),
        mode="manual",
    )
    assert decision.allowed and (tmp_path / "approvals.json").exists()
    again = await build_gate(config).check(
        "rm -rf build", session_key="t", tool="terminal", call_id="c", approver=None, mode="manual"
    )
    assert again.allowed and "always approved" in again.reason


async def test_the_approval_timeout_comes_from_config(tmp_path: Path) -> None:
    gate = build_gate(settings(tmp_path, "[guard]\napproval_timeout = 0.05\n"))
    decision = await gate.check(
        "rm -rf build",
        session_key="s",
        tool="terminal",
        call_id="c",
        approver=Silent(),
        mode="manual",
    )
    assert "no one was available to approve 'rm -rf build'" in decision.reason
    assert "within 0.05 s" in decision.reason


def test_off_is_honoured_only_when_asked_for(tmp_path: Path) -> None:
    config = settings(tmp_path)

    async def in_mode_off(allow_off: bool) -> bool:
        gate = build_gate(config, allow_off=allow_off)
        decision = await gate.check(
            "git push -f", session_key="s", tool="terminal", call_id="c", approver=None, mode="off"
        )
        return decision.allowed

    assert asyncio.run(in_mode_off(True)) is True
    assert asyncio.run(in_mode_off(False)) is False


def test_a_corrupt_approvals_file_is_a_config_error(tmp_path: Path) -> None:
    config = settings(tmp_path)
    (tmp_path / "approvals.json").write_text("nope")
    with pytest.raises(ConfigError, match=r"approvals\.json: not valid JSON"):
        build_gate(config)


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (
            '[guard]\nallow = ["ok", " "]\n',
            "guard.allow.1: Value error, a rule must be a non-empty glob",
        ),
        (
            "[guard]\napproval_timeout = 0\n",
            "guard.approval_timeout: Input should be greater than 0",
        ),
        ('[guard]\nallowed = ["x"]\n', "guard.allowed: Extra inputs are not permitted"),
    ],
)
def test_a_bad_guard_section_names_the_file_and_key(
    tmp_path: Path, config: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        build_guardrail(settings(tmp_path, config))
    assert str(raised.value) == f"{tmp_path / 'config.toml'}: {problem}"


def test_seam_home_and_the_store_are_protected(tmp_path: Path) -> None:
    store = tmp_path / "elsewhere" / "seam.db"
    loaded = settings(tmp_path / "home", f'[store]\npath = "{store}"\n')
    guard = build_guardrail(loaded)
    for command in (
        f"cat {loaded.home}/approvals.json",
        f"sed -i s/manual/off/ {loaded.home}/personalities/default/config.toml",
        f"sqlite3 {store} 'DELETE FROM messages'",
        f"rm {store}-wal",
    ):
        assert guard.classify(command).rule == "floor:seam-home", command
    assert guard.classify(f"cat {tmp_path}/elsewhere/notes.txt").verdict == "safe"
