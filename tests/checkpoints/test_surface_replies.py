"""The chat gateways' `/undo` reply and the ACP `/undo` prompt, in process over a real
runtime with checkpoints: a person's newer edit is named and kept until `/undo yes`, and
only `/undo` (or `/undo yes`) is the command."""

from __future__ import annotations

from pathlib import Path

from seam.apps.acp.undo import is_undo
from seam.apps.gateway.undo import undo_reply
from seam.core import ScriptedModel
from seam.core.scripted_model import text_step
from tests.checkpoints.surface_support import project, runtime_over, write_turn


async def test_gateway_undo_keeps_a_newer_edit_until_yes(tmp_path: Path) -> None:
    root = project(tmp_path)
    model = ScriptedModel([*write_turn("notes.txt", "agent\n"), text_step("talk")])
    async with runtime_over(model, tmp_path, root) as runtime:
        key = runtime.session_key_for("chat")
        assert "no turns yet" in await undo_reply(runtime, key, "")
        await runtime.ask("chat", "edit")
        (root / "notes.txt").write_text("mine\n")
        asked = await undo_reply(runtime, key, "")
        assert asked.startswith("You changed notes.txt after turn 1") and "/undo yes" in asked
        assert (root / "notes.txt").read_text() == "mine\n"
        done = await undo_reply(runtime, key, "yes")
        assert done == "Undid turn 1: restored notes.txt. I no longer remember that turn."
        assert (root / "notes.txt").read_text() == "first version\n"
        assert (await undo_reply(runtime, key, "")).startswith("Nothing to undo")
        runtime.checkpoints = None
        assert "off" in await undo_reply(runtime, key, "")


def test_only_undo_is_the_acp_command() -> None:
    assert is_undo("/undo") == "" and is_undo(" /undo YES ") == "yes"
    for text in ("undo", "/undone", "/undo this and that", "please /undo", ""):
        assert is_undo(text) is None
