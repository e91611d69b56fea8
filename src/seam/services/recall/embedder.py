"""Local embeddings from WordLlama, whose wheel carries its model (the `recall` extra).

WordLlama (an embedding table distilled from a large model's token embeddings, pooled
per text) embeds a thousand short texts in about 10 ms on one core and loads in about
half a second: cheap enough to index every message of a long history on this machine.
Its own `WordLlama.load()` looks for the tokenizer under a folder name the wheel does
not use and then tries Hugging Face, so the files the wheel ships are opened here
directly: nothing reaches the network.

`load_embedder()` is None when the package is missing or its files are unreadable;
callers fall back to full-text search alone and say so.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODEL = "l2_supercat"
DIMENSIONS = 256

_lock = threading.Lock()
_loaded: list[WordLlamaEmbedder | None] = []


class WordLlamaEmbedder:
    """`contracts/recall.Embedder` over WordLlama's bundled 256-dimension model."""

    def __init__(self, inference: Any) -> None:
        self._inference = inference

    @property
    def name(self) -> str:
        return f"wordllama-{MODEL}-{DIMENSIONS}"

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        import numpy as np

        if not texts:
            return []
        vectors = np.asarray(self._inference.embed(list(texts), norm=True), dtype="<f4")
        return [row.tobytes() for row in vectors.reshape(len(texts), DIMENSIONS)]


def available() -> bool:
    """Whether the `recall` extra is installed (without importing it)."""
    return importlib.util.find_spec("wordllama") is not None


def load_embedder() -> WordLlamaEmbedder | None:
    """The process's one embedder, loaded on first call (about 0.5 s), or None when
    WordLlama is not installed or its bundled files cannot be read."""
    with _lock:
        if not _loaded:
            _loaded.append(_load() if available() else None)
        return _loaded[0]


def _load() -> WordLlamaEmbedder | None:
    try:
        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference
    except ImportError:
        return None
    root = Path(wordllama.__file__).parent
    try:
        tokenizer = Tokenizer.from_file(str(root / "tokenizers" / f"{MODEL}_tokenizer_config.json"))
        weights = root / "weights" / f"{MODEL}_{DIMENSIONS}.safetensors"
        with safe_open(str(weights), framework="np", device="cpu") as tensors:
            table = tensors.get_tensor("embedding.weight")
    except (OSError, ValueError, RuntimeError):  # a damaged or partial install
        return None
    return WordLlamaEmbedder(WordLlamaInference(table, tokenizer))


__all__ = ["DIMENSIONS", "MODEL", "WordLlamaEmbedder", "available", "load_embedder"]
