"""The sandbox's limits and its refusal, as the model meets them through the real tools.

`seam run` against the scripted loopback model: a memory hog and a fork loop each end in
a tool error naming the limit and its config key, and the next tool call of the same run
works. Where bubblewrap cannot run and `local` was not chosen, the terminal tool refuses
with the fix instead of running the command on the host.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seam.contracts.sandbox import SandboxError
from seam.services.sandbox.bwrap import DEFAULT_BWRAP, bwrap_available
from seam.services.sandbox.cgroups import shared_cgroups
from seam.services.sandbox.unavailable import UnavailableSandboxProvider
from seam.wiring import sandbox as wiring_sandbox
from seam.wiring.settings import load_settings
from tests.cli.conftest import Cli, tool_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

BWRAP = Path(DEFAULT_BWRAP).exists() and bwrap_available()
CONTROLLERS = shared_cgroups().controllers
PERSONALITY = 'name = "Seam"\napproval_mode = "off"\n'


HOG = "python3 -c 'x = bytearray(10**9)'"
FORKS = "while true; do sleep 30 & done"


def configure(cli: Cli, backend: str) -> None:
    cli.write_config(f'[sandbox]\nbackend = "{backend}"\nmemory_mb = 64\nmax_processes = 24\n')
    path = cli.home / "personalities/default/config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PERSONALITY)
    (cli.home / "personalities/default/SOUL.md").write_text("You are careful.\n")


def terminal(command: str) -> tuple[str, str]:
    return ("terminal", json.dumps({"command": command}))


BACKENDS = ["local", pytest.param("bwrap", marks=pytest.mark.skipif(not BWRAP, reason="no bwrap"))]


@pytest.mark.skipif(not {"memory", "pids"} <= CONTROLLERS, reason="no memory/pids cgroup here")
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_memory_hog_and_a_fork_loop_are_tool_errors_and_the_agent_goes_on(
    cli: Cli, openai_server: OpenAIServer, backend: str
) -> None:
    configure(cli, backend)
    openai_server.push(
        tool_call_reply([terminal(HOG)]),
        tool_call_reply([terminal(FORKS)]),
        tool_call_reply([terminal("echo still working")]),
        text_reply("Done."),
    )
    if backend == "local":  # every command not proven read-only asks: approve each once
        result = cli("chat", stdin="go\no\no\no\n/exit\n", timeout=60)
    else:
        result = cli("run", "--yes", "go", timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Done." in result.stdout
    [memory] = tool_messages(openai_server, 1)
    assert memory["content"].startswith(
        "error: killed: exceeded the sandbox memory limit (64 MB; [sandbox] memory_mb)"
    )
    [forks] = tool_messages(openai_server, 2)[-1:]
    assert forks["content"].startswith(
        "error: killed: exceeded the sandbox process limit (24 processes; [sandbox] max_processes)"
    )
    [last] = tool_messages(openai_server, 3)[-1:]
    assert last["content"].startswith("exit code 0") and "still working" in last["content"]


async def test_without_bubblewrap_commands_are_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "seam"
    home.mkdir()
    monkeypatch.setattr(wiring_sandbox, "bwrap_available", lambda: False)
    for backend in ("auto", "bwrap"):
        (home / "config.toml").write_text(f'[sandbox]\nbackend = "{backend}"\n')
        settings = load_settings({"SEAM_HOME": str(home)}, working_dir=tmp_path)
        provider = wiring_sandbox.build_sandboxes(settings)
        assert isinstance(provider, UnavailableSandboxProvider)
        sandbox = provider.for_session("s", working_dir=str(tmp_path), network=False)
        with pytest.raises(SandboxError) as raised:
            await sandbox.run("echo hi > touched")
        [line] = str(raised.value).splitlines()
        assert "install bubblewrap" in line and '[sandbox] backend = "local"' in line
        assert not (tmp_path / "touched").exists()
    (home / "config.toml").write_text('[sandbox]\nbackend = "local"\n')
    settings = load_settings({"SEAM_HOME": str(home)}, working_dir=tmp_path)
    assert wiring_sandbox.build_sandboxes(settings).name == "local"  # type: ignore[attr-defined]


def test_doctor_fails_the_sandbox_check_without_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seam.apps.doctor.parts import sandbox_check as _sandbox

    monkeypatch.setattr(wiring_sandbox, "bwrap_available", lambda: False)
    settings = load_settings({"SEAM_HOME": str(tmp_path)}, working_dir=tmp_path)
    check = _sandbox(settings)
    assert not check.ok
    assert "every command is refused" in check.detail
    assert "install bubblewrap" in str(check.hint)
