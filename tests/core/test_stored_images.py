"""A person's images survive the process: admitted with a submission they are stored
(SQLite, a real file), so a worker in another process that claims it shows them to the
model; written with the turn's user message, a later turn, or a rerun after a crash,
still shows them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from seam.contracts.execution import ClaimScope, JournalEntry
from seam.contracts.images import with_placeholders
from seam.contracts.messages import Message
from seam.contracts.model import ModelRequest
from seam.contracts.turn_extras import TurnExtras
from seam.core.coordinator import Coordinator
from seam.core.loop import AgentLoop
from seam.core.scripted_model import ScriptedModel, text_step
from seam.core.session_factory import SessionFactory
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.images import png_part

KEY = 'agent-session:["local","default","main"]'
RED = png_part()


def factory_on(path: Path, *steps: str) -> tuple[SessionFactory, ScriptedModel]:
    """A process: its own store connection, model and coordinator over one file."""
    store = SQLiteSessionStore(str(path))
    model = ScriptedModel([text_step(s) for s in steps])
    loop = AgentLoop(model=model, sessions=store)
    coordinator = Coordinator(store, owner="w", dead_owners=_crashed)
    return SessionFactory(loop, store, coordinator), model


def _crashed(owners: Iterable[str]) -> list[str]:
    return [o for o in owners if o.startswith("crashed")]


def user_images(request: ModelRequest) -> list[tuple[str, ...]]:
    return [tuple(i.sha256 for i in m.images) for m in request.messages if m.role == "user"]


async def test_a_submission_admitted_with_images_shows_them_to_another_process(
    tmp_path: Path,
) -> None:
    first, _ = factory_on(tmp_path / "s.db")
    session = await first.get_or_create_root(KEY)
    text = with_placeholders("what colour is this?", [RED])
    sub = await session.submit(text, extras=TurnExtras(images=(RED,)))
    await first.store.aclose()  # the process is gone before the turn ran

    second, model = factory_on(tmp_path / "s.db", "red", "still red")
    [done] = await second.coordinator.resume_pending(second.resolve)
    assert (done.id, done.outcome) == (sub.id, "completed")
    [request] = model.requests
    assert user_images(request) == [(RED.sha256,)]
    assert request.messages[-1].images[0].data == RED.data
    # The next turn's call still shows the earlier message's image.
    await (await second.get_or_create_root(KEY)).ask("and now?")
    assert user_images(model.requests[1]) == [(RED.sha256,), ()]
    await second.store.aclose()


async def test_a_rerun_after_a_crash_still_shows_the_stored_image(tmp_path: Path) -> None:
    factory, model = factory_on(tmp_path / "s.db", "red")
    store = factory.store
    session = await factory.get_or_create_root(KEY)
    text = with_placeholders("what colour?", [RED])
    sub = await session.submit(text, extras=TurnExtras(images=(RED,)))
    await store.claim("crashed-worker", scope=ClaimScope(submission_id=sub.id))
    written = Message("user", text, images=(RED,))
    await store.append_for(sub.id, "crashed-worker", JournalEntry([written]))
    factory.coordinator.extras.offer(sub.id, TurnExtras())  # this process never had them
    [done] = await factory.coordinator.resume_pending(factory.resolve)
    assert done.outcome == "completed"
    assert user_images(model.requests[0]) == [(RED.sha256,)]
    await store.aclose()


async def test_a_renamed_session_keeps_its_images(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    await store.create("old")
    await store.append("old", [Message("user", with_placeholders("look", [RED]), images=(RED,))])
    assert await store.rename("old", "new")
    [shown] = await store.messages("new")
    assert shown.images == (RED,)
    await store.delete("new")
    assert await store.load_images([RED.sha256]) == []
    await store.aclose()
