"""`seam gateway` refuses to start, in one line, when there is nothing it could run."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import make_cli


def test_without_a_platform_or_a_token_seam_gateway_says_so(tmp_path: Path) -> None:
    # In this process: the messages are what is checked, not the process (saves three
    # `seam` start-ups).
    provider = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    cli = make_cli(tmp_path, provider, in_process=True)
    nothing = cli("gateway")
    assert nothing.returncode == 2
    assert nothing.stderr == (
        "seam: no chat platform is configured: add [gateway.telegram] (or slack, discord) "
        "to config.toml\n"
    )
    cli.write_config('[gateway.telegram]\nallow = ["1"]\n')
    no_token = cli("gateway")
    assert no_token.returncode == 2
    assert "TELEGRAM_BOT_TOKEN is not set" in no_token.stderr
    assert len(no_token.stderr.splitlines()) == 1
    cli.write_config('[gateway.telegram]\nallow = "1"\n')
    bad = cli("gateway")
    assert bad.returncode == 2 and "[gateway] telegram.allow" in bad.stderr
