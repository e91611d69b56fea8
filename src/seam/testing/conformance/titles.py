"""The `SessionTitles` conformance suite: unique titles and the next title of a lineage.

Fixtures: `clock` and `store`, a whole `SessionStore` (see the package docstring).
"""

from __future__ import annotations

import asyncio

import pytest

from seam.contracts.sessions import DuplicateTitle, NewSession, SessionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.support import refuses_unknown


class SessionTitlesSuite:
    async def test_set_title_and_find_by_title(self, store: SessionStore) -> None:
        await store.create("s")
        await store.set_title("s", "Trip to Lisbon")
        found = await store.find_by_title("Trip to Lisbon")
        assert found is not None
        assert found.key == "s"
        assert found.title == "Trip to Lisbon"
        assert await store.find_by_title("trip to lisbon") is None
        assert await store.find_by_title("Nothing") is None

    async def test_retitling_frees_the_old_title(self, store: SessionStore) -> None:
        await store.create("a", NewSession(title="Old"))
        await store.set_title("a", "New")
        assert await store.find_by_title("Old") is None
        await store.create("b", NewSession(title="Old"))
        found = await store.find_by_title("Old")
        assert found is not None
        assert found.key == "b"

    async def test_setting_a_session_its_own_title_again_is_fine(self, store: SessionStore) -> None:
        await store.create("a", NewSession(title="Same"))
        await store.set_title("a", "Same")
        info = await store.get("a")
        assert info is not None
        assert info.title == "Same"

    async def test_duplicate_title_names_the_other_session(self, store: SessionStore) -> None:
        await store.create("owner-key", NewSession(title="Taken"))
        await store.create("b", NewSession(title="Mine"))
        with pytest.raises(DuplicateTitle, match="owner-key"):
            await store.set_title("b", "Taken")
        b = await store.get("b")
        assert b is not None
        assert b.title == "Mine"
        owner = await store.find_by_title("Taken")
        assert owner is not None
        assert owner.key == "owner-key"

    async def test_set_title_on_unknown_session_names_it(self, store: SessionStore) -> None:
        await refuses_unknown(store.set_title("ghost-key", "T"))

    async def test_set_title_rejects_a_blank_title(self, store: SessionStore) -> None:
        await store.create("s", NewSession(title="Kept"))
        with pytest.raises(ValueError, match="title"):
            await store.set_title("s", "")
        assert await store.find_by_title("Kept") is not None

    async def test_retitling_is_not_activity(self, store: SessionStore, clock: ManualClock) -> None:
        created = await store.create("s")
        clock.advance()
        await store.set_title("s", "T")
        info = await store.get("s")
        assert info is not None
        assert info.updated_at == created.updated_at

    async def test_next_title_numbers_a_lineage(self, store: SessionStore) -> None:
        assert await store.next_title("Trip") == "Trip"
        await store.create("1", NewSession(title="Trip"))
        assert await store.next_title("Trip") == "Trip #2"
        await store.create("2", NewSession(title=await store.next_title("Trip")))
        assert await store.next_title("Trip") == "Trip #3"
        # Continuing a numbered session continues the numbering.
        assert await store.next_title("Trip #2") == "Trip #3"

    async def test_next_title_goes_past_the_highest_number(self, store: SessionStore) -> None:
        await store.create("a", NewSession(title="Trip #5"))
        assert await store.next_title("Trip") == "Trip #6"
        await store.create("b", NewSession(title="Trip"))
        await store.delete("a")
        assert await store.next_title("Trip") == "Trip #2"

    async def test_next_title_forgets_a_number_retitled_away(self, store: SessionStore) -> None:
        await store.create("a", NewSession(title="Trip"))
        await store.create("b", NewSession(title="Trip #7"))
        await store.set_title("b", "Trip #1")  # "Trip" and "Trip #1" both count as 1
        assert await store.next_title("Trip") == "Trip #2"
        await store.set_title("b", "Elsewhere")
        await store.delete("a")
        assert await store.next_title("Trip") == "Trip"

    async def test_next_title_orders_numbers_as_numbers(self, store: SessionStore) -> None:
        for n, title in enumerate(["Trip #9", "Trip #10", "Trip #2 #30", "Trip #0100"]):
            await store.create(str(n), NewSession(title=title))
        assert await store.next_title("Trip") == "Trip #11"

    async def test_next_title_ignores_titles_that_only_look_alike(
        self, store: SessionStore
    ) -> None:
        for key, title in enumerate(
            ["Trip #2 draft", "Trips", "trip", "Trip#2", "Trip #0", "Trip "]
        ):
            await store.create(str(key), NewSession(title=title))
        assert await store.next_title("Trip") == "Trip"

    async def test_next_title_is_always_free(self, store: SessionStore) -> None:
        for n, title in enumerate(["A", "A #2", "A #3", "B #2", "C #1"]):
            await store.create(str(n), NewSession(title=title))
        for base in ("A", "A #3", "B", "C", "D"):
            proposed = await store.next_title(base)
            assert await store.find_by_title(proposed) is None, base
        assert await store.next_title("C") == "C #2"

    async def test_next_title_numbers_a_title_with_a_line_break(self, store: SessionStore) -> None:
        await store.create("a", NewSession(title="Two\nlines"))
        await store.create("b", NewSession(title="Two\nlines #2"))
        assert await store.next_title("Two\nlines") == "Two\nlines #3"

    async def test_next_title_counts_a_lineage_whose_base_ends_in_a_space(
        self, store: SessionStore
    ) -> None:
        for n, title in enumerate(["Trip ", "Trip  #2", "Trip  #5"]):
            await store.create(str(n), NewSession(title=title))
        assert await store.next_title("Trip ") == "Trip  #6"

    async def test_next_title_rejects_a_blank_title(self, store: SessionStore) -> None:
        with pytest.raises(ValueError, match="title"):
            await store.next_title(" ")

    async def test_set_next_title_numbers_and_writes(
        self, store: SessionStore, clock: ManualClock
    ) -> None:
        for key in ("a", "b", "c"):
            created = await store.create(key)
        clock.advance()
        assert await store.set_next_title("a", "Trip") == "Trip"
        assert await store.set_next_title("b", "Trip") == "Trip #2"
        # Continuing a numbered session continues the numbering.
        assert await store.set_next_title("c", "Trip #2") == "Trip #3"
        for key, title in (("a", "Trip"), ("b", "Trip #2"), ("c", "Trip #3")):
            info = await store.get(key)
            assert info is not None
            assert (info.title, info.updated_at) == (title, created.updated_at)
        assert await store.next_title("Trip") == "Trip #4"

    async def test_set_next_title_leaves_a_titled_session_alone(self, store: SessionStore) -> None:
        await store.create("s", NewSession(title="Mine"))
        assert await store.set_next_title("s", "Other") is None
        info = await store.get("s")
        assert info is not None
        assert info.title == "Mine"
        assert await store.find_by_title("Other") is None

    async def test_set_next_title_refuses_unknown_and_blank(self, store: SessionStore) -> None:
        await refuses_unknown(store.set_next_title("ghost-key", "T"))
        await store.create("s")
        with pytest.raises(ValueError, match="title"):
            await store.set_next_title("s", " ")
        info = await store.get("s")
        assert info is not None
        assert info.title is None

    async def test_concurrent_set_next_title_gets_distinct_numbers(
        self, store: SessionStore
    ) -> None:
        keys = [f"k{n}" for n in range(12)]
        for key in keys:
            await store.create(key)
        await store.create("old", NewSession(title="Hi #3"))
        given = await asyncio.gather(*(store.set_next_title(key, "Hi") for key in keys))
        assert set(given) == {f"Hi #{n}" for n in range(4, 16)}
        for key, title in zip(keys, given, strict=True):
            info = await store.get(key)
            assert info is not None
            assert info.title == title
