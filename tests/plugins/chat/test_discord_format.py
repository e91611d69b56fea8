"""Markdown for Discord: only what Discord would mis-render is rewritten; split at 2,000."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from seam.plugins.chat.markdown_discord import DISCORD_MAX_TEXT, format_discord, to_discord


def test_native_markdown_passes_through() -> None:
    text = "**bold** *it* `code` ~~gone~~ [link](https://x.io)\n# Title\n> quote\n- item"
    assert to_discord(text) == text


def test_what_discord_reads_differently_is_rewritten() -> None:
    # `__x__` is underline on Discord, bold in Markdown.
    assert to_discord("__important__ and snake_case_name") == "**important** and snake_case_name"
    assert to_discord("#### Deep heading") == "**Deep heading**"
    assert to_discord("see ![diagram](https://x.io/d.png)") == "see [diagram](https://x.io/d.png)"
    assert to_discord("~~~py\nx = 1\n~~~") == "```py\nx = 1\n```"


def test_code_is_left_as_written() -> None:
    code = "```python\n__init__ = '__x__'\n#### not a heading\n```"
    assert to_discord(code) == code
    assert to_discord("call `__init__` now") == "call `__init__` now"
    assert to_discord("```\nunclosed") == "```\nunclosed\n```"


def test_a_long_answer_splits_at_2000_with_the_code_block_whole() -> None:
    code = "```js\n" + "\n".join(f"console.log({i});" for i in range(60)) + "\n```"
    text = "Intro paragraph. " * 70 + "\n\n" + code + "\n\n" + "Outro. " * 200
    parts = format_discord(text)
    assert all(len(p) <= DISCORD_MAX_TEXT for p in parts)
    (with_code,) = [p for p in parts if "console.log(0);" in p]
    assert "console.log(59);" in with_code and with_code.count("```") == 2
    assert "".join(parts).count("Outro.") == 200


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab _*#`~\n", min_size=0, max_size=300),
            st.builds(lambda body: f"```\n{body}\n```", st.text(alphabet="xy_\n", max_size=500)),
        ),
        max_size=8,
    )
)
def test_every_part_fits_and_fences_balance(blocks: list[str]) -> None:
    parts = format_discord("\n\n".join(blocks), 300)
    for part in parts:
        assert len(part) <= 300
        assert sum(1 for line in part.split("\n") if line.lstrip().startswith("```")) % 2 == 0


def test_fences_inside_code_do_not_end_the_block() -> None:
    assert to_discord("````md\n```py\nx\n```\n````") == "```md\n``\u200b`py\nx\n``\u200b`\n```"
