"""With no provider configured, `seam run` answers from the bundled local model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import make_cli

pytestmark = pytest.mark.in_process


@pytest.mark.local_model
@pytest.mark.timeout(180)
def test_run_answers_offline_from_the_local_model(tmp_path: Path) -> None:
    cli = make_cli(tmp_path, {}, in_process=True)

    result = cli("run", "Say hello", timeout=120)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


@pytest.mark.local_model
def test_chat_banner_says_the_local_model_is_a_small_demo(tmp_path: Path) -> None:
    cli = make_cli(tmp_path, {}, in_process=True)

    result = cli("chat", stdin="/exit\n")

    assert result.returncode == 0, result.stderr
    banner = " ".join(result.stdout.split())
    assert "provider local" in banner
    assert "small offline demo model (SmolLM2-135M)" in banner
    assert "OPENAI_API_KEY" in banner and "OPENAI_BASE_URL" in banner
    assert str(cli.home / "config.toml") in banner
