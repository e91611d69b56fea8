"""The `ImageBlobs` conformance suite: a person's images stored once per SHA-256 with the
submission that brings them and the transcript message that shows them, read back whole,
named (not inlined) in an export, and dropped with the last session that shows them.

Fixtures: `clock` and `store`, an `ExecutionStore` (see the package docstring).
"""

from __future__ import annotations

import pytest

from seam.contracts.execution import (
    ExecutionStore,
    JournalEntry,
    NewSubmission,
    SubmissionConflict,
)
from seam.contracts.images import ImageBlobs, with_placeholders
from seam.contracts.messages import ImagePart, Message
from seam.testing.conformance.support import KEY, OTHER
from seam.testing.images import png_part

RED, BLUE = png_part(), png_part(20, 40, 220)


def shown(text: str, *images: ImagePart) -> Message:
    return Message("user", with_placeholders(text, images), images=images)


async def _submit(store: ExecutionStore, sid: str, key: str, *images: ImagePart) -> None:
    await store.admit(NewSubmission(sid, key, with_placeholders("look", images), images=images))


class ImageBlobsSuite:
    """A person's images, kept by hash beside the sessions that show them."""

    async def test_a_submission_keeps_its_images(self, store: ExecutionStore) -> None:
        assert isinstance(store, ImageBlobs)
        await store.create(KEY)
        await _submit(store, "a", KEY, RED, BLUE)
        sub = await store.submission("a")
        assert sub is not None and sub.images == (RED.sha256, BLUE.sha256)
        assert await store.load_images(sub.images) == [RED, BLUE]
        claimed = await store.claim("w1")
        assert claimed is not None and claimed.images == (RED.sha256, BLUE.sha256)

    async def test_a_resend_shows_the_same_images_or_none(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _submit(store, "a", KEY, RED)
        await _submit(store, "a", KEY, RED)  # the same: fine
        # Driven again by its id alone (no images named): the stored one, images kept.
        again = await store.admit(NewSubmission("a", KEY, with_placeholders("look", [RED])))
        assert again.images == (RED.sha256,)
        with pytest.raises(SubmissionConflict):
            await _submit(store, "a", KEY, BLUE)

    async def test_the_transcript_shows_a_persons_images(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _submit(store, "a", KEY, RED)
        await store.claim("w1")
        tool = Message("tool", "[image ...]", tool_call_id="c1", name="shot", images=(BLUE,))
        await store.append_for("a", "w1", JournalEntry([shown("look", RED), tool]))
        await store.append(KEY, [shown("and this", BLUE), Message("assistant", "two pixels")])
        read = await store.messages(KEY)
        # A tool's images were for its turn: only their placeholder lines are kept.
        assert [m.images for m in read] == [(RED,), (), (BLUE,), ()]
        assert [m.images for m in await store.submission_messages("a")] == [(RED,), ()]
        loaded = await store.load(KEY)
        assert loaded is not None and loaded.messages[2].images == (BLUE,)
        assert read[0].content.endswith(f"sha256 {RED.sha256[:16]}]")

    async def test_an_export_names_images_by_hash(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await store.append(KEY, [shown("look", RED)])
        exported = await store.export(KEY)
        named = {"sha256": RED.sha256, "mime_type": "image/png", "size": RED.size}
        assert exported["messages"][0]["images"] == [named]
        assert RED.data not in str(exported)

    async def test_deleting_a_session_keeps_images_others_show(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await store.create(OTHER)
        await store.append(KEY, [shown("look", RED), shown("again", RED, BLUE)])
        await _submit(store, "b", OTHER, RED)
        await store.delete(KEY)
        # The same photo in two sessions is one image: the other still has it.
        assert await store.load_images([RED.sha256, BLUE.sha256]) == [RED]
        await store.delete(OTHER)
        assert await store.load_images([RED.sha256]) == []
