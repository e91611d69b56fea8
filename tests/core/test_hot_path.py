"""The per-turn shortcuts keep the values and the behaviour of what they replace: the
record copies, the shared reads of sessions starting together, the scoped storage built
every turn, and the keyword check."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field

import pytest

from seam.contracts.context import PromptInputs
from seam.contracts.execution import Submission
from seam.contracts.sessions import SessionInfo
from seam.contracts.tools import ToolContext
from seam.core import InMemoryStorage
from seam.core.context import DefaultContextBuilder
from seam.core.loop_parts import check_keywords
from seam.core.read_through import replaced
from seam.core.storage import ScopedStorage


def test_replaced_is_dataclasses_replace() -> None:
    sub = Submission("s1", "key", "hi", "queued", 1.0, 2.0, images=("abc",))
    assert replaced(sub, state="running", attempts=2) == dataclasses.replace(
        sub, state="running", attempts=2
    )
    assert replaced(sub) == sub
    info = SessionInfo("key", None, "default", 1.0, 2.0, 0, tools=("echo",))
    assert replaced(info, message_count=3) == dataclasses.replace(info, message_count=3)
    ctx = ToolContext("key", InMemoryStorage(), call_id="a")
    copied = replaced(ctx, call_id="b")
    assert copied.call_id == "b" and copied.cancel is ctx.cancel and copied.storage is ctx.storage


def test_replaced_refuses_a_name_that_is_no_field() -> None:
    sub = Submission("s1", "key", "hi", "queued", 1.0, 2.0)
    with pytest.raises(TypeError, match="nope"):
        replaced(sub, nope=1)


@dataclass(frozen=True)
class KeywordOnly:
    a: int
    b: int = field(default=0, kw_only=True)
    c: list[int] = field(default_factory=list, init=False)


def test_replaced_leaves_unusual_classes_to_dataclasses() -> None:
    value = KeywordOnly(1, b=2)
    assert replaced(value, b=3) == KeywordOnly(1, b=3)


def test_check_keywords_refuses_an_unknown_keyword_only() -> None:
    check_keywords({"a": 1}, frozenset({"a", "b"}), "f")
    check_keywords({"a": 1}, ("a",), "f")
    with pytest.raises(TypeError, match="f\\(\\) got an unexpected keyword argument 'c'"):
        check_keywords({"a": 1, "c": 2}, frozenset({"a"}), "f")


class CountingStorage(InMemoryStorage):
    """Counts reads, each of which waits for `gate` (a read under way)."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(files)
        self.reads = 0
        self.gate = asyncio.Event()

    async def read_text(self, path: str) -> str:
        self.reads += 1
        await self.gate.wait()
        return await super().read_text(path)


def inputs_for(storage: ScopedStorage) -> PromptInputs:
    return PromptInputs("soul", [], None, storage, storage.working_dir)


async def test_sessions_starting_together_share_one_read_of_the_project_files() -> None:
    inner = CountingStorage({"/proj/AGENTS.md": "Use tabs."})
    builder = DefaultContextBuilder()
    scoped = [ScopedStorage(inner, working_dir="/proj") for _ in range(3)]
    builds = [
        asyncio.ensure_future(builder.build(f"s{n}", inputs_for(scoped[n]))) for n in range(3)
    ]
    await asyncio.sleep(0)
    inner.gate.set()
    prompts = await asyncio.gather(*builds)
    assert inner.reads == 1
    assert all("Use tabs." in built.system for built in prompts)
    # A session that starts after the read ended reads the files again (an edit shows).
    await inner.write_text("/proj/AGENTS.md", "Use spaces.")
    later = await builder.build("s4", inputs_for(ScopedStorage(inner, working_dir="/proj")))
    assert inner.reads == 2
    assert "Use spaces." in later.system


async def test_sessions_with_another_view_read_their_own_files() -> None:
    inner = CountingStorage({"/a/AGENTS.md": "A rules.", "/b/AGENTS.md": "B rules."})
    inner.gate.set()
    builder = DefaultContextBuilder()
    first, second = await asyncio.gather(
        builder.build("s1", inputs_for(ScopedStorage(inner, working_dir="/a"))),
        builder.build("s2", inputs_for(ScopedStorage(inner, working_dir="/b"))),
    )
    assert inner.reads == 2
    assert "A rules." in first.system and "B rules." in second.system


def test_a_scoped_storage_resolves_its_roots_as_before() -> None:
    inner = InMemoryStorage({"/proj/sub/x.txt": "x"})
    scoped = ScopedStorage(inner, working_dir="/proj", read=(".", "sub", "."), write=("sub",))
    assert scoped.reach.read == ("/proj", "/proj/sub")
    assert scoped.reach.write == ("/proj/sub",)
    same = ScopedStorage(inner, working_dir="/proj/", read=(".", "sub"), write=("sub",))
    assert same.view == scoped.view
    assert ScopedStorage(inner, working_dir="/other").view != scoped.view
