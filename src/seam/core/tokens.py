"""A character-based token estimate that needs no tokenizer and counts CJK text correctly.

Tokenizers of current models spend about one token per four characters of English or
code, but about one per character of Chinese, Japanese or Korean, and one per two or
three of other scripts (Cyrillic, Greek, accented text). Counting every character at four
would under-estimate a CJK conversation fourfold and let it overflow the window, so the
three classes are counted apart. Errors lean to over-estimating: compressing a little
early is cheap, an overflowing request is not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from seam.contracts.messages import Message
from seam.contracts.model import ToolDefinition

CHARS_PER_TOKEN = 4  # ASCII: English prose, code, JSON
OTHER_CHARS_PER_TOKEN = 2  # non-ASCII outside CJK: accented Latin, Cyrillic, Greek, ...
MESSAGE_OVERHEAD = 4  # role and framing tokens of each message
TOOL_OVERHEAD = 8  # framing of each tool definition

# Han (with extensions and compatibility ideographs), kana, Hangul, CJK punctuation and
# full-width forms: about one token per character.
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3100-\u318f\u31a0-\u31ff\u3200-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003ffff]"
)


def estimate_text(text: str) -> int:
    """Estimated tokens of `text` (0 for empty text)."""
    if text.isascii():
        return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    ascii_chars = len(text.encode("ascii", "ignore"))
    cjk = len(_CJK.findall(text))
    other = len(text) - ascii_chars - cjk
    return (
        (ascii_chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
        + cjk
        + (other + OTHER_CHARS_PER_TOKEN - 1) // OTHER_CHARS_PER_TOKEN
    )


class CharTokenEstimator:
    """The default `TokenEstimator`. Tool schemas are estimated once per definition."""

    def __init__(self) -> None:
        # id -> (definition, tokens): definitions hold dicts, so they are not hashable; the
        # definition is kept so its id cannot be reused while the entry lives.
        self._tools: dict[int, tuple[ToolDefinition, int]] = {}

    def text(self, text: str) -> int:
        return estimate_text(text)

    def message(self, message: Message) -> int:
        tokens = MESSAGE_OVERHEAD + estimate_text(message.content)
        for call in message.tool_calls:
            tokens += MESSAGE_OVERHEAD + estimate_text(call.name) + estimate_text(call.arguments)
        return tokens

    def messages(self, messages: Sequence[Message]) -> int:
        message = self.message
        return sum(message(m) for m in messages)

    def tools(self, definitions: Sequence[ToolDefinition]) -> int:
        cache = self._tools
        total = 0
        for definition in definitions:
            entry = cache.get(id(definition))
            if entry is None or entry[0] is not definition:
                entry = (definition, TOOL_OVERHEAD + estimate_text(tool_schema_json(definition)))
                if len(cache) > 4096:
                    cache.clear()
                cache[id(definition)] = entry
            total += entry[1]
        return total


def tool_schema_json(definition: ToolDefinition) -> str:
    """A tool definition as an OpenAI-compatible request carries it (compact JSON)."""
    wire = {
        "type": "function",
        "function": {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
        },
    }
    return json.dumps(wire, separators=(",", ":"), ensure_ascii=False)
