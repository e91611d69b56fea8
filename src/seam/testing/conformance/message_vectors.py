"""The `MessageVectors` conformance suite (`contracts/session_recall`): the vectors of
search by meaning, kept beside the transcript and consistent with it.

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring) that
`KeepsVectors`. Run it only for such stores (the built-in SQLite and PostgreSQL ones): a
store without vectors (the in-memory one) searches by full text alone and fails it.
"""

from __future__ import annotations

import pytest

from seam.contracts.messages import Message
from seam.contracts.session_recall import MEANING, KeepsVectors, MessageVectors
from seam.contracts.sessions import NewSession, SearchScope, SessionStore
from seam.testing.conformance.support import assistant, session_with, user

MODEL = "test-model-4"


def vector(*values: float) -> bytes:
    """A 4-dimension little-endian float32 vector."""
    import struct

    return struct.pack("<4f", *values, *([0.0] * (4 - len(values))))


def vectors_of(store: SessionStore) -> MessageVectors:
    assert isinstance(store, KeepsVectors), "run this suite only on stores that keep vectors"
    return store.message_vectors()


async def ids_of(store: SessionStore, key: str) -> list[int]:
    return sorted(await vectors_of(store).message_ids(key))


class MessageVectorsSuite:
    async def test_unindexed_lists_searchable_messages_in_id_order(
        self, store: SessionStore
    ) -> None:
        vectors = vectors_of(store)
        await session_with(
            store,
            "s",
            [
                Message("system", "you are helpful"),
                user("first"),
                Message("tool", "output", tool_call_id="c", name="t"),
                assistant(""),
                assistant("second"),
            ],
        )
        found = await vectors.unindexed(MODEL, 0, 10)
        assert [content for _, content in found] == ["first", "second"]
        assert [content for _, content in await vectors.unindexed(MODEL, 0, 1)] == ["first"]
        after = await vectors.unindexed(MODEL, found[0][0], 10)
        assert [content for _, content in after] == ["second"]

    async def test_stored_vectors_round_trip_and_leave_the_unindexed(
        self, store: SessionStore
    ) -> None:
        vectors = vectors_of(store)
        await session_with(store, "s", [user("one"), assistant("two")])
        first, second = await ids_of(store, "s")
        before = await vectors.vector_mark()
        await vectors.put_vectors(MODEL, [(first, vector(1.0)), (second, vector(0.0, 1.0))])
        assert await vectors.vector_mark() != before
        assert sorted(await vectors.vectors(MODEL, None)) == [
            (first, vector(1.0)),
            (second, vector(0.0, 1.0)),
        ]
        assert await vectors.unindexed(MODEL, 0, 10) == []
        # Another embedder's vectors are not this one's: listed again, then replaced.
        assert len(await vectors.unindexed("other-model", 0, 10)) == 2
        await vectors.put_vectors("other-model", [(first, vector(0.5))])
        assert await vectors.vectors(MODEL, None) == [(second, vector(0.0, 1.0))]
        assert [i for i, _ in await vectors.unindexed(MODEL, 0, 10)] == [first]

    async def test_a_vector_for_a_removed_message_is_skipped(self, store: SessionStore) -> None:
        vectors = vectors_of(store)
        await session_with(store, "s", [user("one")])
        (first,) = await ids_of(store, "s")
        await vectors.put_vectors(MODEL, [(first + 1000, vector(1.0)), (first, vector(1.0))])
        assert await vectors.vectors(MODEL, None) == [(first, vector(1.0))]

    async def test_delete_undo_and_prune_take_the_vectors_rename_keeps_them(
        self, store: SessionStore
    ) -> None:
        vectors = vectors_of(store)
        await session_with(store, "a", [user("one"), assistant("two"), user("three")])
        await session_with(store, "b", [user("four")])
        everything = [*await ids_of(store, "a"), *await ids_of(store, "b")]
        await vectors.put_vectors(MODEL, [(i, vector(1.0)) for i in everything])
        await store.undo("a")
        assert len(await vectors.vectors(MODEL, None)) == 3
        assert await vectors.unindexed(MODEL, 0, 10) == []
        renamer = getattr(store, "rename", None)
        if renamer is not None:
            assert await renamer("a", "a2")
            assert len(await vectors.vectors(MODEL, None)) == 3
            assert await vectors.unindexed(MODEL, 0, 10) == []
            assert await ids_of(store, "a2") == everything[:2]
        assert await store.delete("b")
        assert sorted(i for i, _ in await vectors.vectors(MODEL, None)) == everything[:2]

    async def test_vectors_and_found_messages_keep_to_the_scope(self, store: SessionStore) -> None:
        vectors = vectors_of(store)
        await store.create("alice", NewSession(tenant="alice"))
        await store.append("alice", [user("alice's words")])
        await store.create("bob", NewSession(tenant="bob"))
        await store.append("bob", [user("bob's words")])
        (alice,), (bob,) = await ids_of(store, "alice"), await ids_of(store, "bob")
        await vectors.put_vectors(MODEL, [(alice, vector(1.0)), (bob, vector(1.0))])
        assert [i for i, _ in await vectors.vectors(MODEL, "alice")] == [alice]
        found = await vectors.found_messages([alice, bob], SearchScope(tenant="bob"))
        assert found == [(bob, "bob", 0, "user", "bob's words")]
        assert await vectors.found_messages([alice, bob], SearchScope("alice", "alice")) == []
        assert len(await vectors.found_messages([alice, bob, bob + 1000], SearchScope())) == 2

    async def test_a_question_in_other_words_finds_the_message(self, store: SessionStore) -> None:
        from seam.services.recall.embedder import load_embedder
        from seam.services.recall.session_recall import SessionRecall

        vectors = vectors_of(store)
        if load_embedder() is None:
            pytest.skip("the recall extra is not installed")
        await session_with(store, "cabin", [user("the wifi password is in the blue notebook")])
        await session_with(store, "other", [user("the dentist appointment is on Tuesday")])
        recall = SessionRecall(store, vectors, load_embedder)
        question = "where did I write down the cabin's internet login?"
        assert await store.search(question) == []
        found = await recall.search(question, 5)
        assert [(f.hit.session_key, f.signals) for f in found] == [("cabin", (MEANING,))]
