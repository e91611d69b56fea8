"""The composition root's keywords are declared once, as typed dicts (`AssemblyParts` over
the loop's `LoopParts`, `Overrides` over their shared `SharedParts`), and its public
functions unpack them: a keyword declared there is accepted, and one declared nowhere is
refused as a plain signature would refuse it (never silently dropped on the way in)."""

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from seam.core.loop import AgentLoop
from seam.core.loop_parts import LoopParts, SharedParts
from seam.core.scripted_model import ScriptedModel
from seam.wiring import assemble_runtime, create_runtime
from seam.wiring.assembly import AssemblyParts
from seam.wiring.configure import Overrides


@pytest.mark.parametrize(
    ("function", "first", "declared", "shared", "own"),
    [
        (assemble_runtime, "model", AssemblyParts, LoopParts, {"store", "tenant_id", "settings"}),
        (create_runtime, "settings", Overrides, SharedParts, {"model", "gateway", "on_retry"}),
    ],
)
def test_the_public_functions_unpack_their_typed_keywords(
    function: Callable[..., object],
    first: str,
    declared: Any,
    shared: Any,
    own: set[str],
) -> None:
    params = inspect.signature(function).parameters
    assert list(params) == [first, "given"]
    assert params["given"].kind is inspect.Parameter.VAR_KEYWORD
    assert shared.__optional_keys__ <= declared.__optional_keys__
    assert own <= declared.__optional_keys__


def test_a_keyword_declared_nowhere_is_refused() -> None:
    model = ScriptedModel([])
    with pytest.raises(TypeError, match="unexpected keyword argument 'tool'"):
        AgentLoop(model=model, tool=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'tool'"):
        assemble_runtime(model=model, tool=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'tool'"):
        create_runtime(model=model, tool=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'persona'"):
        AgentLoop(model=model).run("k", "hi", persona="coder")  # type: ignore[call-arg]


def test_every_declared_keyword_reaches_the_loop() -> None:
    model = ScriptedModel([])
    runtime = assemble_runtime(model=model, working_dir="/srv", fs_deny=["/etc"])
    assert runtime.loop.working_dir == "/srv"
    assert runtime.loop.fs_deny == ("/etc",)
    assert runtime.tenant_id == "local"
