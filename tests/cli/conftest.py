"""Fixtures for driving the real `seam` command.

Each test gets a project folder (the working directory), its own HOME and SEAM_HOME, and
a provider environment pointing at the loopback OpenAI server, and nothing from the
outer shell's provider settings.

`cli(...)` runs the console script as a process of its own, unless the module (or test)
is marked `pytest.mark.in_process` or made with `make_cli(..., in_process=True)`: then it
runs inside the test process (`tests/support/in_process.py`: its own environment, working
directory, stdin pipe and captured output, as a process would have), which saves the 1.6
to 2 s a `seam` process spends starting. Where the process itself is what a test checks
(signals, SIGKILL, a closed stdin, a terminal, `seam worker`), `cli.spawn(...)` and
`cli.popen(...)` always run the console script.
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

from tests.support.in_process import run_seam
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
    # True: `cli(...)` runs inside the test process (see the module's docstring).
    in_process: bool = False

    def __call__(
        self, *args: str, stdin: str | None = None, timeout: float = RUN_TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        """`seam *args`, in this process or as a process of its own (`in_process`).
        In this process `timeout` does not apply: a call that hangs is ended by
        pytest-timeout, as there is no process of its own to kill."""
        if not self.in_process:
            return self.spawn(*args, stdin=stdin, timeout=timeout)
        return run_seam(args, env=self.env, cwd=self.project, stdin=stdin)

    def spawn(
        self, *args: str, stdin: str | None = None, timeout: float = RUN_TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        """`seam *args` as a process of its own (the console script)."""
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


def make_cli(tmp_path: Path, provider_env: Mapping[str, str], *, in_process: bool = False) -> Cli:
    project = tmp_path / "project"
    project.mkdir()
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    home = user_home / ".seam"
    env.update(HOME=str(user_home), SEAM_HOME=str(home), **provider_env)
    return Cli(project=project, home=home, env=env, in_process=in_process)


@pytest.fixture
def cli(request: pytest.FixtureRequest, tmp_path: Path, openai_server: OpenAIServer) -> Cli:
    """`seam` wired to the loopback server with a test key; in the test process when the
    test is marked `in_process`."""
    return make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"},
        in_process=request.node.get_closest_marker("in_process") is not None,
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
