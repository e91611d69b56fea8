"""The MCP client against real MCP servers built with the SDK.

stdio servers run as subprocesses (tests/support/mcp_server.py); the Streamable HTTP one
is the same server mounted in uvicorn on a loopback socket. The model's decisions are
scripted; everything under them (the runtime, the registry, the validator, the injection
guard, the approval bridge) is real.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from seam.contracts.events import ToolApprovalRequired, ToolEnd
from seam.contracts.personality import Personality
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, call, text_step, tool_step
from seam.plugins.mcp.servers import McpServers
from seam.plugins.mcp.spec import ServerSpec
from seam.wiring import Runtime, assemble_runtime
from tests.support.mcp_server import build_server

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def stdio(name: str = "notes", **fields: Any) -> ServerSpec:
    return ServerSpec(name=name, command=(sys.executable, SERVER, name), **fields)


def runtime_with(
    servers: McpServers, *steps: Any, personalities: StaticPersonalityRegistry | None = None
) -> tuple[Runtime, ScriptedModel]:
    model = ScriptedModel([*steps, text_step("done")])
    runtime = assemble_runtime(model=model, mcp=servers, personalities=personalities)
    return runtime, model


async def turn(runtime: Runtime, text: str = "go", answer: str | None = None) -> list[Any]:
    events = []
    async for event in runtime.run("s", text):
        events.append(event)
        if isinstance(event, ToolApprovalRequired) and answer is not None:
            assert runtime.respond("s", event.call_id, answer)  # type: ignore[arg-type]
    return events


def ends(events: list[Any]) -> list[ToolEnd]:
    return [e for e in events if isinstance(e, ToolEnd)]


async def test_a_stdio_server_starts_on_first_use_and_its_tools_are_called() -> None:
    servers = McpServers([stdio()])
    runtime, model = runtime_with(servers, tool_step(call("mcp__notes__add", a=2, b=3)))
    async with runtime:
        assert (await servers.status())[0].state == "not started"
        events = await turn(runtime)
        [end] = ends(events)
        assert (end.name, end.result, end.is_error) == ("mcp__notes__add", "5", False)
        offered = {d.name: d for d in model.requests[0].tools}
        assert "read_file" in offered  # the default personality gets every tool
        schema = offered["mcp__notes__add"].parameters
        assert schema["required"] == ["a", "b"]
        assert offered["mcp__notes__add"].description == "Add two integers."
        assert (await servers.status())[0].state == "ready"
    assert (await servers.status())[0].state == "stopped"


async def test_arguments_are_checked_against_the_servers_schema() -> None:
    servers = McpServers([stdio()])
    bad = call("mcp__notes__add", a="two", b=3)
    quoted = call("mcp__notes__add", a="2", b="3")
    runtime, _ = runtime_with(servers, tool_step(bad), tool_step(quoted))
    async with runtime:
        first, second = ends(await turn(runtime))
    assert first.is_error
    assert "invalid arguments for mcp__notes__add" in first.result
    assert "'a'" in first.result
    assert (second.result, second.is_error) == ("5", False)  # quoted numbers are taken


async def test_streamable_http_server_with_headers_and_tool_filter() -> None:
    async with http_server() as url:
        spec = ServerSpec(
            name="docs",
            url=url,
            headers={"Authorization": "Bearer t0ken"},
            allow=("search*", "pic*"),
            deny=("picture",),
        )
        servers = McpServers([spec])
        runtime, model = runtime_with(servers, tool_step(call("mcp__docs__search", query="x")))
        async with runtime:
            [end] = ends(await turn(runtime))
            assert end.result == "found: x"
            names = [d.name for d in model.requests[0].tools if d.name.startswith("mcp__")]
            assert names == ["mcp__docs__search"]
            [status] = await servers.status()
            assert status.transport == "http"
            assert "picture" in status.hidden and "add" in status.hidden


async def test_a_crashed_server_is_reported_and_restarted_on_the_next_call() -> None:
    servers = McpServers([stdio()])
    runtime, _ = runtime_with(
        servers,
        tool_step(call("mcp__notes__pid")),
        tool_step(call("mcp__notes__crash")),
        tool_step(call("mcp__notes__pid")),
    )
    async with runtime:
        before, crashed, after = ends(await turn(runtime))
    assert crashed.is_error
    assert "restarted on the next call" in crashed.result
    assert not after.is_error
    assert after.result != before.result  # a new process answered


async def test_a_server_that_died_while_idle_is_restarted_without_an_error() -> None:
    servers = McpServers([stdio()])
    runtime, model = runtime_with(servers, tool_step(call("mcp__notes__pid")))
    async with runtime:
        [first] = ends(await turn(runtime))
        os.kill(int(first.result), signal.SIGKILL)
        async with asyncio.timeout(20):  # until the client has seen the connection close
            while (await servers.status())[0].state != "crashed":
                await asyncio.sleep(0.02)
        model.add(tool_step(call("mcp__notes__pid")), text_step("ok"))
        [second] = ends(await turn(runtime))
    assert not second.is_error
    assert second.result != first.result


async def test_a_slow_call_times_out_and_the_model_is_told() -> None:
    servers = McpServers([stdio(call_timeout=0.5)])
    runtime, _ = runtime_with(
        servers,
        tool_step(call("mcp__notes__slow", seconds=30)),
        tool_step(call("mcp__notes__add", a=1, b=1)),
    )
    async with runtime:
        slow, quick = ends(await asyncio.wait_for(turn(runtime), 60))
    assert slow.is_error
    assert "did not answer within 0.5 s" in slow.result
    assert quick.result == "2"  # the server is still usable


async def test_the_child_sees_only_the_listed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEAM_TEST_SECRET", "do-not-leak")
    servers = McpServers([stdio(env={"LISTED": "yes"})])
    runtime, _ = runtime_with(
        servers,
        tool_step(call("mcp__notes__env_keys")),
        tool_step(call("mcp__notes__env_value", key="LISTED")),
    )
    async with runtime:
        keys, listed = ends(await turn(runtime))
    seen = set(keys.result.split(","))
    assert "SEAM_TEST_SECRET" not in seen
    assert listed.result == "yes"
    sdk_minimum = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
    # What Python itself sets in a child (LC_CTYPE coercion) aside, nothing else arrives.
    assert seen - sdk_minimum - {"LISTED", "LC_CTYPE"} == set()
    assert "do-not-leak" not in "".join(os.environ.get(k, "") for k in seen if k == "LISTED")


@pytest.mark.parametrize(("answer", "granted"), [("once", True), ("deny", False)])
async def test_a_destructive_tool_asks_for_approval(answer: str, granted: bool) -> None:
    servers = McpServers([stdio()])  # approval = "auto": destructiveHint decides
    runtime, _ = runtime_with(
        servers,
        tool_step(call("mcp__notes__delete_note", title="old")),
        tool_step(call("mcp__notes__add", a=1, b=2)),  # read-only: never asks
    )
    async with runtime:
        events = await turn(runtime, answer=answer)
    asked = [e for e in events if isinstance(e, ToolApprovalRequired)]
    assert [e.name for e in asked] == ["mcp__notes__delete_note"]
    assert asked[0].command == 'mcp__notes__delete_note {"title": "old"}'
    deleted, added = ends(events)
    if granted:
        assert (deleted.result, deleted.is_error) == ("deleted old", False)
    else:
        assert deleted.is_error and "refused" in deleted.result
    assert added.result == "3"


async def test_approval_always_and_never_override_the_hints() -> None:
    servers = McpServers([stdio(approval="always")])
    runtime, _ = runtime_with(servers, tool_step(call("mcp__notes__add", a=1, b=2)))
    async with runtime:
        events = await turn(runtime, answer="session")
    assert [e.name for e in events if isinstance(e, ToolApprovalRequired)] == ["mcp__notes__add"]
    servers = McpServers([stdio(approval="never")])
    runtime, _ = runtime_with(servers, tool_step(call("mcp__notes__delete_note", title="x")))
    async with runtime:
        events = await turn(runtime)
    assert not [e for e in events if isinstance(e, ToolApprovalRequired)]
    assert ends(events)[0].result == "deleted x"


async def test_results_pass_the_injection_guard_and_images_become_a_note() -> None:
    servers = McpServers([stdio()])
    runtime, _ = runtime_with(
        servers,
        tool_step(call("mcp__notes__search", query="inject")),
        tool_step(call("mcp__notes__picture")),
    )
    async with runtime:
        injected, picture = ends(await turn(runtime))
    assert "untrusted" in injected.result.lower()
    assert picture.result.startswith("[image image/png")


async def test_a_toolset_pattern_offers_only_the_servers_it_names() -> None:
    personality = Personality(
        id="narrow", soul="You help.", toolset=("read_file", "mcp__notes__a*")
    )
    registry = StaticPersonalityRegistry([personality])
    servers = McpServers(
        [
            stdio("notes"),
            ServerSpec(name="other", command=(sys.executable, "-c", "raise SystemExit(1)")),
        ]
    )
    runtime, model = runtime_with(
        servers, tool_step(call("mcp__notes__add", a=1, b=1)), personalities=registry
    )
    async with runtime:
        await turn(runtime)
        states = {s.name: s.state for s in await servers.status()}
    offered = sorted(d.name for d in model.requests[0].tools)
    assert offered == ["mcp__notes__add", "read_file"]
    assert states["other"] == "not started"  # nothing of it was asked for


async def test_a_server_that_cannot_start_is_reported_and_the_turn_goes_on() -> None:
    broken = ServerSpec(name="broken", command=(sys.executable, "-c", "raise SystemExit(1)"))
    unset = ServerSpec(name="unset", command=(sys.executable, SERVER), problem="not set: $TOKEN")
    servers = McpServers([broken, unset])
    runtime, model = runtime_with(servers)
    async with runtime:
        events = await turn(runtime)
        found = {s.name: s for s in await servers.status()}
    assert events[-1].type == "done"
    assert not [d for d in model.requests[0].tools if d.name.startswith("mcp__")]
    assert found["broken"].state == "failed" and found["broken"].error
    assert found["unset"].error == "not set: $TOKEN"


# -- a Streamable HTTP server on loopback --


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test's loop, not the process's signals
        return None


from contextlib import asynccontextmanager  # noqa: E402


def needs_token(app: Any, token: bytes) -> Any:
    """The app behind a bearer-token check, so the test proves `headers` are sent."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != token:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"no"})
            return
        await app(scope, receive, send)

    return guarded


async def test_a_missing_header_is_reported_as_the_servers_failure() -> None:
    async with http_server() as url:
        servers = McpServers([ServerSpec(name="docs", url=url)])
        [status] = await servers.status(connect=True)
        await servers.aclose()
    assert status.state == "failed"
    assert status.error


async def test_a_run_time_server_on_a_private_address_is_refused_unless_listed() -> None:
    """Servers added at run time (an editor's, over ACP) carry `allow_private`: a URL on
    loopback is refused before any request, unless the list names it."""
    headers = {"Authorization": "Bearer t0ken"}
    async with http_server() as url:
        refused = ServerSpec(name="docs", url=url, headers=headers, allow_private=())
        listed = ServerSpec(name="ok", url=url, headers=headers, allow_private=("127.0.0.1",))
        servers = McpServers([refused, listed])
        statuses = {s.name: s for s in await servers.status(connect=True)}
        await servers.aclose()
    assert statuses["docs"].state == "failed"
    assert "127.0.0.1 is a loopback address" in statuses["docs"].error
    assert "allow_private" in statuses["docs"].error
    assert statuses["ok"].state == "ready", statuses["ok"].error


@asynccontextmanager
async def http_server() -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    app = needs_token(build_server("docs").streamable_http_app(), b"Bearer t0ken")
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()
