"""The composition root's keywords are declared once, as typed dicts (`AssemblyParts` over
the loop's `LoopParts`, `Overrides` over their shared `SharedParts`), and its public
functions unpack them: a keyword declared there is accepted, and one declared nowhere is
refused as a plain signature would refuse it (never silently dropped on the way in)."""

import inspect

import pytest

from seam.core.loop import AgentLoop
from seam.core.loop_parts import LoopParts, SharedParts
from seam.core.scripted_model import ScriptedModel
from seam.wiring import assemble_runtime, create_runtime
from seam.wiring.assembly import AssemblyParts
from seam.wiring.configure import Overrides


def test_assembly_fields_are_assemble_runtimes_parameters() -> None:
    params = inspect.signature(assemble_runtime).parameters
    assert list(params) == ["model", "given"]
    assert params["given"].kind is inspect.Parameter.VAR_KEYWORD
    assert LoopParts.__optional_keys__ <= AssemblyParts.__optional_keys__
    assert {"store", "tenant_id", "coordinator", "settings"} <= AssemblyParts.__optional_keys__


def test_overrides_fields_are_create_runtimes_parameters() -> None:
    params = inspect.signature(create_runtime).parameters
    assert list(params) == ["settings", "given"]
    assert params["given"].kind is inspect.Parameter.VAR_KEYWORD
    assert SharedParts.__optional_keys__ <= Overrides.__optional_keys__
    assert {"model", "gateway", "interactive", "on_retry"} <= Overrides.__optional_keys__


def test_a_keyword_declared_nowhere_is_refused() -> None:
    model = ScriptedModel([])
    with pytest.raises(TypeError, match="unexpected keyword argument 'tool'"):
        AgentLoop(model=model, tool=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'tool'"):
        assemble_runtime(model=model, tool=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'tool'"):
        create_runtime(model=model, tool=None)  # type: ignore[call-arg]


def test_every_declared_keyword_reaches_the_loop() -> None:
    model = ScriptedModel([])
    runtime = assemble_runtime(model=model, working_dir="/srv", fs_deny=["/etc"])
    assert runtime.loop.working_dir == "/srv"
    assert runtime.loop.fs_deny == ("/etc",)
    assert runtime.tenant_id == "local"
