"""The `[context]` and `[reflection]` sections reach the loop, the prompt and the hooks."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.core import ScriptedModel, text_step
from seam.wiring import create_runtime
from seam.wiring.context import TOOL_GUIDANCE
from seam.wiring.settings import ConfigError, load_settings

CONFIG = """\
[context]
window = 50000
compress_at = 0.6
warn_at = 0
protect_last = 10
files = ["AGENTS.md", "NOTES.md"]
max_file_chars = 100

[reflection]
enabled = true
"""


async def test_context_and_reflection_settings_are_wired(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Use tabs.", encoding="utf-8")
    (project / "NOTES.md").write_text("n" * 500, encoding="utf-8")
    settings = load_settings({}, home=home, working_dir=project)
    # The reflection has no side model configured: it uses the main model after the turn.
    model = ScriptedModel([text_step("Tabs it is."), text_step("user: prefers tabs")])
    runtime = create_runtime(settings=settings, model=model)
    options = runtime.loop.options
    assert (options.context_window, options.compress_at, options.context_warn_at) == (
        50_000,
        0.6,
        None,
    )
    assert (options.protect_first, options.protect_last) == (3, 10)
    assert runtime.reflection is not None

    events = [e async for e in runtime.run("s", "tabs or spaces?")]
    assert events[-1].text == "Tabs it is."
    await runtime.reflection.drain()
    system = model.requests[0].system
    assert TOOL_GUIDANCE["memory"] in system
    assert "## Project context (AGENTS.md)\nUse tabs." in system
    assert "n" * 100 + "\n[… NOTES.md truncated: 100 of 500 chars shown]" in system
    assert "prefers tabs" in (home / "memory" / "USER.md").read_text(encoding="utf-8")
    await runtime.aclose()


async def test_defaults_compress_at_75_percent_and_leave_reflection_off(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path / "home", working_dir=tmp_path)
    runtime = create_runtime(settings=settings, model=ScriptedModel([]))
    options = runtime.loop.options
    assert (options.context_window, options.compress_at, options.context_warn_at) == (
        None,
        0.75,
        0.85,
    )
    assert runtime.reflection is None
    await runtime.aclose()


def test_thresholds_must_be_shares_of_the_window(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[context]\ncompress_at = 75\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"context\.compress_at"):
        load_settings({}, home=tmp_path)


async def test_closing_the_runtime_lets_a_running_review_finish(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[reflection]\nenabled = true\n", encoding="utf-8")
    settings = load_settings({}, home=home, working_dir=tmp_path)
    model = ScriptedModel([text_step("Noted."), text_step("user: likes short answers")])
    runtime = create_runtime(settings=settings, model=model)
    events = [e async for e in runtime.run("s", "keep it short")]
    assert events[-1].text == "Noted."
    await runtime.aclose()  # `seam run` exits right after its answer
    assert "likes short answers" in (home / "memory" / "USER.md").read_text(encoding="utf-8")
