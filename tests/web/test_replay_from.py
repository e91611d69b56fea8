"""Where the page follows a session's log from (`replay_from`): after the last event of
the turns the transcript shows, so opening a session streams only a running turn."""

from __future__ import annotations

from seam.apps.web.sessions import replay_from
from seam.contracts.execution import EventRecord, Submission, SubmissionState
from seam.core import InMemoryExecutionStore

KEY = 'agent-session:["t","default","s"]'


def sub(sid: str, state: SubmissionState) -> Submission:
    return Submission(sid, KEY, "hi", state, 0.0, 0.0)


async def log(*runs: tuple[str, int, int]) -> InMemoryExecutionStore:
    """A store whose session log holds, for each (submission, first, last), a run_start
    at `first` and the deltas after it coalesced into one record ending at `last`."""
    store = InMemoryExecutionStore()
    await store.create(KEY)
    for sid, first, last in runs:
        await store.append_events(
            [
                EventRecord(KEY, first, first, "run_start", "{}", sid),
                EventRecord(KEY, last, first + 1, "text_delta", '{"pieces":[]}', sid),
            ]
        )
    return store


async def test_with_nothing_running_the_stream_starts_after_the_last_event() -> None:
    store = await log(("a", 1, 9), ("b", 10, 30))
    assert await replay_from(store, KEY, [sub("a", "settled"), sub("b", "settled")], 30) == 30


async def test_a_running_turn_is_streamed_from_its_start_however_long_it_is() -> None:
    store = await log(("a", 1, 9), ("b", 10, 5000))
    subs = [sub("a", "settled"), sub("b", "running")]
    assert await replay_from(store, KEY, subs, 5000, window=16) == 9
    assert await replay_from(store, KEY, subs, 5000) == 9


async def test_a_running_turn_that_streamed_nothing_yet_starts_after_the_last_event() -> None:
    store = await log(("a", 1, 9))
    assert await replay_from(store, KEY, [sub("a", "settled"), sub("b", "running")], 9) == 9


async def test_a_log_of_the_running_turn_alone_is_streamed_whole() -> None:
    store = await log(("b", 1, 3000))
    assert await replay_from(store, KEY, [sub("b", "running")], 3000, window=16) == 0


async def test_events_stored_after_the_transcript_was_read_are_never_skipped() -> None:
    # `last` was read before the transcript; a later turn's events come after it.
    store = await log(("a", 1, 9), ("b", 10, 20), ("c", 21, 25))
    subs = [sub("a", "settled"), sub("b", "settled"), sub("c", "running")]
    assert await replay_from(store, KEY, subs, 9) == 9
