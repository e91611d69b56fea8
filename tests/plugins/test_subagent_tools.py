"""`delegate_task` and `workflow` through a real runtime: children are durable sessions
built by the same factory, with lineage back to the parent."""

from __future__ import annotations

from seam.contracts.events import Done, ToolEnd
from seam.core import (
    InMemoryExecutionStore,
    ScriptedModel,
    StaticPersonalityRegistry,
    Workflow,
    WorkflowNode,
    WorkflowRegistry,
    call,
    text_step,
    tool_step,
)
from seam.wiring import Runtime, assemble_runtime


def runtime(steps: list, workflows: WorkflowRegistry | None = None) -> Runtime:  # type: ignore[type-arg]
    return assemble_runtime(
        model=ScriptedModel(steps),
        store=InMemoryExecutionStore(),
        personalities=StaticPersonalityRegistry(),
        workflows=workflows,
    )


async def test_delegate_task_returns_the_childs_answer() -> None:
    delegate = call("delegate_task", task="Count the words in 'a b c'.")
    rt = runtime([tool_step(delegate), text_step("3 words"), text_step("The subagent says 3.")])
    seen: list[object] = []
    sub = await rt.ask("main", "delegate it", on_event=seen.append)
    assert (sub.outcome, sub.result) == ("completed", "The subagent says 3.")
    [end] = [e for e in seen if isinstance(e, ToolEnd)]
    assert (end.name, end.result, end.is_error) == ("delegate_task", "3 words", False)
    child = f'agent-session:["local","default","task:main:{delegate.id}"]'
    info = await rt.store.get(child)
    assert info is not None and info.parent_key == rt.session_key_for("main")
    assert [m.content for m in await rt.store.messages(child)] == [
        "Count the words in 'a b c'.",
        "3 words",
    ]
    [child_sub] = await rt.store.submissions(child)
    assert child_sub.outcome == "completed"


async def test_workflow_nodes_run_in_order_as_child_sessions() -> None:
    workflows = WorkflowRegistry(
        [
            Workflow(
                "review",
                "draft then polish",
                (
                    WorkflowNode("draft", "Draft a reply to: {input}"),
                    WorkflowNode("polish", "Polish this draft: {previous}"),
                ),
            )
        ]
    )
    run = call("workflow", name="review", input="thanks for the gift")
    model = ScriptedModel(
        [
            tool_step(run),
            text_step("thx 4 gift"),
            text_step("Thank you for the gift!"),
            text_step("Done: Thank you for the gift!"),
        ]
    )
    rt = assemble_runtime(
        model=model,
        store=InMemoryExecutionStore(),
        personalities=StaticPersonalityRegistry(),
        workflows=workflows,
    )
    seen: list[object] = []
    sub = await rt.ask("main", "run the review workflow", on_event=seen.append)
    assert sub.result == "Done: Thank you for the gift!"
    [end] = [e for e in seen if isinstance(e, ToolEnd)]
    assert end.result == "Thank you for the gift!"
    # The polish node saw the draft node's answer.
    assert model.requests[2].messages[-1].content == "Polish this draft: thx 4 gift"
    children = [i for i in await rt.store.list() if i.parent_key is not None]
    assert len(children) == 2


async def test_an_unknown_workflow_is_a_tool_error_the_model_reads() -> None:
    workflows = WorkflowRegistry([Workflow("review", "r", (WorkflowNode("a", "{input}"),))])
    rt = runtime([tool_step(call("workflow", name="nope", input="x")), text_step("ok")], workflows)
    seen: list[object] = []
    await rt.ask("main", "go", on_event=seen.append)
    [end] = [e for e in seen if isinstance(e, ToolEnd)]
    assert end.is_error and "no workflow 'nope'" in end.result and "review" in end.result
    assert isinstance(seen[-1], Done)


async def test_a_subagent_that_halts_is_an_error_its_parent_reads() -> None:
    from seam.core.loop import LoopOptions

    delegate = call("delegate_task", task="Keep trying.")
    steps = [
        tool_step(delegate),
        tool_step(call("no_such_tool")),  # the child's two model calls...
        tool_step(call("no_such_tool")),  # ...and then its iterations are used up
        text_step("The subagent could not finish."),
    ]
    rt = assemble_runtime(
        model=ScriptedModel(steps),
        store=InMemoryExecutionStore(),
        options=LoopOptions(max_iterations=2),
    )
    seen: list[object] = []
    sub = await rt.ask("main", "delegate it", on_event=seen.append)
    assert (sub.outcome, sub.result) == ("completed", "The subagent could not finish.")
    [end] = [e for e in seen if isinstance(e, ToolEnd) and e.name == "delegate_task"]
    assert end.is_error
    assert "the subagent halted (max_iterations)" in end.result
    assert "stopped after 2 model calls" in end.result
