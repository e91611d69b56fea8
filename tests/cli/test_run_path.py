"""The path of a one-shot `seam run` does each thing once (#23): it reads the settings
once, derives the session key once and opens the runtime once.

Counted by wrapping the real functions where the command calls them; the command runs in
this process against the loopback provider.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from seam.wiring import runtime as runtime_module
from seam.wiring import settings as settings_module
from seam.wiring.runtime import Runtime
from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process


def _counting(calls: Counter[str], name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return real(*args, **kwargs)

    return counted


@pytest.mark.parametrize("named", [False, True], ids=["fresh", "--session"])
def test_a_one_shot_run_does_each_step_once(
    cli: Cli, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, named: bool
) -> None:
    calls: Counter[str] = Counter()
    configs: list[Path] = []
    real_read = settings_module.read_config

    def read_config(path: Path) -> Any:
        configs.append(path)
        return real_read(path)

    # `load_settings` reads config.toml through this module-level name, wherever it is
    # called from; the key is derived through the name `runtime.py` imported.
    monkeypatch.setattr(settings_module, "read_config", read_config)
    derive = runtime_module.create_session_storage_key
    monkeypatch.setattr(
        runtime_module, "create_session_storage_key", _counting(calls, "key", derive)
    )
    real_open = Runtime.open

    async def open_(self: Runtime) -> Runtime:
        calls["open"] += 1
        return await real_open(self)

    monkeypatch.setattr(Runtime, "open", open_)
    openai_server.push(text_reply("hello"))

    result = cli("run", *(["--session", "notes"] if named else []), "hi")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"
    assert configs == [cli.home / "config.toml"]
    assert calls == {"key": 1, "open": 1}
