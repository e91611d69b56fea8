"""Markdown to Slack mrkdwn, and splitting at Slack's limit with code blocks kept whole."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from seam.plugins.chat.markdown_slack import format_slack, to_mrkdwn
from seam.plugins.chat.slack.events import SECTION_MAX, blocks_for


def test_emphasis_links_and_headings_become_mrkdwn() -> None:
    assert to_mrkdwn("**bold**, __also__, *it*, _it_ and ~~gone~~") == (
        "*bold*, *also*, _it_, _it_ and ~gone~"
    )
    assert to_mrkdwn("see [the docs](https://x.io/a?b=1&c=2)") == (
        "see <https://x.io/a?b=1&amp;c=2|the docs>"
    )
    assert to_mrkdwn("## Plan") == "*Plan*"
    assert to_mrkdwn("- one\n  * two") == "• one\n  • two"
    assert to_mrkdwn("> quoted **text**") == "> quoted *text*"


def test_control_characters_are_escaped_everywhere_code_included() -> None:
    assert to_mrkdwn("a < b && c > d") == "a &lt; b &amp;&amp; c &gt; d"
    assert to_mrkdwn("use `a<b>` here") == "use `a&lt;b&gt;` here"
    assert to_mrkdwn("```python\nif a < b: **x**\n```") == "```\nif a &lt; b: **x**\n```"
    # Emphasis markers inside code stay as written.
    assert to_mrkdwn("`**not bold**`") == "`**not bold**`"


def test_a_long_answer_splits_at_paragraphs_and_keeps_a_code_block_whole() -> None:
    code = "```\n" + "\n".join(f"line {i} <tag>" for i in range(60)) + "\n```"
    text = ("A paragraph & more. " * 40 + "\n\n") * 5 + code + "\n\nThe end."
    parts = format_slack(text, 1500)
    assert all(len(p) <= 1500 for p in parts)
    whole = [p for p in parts if "line 0 " in p]
    assert len(whole) == 1 and "line 59 &lt;tag&gt;" in whole[0]
    assert whole[0].count("```") == 2
    assert parts[-1].endswith("The end.")


def test_a_code_block_longer_than_the_limit_is_cut_and_re_fenced() -> None:
    code = "```sh\n" + "\n".join(f"echo {i}" for i in range(400)) + "\n```"
    parts = format_slack(code, 500)
    assert len(parts) > 1
    for part in parts:
        assert len(part) <= 500 and part.startswith("```\n") and part.endswith("\n```")
    assert "echo 0" in parts[0] and "echo 399" in parts[-1]


def test_text_over_a_sections_limit_is_spread_over_sections() -> None:
    text = "\n".join("x" * 99 for _ in range(39))  # 3,900 characters
    blocks = blocks_for(text, [])
    assert len(blocks) == 2 and all(len(b["text"]["text"]) <= SECTION_MAX for b in blocks)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab <>&*_`~\n", min_size=0, max_size=300),
            st.builds(lambda body: f"```\n{body}\n```", st.text(alphabet="xy<&\n", max_size=400)),
        ),
        max_size=8,
    )
)
def test_every_part_fits_and_fences_balance(blocks: list[str]) -> None:
    parts = format_slack("\n\n".join(blocks), 200)
    for part in parts:
        assert len(part) <= 200
        assert sum(1 for line in part.split("\n") if line.startswith("```")) % 2 == 0


def test_fences_inside_code_do_not_end_the_block() -> None:
    assert to_mrkdwn("````md\n```py\nx\n```\n````") == "```\n``\u200b`py\nx\n``\u200b`\n```"
