"""Every model call of a `seam run` shares one TCP connection to the provider.

The OpenAI-compatible client reads each streamed answer to the end of its body (past
`data: [DONE]`), so httpx hands the connection back to its pool and the next call of the
turn reuses it: no new TCP (or TLS) handshake per model call. Counted at the loopback
server, with `seam` as a process of its own.
"""

from __future__ import annotations

import json

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply


def test_a_multi_call_turn_uses_one_connection(cli: Cli, openai_server: OpenAIServer) -> None:
    (cli.project / "note.txt").write_text("the note\n")
    read = ("read_file", json.dumps({"path": "note.txt"}))
    openai_server.push(
        tool_call_reply([read]),
        tool_call_reply([read], id_offset=1),
        text_reply("The note says: the note."),
    )

    result = cli.spawn("run", "--session", "reuse", "read the note twice")

    assert result.returncode == 0, result.stderr
    assert "The note says" in result.stdout
    assert len(openai_server.chat_requests) >= 3
    assert openai_server.connections_accepted == 1
