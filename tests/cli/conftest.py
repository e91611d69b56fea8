"""Fixtures for driving the real `seam` console script as a subprocess.

Each test gets a project folder (the working directory), its own HOME and SEAM_HOME, and
a provider environment pointing at the loopback OpenAI server, and nothing from the
outer shell's provider settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import (
    OpenAIServer,
    openai_server_fixture,  # noqa: F401  (registers the `openai_server` fixture)
)

SEAM = Path(sys.executable).with_name("seam")
RUN_TIMEOUT = 30.0
_PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SEAM_MODEL", "SEAM_HOME")


@dataclass
class Cli:
    """Runs `seam` in `project` with `env`; `home` is where SEAM_HOME points."""

    project: Path
    home: Path
    env: dict[str, str]

    def __call__(
        self, *args: str, stdin: str | None = None, timeout: float = RUN_TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SEAM), *args],
            cwd=self.project,
            env=self.env,
            input=stdin if stdin is not None else "",
            capture_output=True,
            encoding="utf-8",
            timeout=timeout,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(SEAM), *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            encoding="utf-8",
        )

    def write_config(self, text: str) -> Path:
        self.home.mkdir(parents=True, exist_ok=True)
        path = self.home / "config.toml"
        path.write_text(text, encoding="utf-8")
        return path


def make_cli(tmp_path: Path, provider_env: Mapping[str, str]) -> Cli:
    project = tmp_path / "project"
    project.mkdir()
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    home = user_home / ".seam"
    env.update(HOME=str(user_home), SEAM_HOME=str(home), **provider_env)
    return Cli(project=project, home=home, env=env)


@pytest.fixture
def cli(tmp_path: Path, openai_server: OpenAIServer) -> Cli:
    """`seam` wired to the loopback server with a test key."""
    return make_cli(
        tmp_path, {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"}
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def sent_messages(server: OpenAIServer, index: int) -> list[dict[str, Any]]:
    """The `messages` of the server's `index`-th chat request."""
    body = server.chat_requests[index].body
    assert isinstance(body, dict), body
    return list(body["messages"])


def tool_messages(server: OpenAIServer, index: int) -> list[dict[str, Any]]:
    return [m for m in sent_messages(server, index) if m["role"] == "tool"]
