"""Memory search over real files, a real SQLite vector file and the real local embedder:
what it finds by words and by meaning, and that an entry is embedded once, again only
after an edit, and never by a write."""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

from seam.contracts.memory_search import FULL_TEXT_ONLY, MemorySearch
from seam.contracts.recall import Embedder
from seam.plugins.memory.markdown import MarkdownMemory
from seam.plugins.memory.search import MemoryIndex
from seam.plugins.memory.vectors import VECTORS_FILE, VectorFile
from seam.services.recall.embedder import load_embedder

WIFI = "The wifi password for the lake house is in the blue notebook."
CLOUD = "Staging runs in the AWS account 4471-2290 in eu-central-1."
TEA = "Prefers tea over coffee in the morning, Earl Grey with oat milk."


class Counting:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder, name: str | None = None) -> None:
        self.inner = inner
        self.embedded: list[str] = []
        self.name = name or inner.name
        self.dimensions = inner.dimensions

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        self.embedded.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    loaded = load_embedder()
    assert loaded is not None, "the recall extra is installed in every venv"
    return loaded


def memory_with(folder: Path) -> MarkdownMemory:
    memory = MarkdownMemory(folder)
    for entry in (CLOUD, WIFI, "Uses ruff for linting."):
        memory.add("memory", entry)
    memory.add("user", TEA)
    return memory


async def test_meaning_finds_a_note_sharing_no_word_with_the_question(
    tmp_path: Path, embedder: Embedder
) -> None:
    index = MemoryIndex(memory_with(tmp_path), lambda: embedder)
    assert isinstance(index, MemorySearch)
    result = await index.search("where did I write down the cabin's internet login?", 3)
    assert result.note is None
    first = result.matches[0]
    assert (first.text, first.where, first.signals) == (WIFI, "MEMORY.md #2", ("meaning",))
    drink = await index.search("what hot drink for breakfast?", 1)
    assert drink.matches[0].where == "USER.md #1"


async def test_words_find_an_identifier_and_both_signals_are_named(
    tmp_path: Path, embedder: Embedder
) -> None:
    index = MemoryIndex(memory_with(tmp_path), lambda: embedder)
    found = (await index.search("4471-2290", 5)).matches
    assert found[0].text == CLOUD and "words" in found[0].signals
    both = (await index.search("wifi password notebook", 5)).matches[0]
    assert both.text == WIFI and both.signals == ("words", "meaning")
    assert both.found_by == "words and meaning"


async def test_without_an_embedder_full_text_alone_said_once(tmp_path: Path) -> None:
    for source in (None, lambda: None):
        index = MemoryIndex(memory_with(tmp_path / str(source is None)), source)
        result = await index.search("blue notebook wifi", 5)
        assert result.note == FULL_TEXT_ONLY
        assert [(m.text, m.signals) for m in result.matches] == [(WIFI, ("words",))]
        nothing = await index.search("where did I write down the cabin's internet login?", 5)
        assert nothing.matches == () and nothing.note == FULL_TEXT_ONLY
    assert not list(tmp_path.rglob(VECTORS_FILE))  # nothing embedded, nothing stored


async def test_an_entry_is_embedded_once_and_again_only_after_an_edit(
    tmp_path: Path, embedder: Embedder
) -> None:
    memory = memory_with(tmp_path)
    counting = Counting(embedder)
    index = MemoryIndex(memory, lambda: counting)
    await index.search("internet login", 5)
    assert len(counting.embedded) == 4 + 1  # every entry, then the question
    counting.embedded.clear()
    await index.search("morning drink", 5)
    assert counting.embedded == ["morning drink"]  # entries unchanged: only the question
    # (what is embedded is a text's folded content words: "what is my" says nothing)

    memory.replace("memory", "ruff", "Uses ruff and mypy --strict.")  # a write embeds nothing
    memory.add("user", "Lives in Berlin.")
    assert counting.embedded == ["morning drink"]
    counting.embedded.clear()
    await index.search("which city", 5)
    assert counting.embedded == ["uses ruff mypy strict", "lives berlin", "city"]

    # Another process (a new index) reads the vectors from the file beside the memory.
    again = Counting(embedder)
    await MemoryIndex(memory, lambda: again).search("which city", 5)
    assert again.embedded == ["city"]
    # The edited entry's old vector is gone from the file; one row per entry remains.
    name = f"{embedder.name}+content-words"
    assert len(VectorFile(tmp_path).load(name)) == 5
    assert stat.S_IMODE((tmp_path / VECTORS_FILE).stat().st_mode) == 0o600


async def test_vectors_of_another_embedder_are_recomputed_not_compared(
    tmp_path: Path, embedder: Embedder
) -> None:
    memory = memory_with(tmp_path)
    await MemoryIndex(memory, lambda: embedder).search("tea", 5)
    other = Counting(embedder, name="another-model-256")
    assert (await MemoryIndex(memory, lambda: other).search("tea", 5)).matches
    assert len(other.embedded) == 4 + 1
    assert MemoryIndex(memory, lambda: other).refresh() == 0  # all stored already


async def test_refresh_embeds_ahead_of_the_first_search(tmp_path: Path, embedder: Embedder) -> None:
    memory = memory_with(tmp_path)
    counting = Counting(embedder)
    index = MemoryIndex(memory, lambda: counting)
    assert index.refresh() == 4
    await index.search("internet login", 5)
    assert counting.embedded[4:] == ["internet login"]  # only the question


async def test_an_unreadable_vector_file_only_costs_embedding_again(
    tmp_path: Path, embedder: Embedder
) -> None:
    memory = memory_with(tmp_path)
    (tmp_path / VECTORS_FILE).write_bytes(b"not a database" * 100)
    index = MemoryIndex(memory, lambda: embedder)
    assert (await index.search("cabin internet login", 1)).matches[0].text == WIFI


async def test_an_empty_memory_and_an_empty_question_find_nothing(
    tmp_path: Path, embedder: Embedder
) -> None:
    index = MemoryIndex(MarkdownMemory(tmp_path), lambda: embedder)
    assert (await index.search("anything", 5)).matches == ()
    full = MemoryIndex(memory_with(tmp_path / "full"), lambda: embedder)
    assert (await full.search("   ", 5)).matches == ()
