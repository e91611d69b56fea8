"""`seam acp` driven by an npm ACP client: the official TypeScript SDK
(`@agentclientprotocol/sdk`, pinned in tests/acp/npm_client/package.json) in node, as a
JavaScript editor would: a thread's prompts, its title, a model picked, the list and
close. Skipped outside CI, saying how to install it, when node or the package is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.conftest import SEAM, Cli
from tests.support.openai_server import OpenAIServer, text_reply

# scripts/ensure-acp-client installs it outside the tree (scripts/test exports the folder);
# in CI a missing client is a failure, elsewhere a skip that says how to install it.
CLIENT = Path(os.environ.get("SEAM_ACP_NPM_CLIENT", "/nonexistent"))
NODE = shutil.which("node")
INSTALLED = (CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
if not os.environ.get("CI"):
    pytestmark = pytest.mark.skipif(
        NODE is None or not INSTALLED,
        reason="needs node and the npm ACP client: scripts/ensure-acp-client",
    )


def test_an_npm_acp_client_drives_a_thread(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / "config.toml").write_text('[model]\nfallback = ["openai:other-model"]\n')
    openai_server.push(text_reply("Looking at it."), text_reply("Done."))
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(CLIENT / "client.mjs"), str(SEAM), str(cli.project)],
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["agent"]["name"] == "seam"
    assert seen["capabilities"]["sessionCapabilities"].keys() >= {"list", "close"}
    assert seen["stops"] == ["end_turn", "end_turn"]
    assert seen["text"] == "Looking at it.Done."
    assert seen["models"][-1] == "openai:other-model" == seen["current"]
    [title] = seen["titles"]
    assert "flaky login test" in title.lower()
    [row] = seen["listed"]
    assert (row["sessionId"], row["cwd"], row["title"]) == (
        seen["sessionId"],
        str(cli.project),
        title,
    )
    assert "unknown session" in seen["afterClose"]
    second = openai_server.chat_requests[1].body
    assert isinstance(second, dict) and second["model"] == "other-model"
