"""The MCP client against npm's @modelcontextprotocol/server-everything (a real server).

Resources listed and read by the model, progress notes on the event stream, an image in
a tool result attached for the model's next step, elicitation as an approval-style
question, prompts as chat commands. The model's decisions are scripted; the runtime,
the registry, the approval bridge and the server process are real.
"""

from __future__ import annotations

import pytest

from seam.contracts.events import ToolApprovalRequired, ToolProgress
from seam.core.scripted_model import call, tool_step
from seam.plugins.mcp.prompts import PromptError, parse_command
from seam.plugins.mcp.servers import McpServers
from tests.mcp.installed import everything
from tests.plugins.test_mcp import ends, runtime_with, turn

ARCHITECTURE = "demo://resource/static/document/architecture.md"


async def test_resources_are_listed_and_read_by_the_model() -> None:
    servers = McpServers([everything()])
    runtime, model = runtime_with(
        servers,
        tool_step(call("mcp__resources")),
        tool_step(call("mcp__read_resource", server="everything", uri=ARCHITECTURE)),
        tool_step(
            call("mcp__read_resource", server="everything", uri="demo://resource/dynamic/text/7")
        ),
        tool_step(call("mcp__read_resource", server="nowhere", uri=ARCHITECTURE)),
    )
    async with runtime:
        listing, document, templated, unknown = ends(await turn(runtime))
    offered = {tool.name for tool in model.requests[0].tools}
    assert {"mcp__resources", "mcp__read_resource"} <= offered
    assert f"everything  {ARCHITECTURE}  architecture.md (text/markdown)" in listing.result
    assert "demo://resource/dynamic/text/{resourceId}" in listing.result
    assert "(a template" in listing.result
    assert document.result.startswith(f"[resource {ARCHITECTURE}]\n")
    assert len(document.result) > 200 and not document.is_error
    assert "Resource 7" in templated.result
    assert unknown.is_error and "servers with resources: everything" in unknown.result


async def long_operation(duration: float, steps: int) -> tuple[list[str], str]:
    """The progress notes of one long-running operation, and its result."""
    arguments = {"duration": duration, "steps": steps}
    step = tool_step(call("mcp__everything__trigger-long-running-operation", **arguments))
    runtime, _ = runtime_with(McpServers([everything()]), step)
    async with runtime:
        events = await turn(runtime)
    [end] = ends(events)
    return [e.message for e in events if isinstance(e, ToolProgress)], end.result


async def test_progress_notes_are_tool_progress_events() -> None:
    notes, result = await long_operation(1.5, 3)
    assert notes == ["1/3", "2/3", "3/3"]
    assert "Long running operation completed" in result


async def test_a_flood_of_progress_notes_is_thinned_to_a_few_events() -> None:
    notes, _ = await long_operation(0.5, 50)
    assert notes[0] == "1/50" and notes[-1] == "50/50"
    assert 2 <= len(notes) <= 12  # of 50 (about 3 at 0.25 s apart; a slow machine more)


async def test_an_image_reaches_the_models_next_step_with_a_placeholder() -> None:
    servers = McpServers([everything()])
    runtime, model = runtime_with(servers, tool_step(call("mcp__everything__get-tiny-image")))
    async with runtime:
        [end] = ends(await turn(runtime))
    assert "[image image/png, " in end.result and "sha256 " in end.result
    tool_message = model.requests[1].messages[-1]
    assert tool_message.role == "tool"
    [image] = tool_message.images
    assert image.mime_type == "image/png" and image.size > 0
    assert image.sha256[:16] in tool_message.content


@pytest.mark.parametrize("answer", ["once", "deny", "unavailable"])
async def test_elicitation_needing_typed_values_is_declined_without_asking(answer: str) -> None:
    servers = McpServers([everything()])
    runtime, _ = runtime_with(
        servers, tool_step(call("mcp__everything__trigger-elicitation-request"))
    )
    async with runtime:
        events = await turn(runtime, answer=answer)
    assert not [e for e in events if isinstance(e, ToolApprovalRequired)]
    notes = [e.message for e in events if isinstance(e, ToolProgress)]
    assert notes == ["everything asked for name; Seam cannot ask for typed values, so it declined"]
    [end] = ends(events)
    assert "declined" in end.result.lower()


@pytest.mark.parametrize(("answer", "action"), [("once", "accept"), ("deny", "decline")])
async def test_a_url_elicitation_is_a_question_with_the_url(answer: str, action: str) -> None:
    servers = McpServers([everything()])
    runtime, _ = runtime_with(
        servers,
        tool_step(call("mcp__everything__trigger-url-elicitation", url="https://example.com/x")),
    )
    async with runtime:
        events = await turn(runtime, answer=answer)
    [asked] = [e for e in events if isinstance(e, ToolApprovalRequired)]
    assert asked.command == "open https://example.com/x"
    assert asked.reason.startswith("MCP server 'everything' asks: ")
    [end] = ends(events)
    assert action in end.result.lower()


async def test_prompts_become_turn_text_and_bad_arguments_are_one_line() -> None:
    servers = McpServers([everything()])
    try:
        simple = await servers.prompt(parse_command("/everything:simple-prompt", ""))
        args = await servers.prompt(parse_command("/everything:args-prompt", "city=Paris"))
        bare = await servers.prompt(parse_command("/everything:args-prompt", "Lyon 'Rhône'"))
        embedded = await servers.prompt(
            parse_command("/everything:resource-prompt", "resourceType=Text resourceId=3")
        )
        status = (await servers.status())[0]
        failures = []
        for name, rest in [
            ("/everything:args-prompt", ""),
            ("/everything:args-prompt", "town=Paris"),
            ("/everything:no-such", ""),
            ("/nowhere:simple-prompt", ""),
        ]:
            with pytest.raises(PromptError) as caught:
                await servers.prompt(parse_command(name, rest))
            failures.append(str(caught.value))
    finally:
        await servers.aclose()
    assert "simple prompt" in simple.lower()
    assert "Paris" in args
    assert "Lyon" in bare and "Rhône" in bare
    assert "[resource demo://resource/dynamic/text/3]" in embedded
    assert "/everything:args-prompt city=… [state=…]" in status.prompts
    assert failures == [
        "missing city; usage: /everything:args-prompt city=… [state=…]",
        "unknown argument 'town'; usage: /everything:args-prompt city=… [state=…]",
        "MCP server 'everything' has no prompt 'no-such' (its prompts: simple-prompt,"
        " args-prompt, completable-prompt, resource-prompt)",
        "no MCP server 'nowhere' (servers: everything)",
    ]
