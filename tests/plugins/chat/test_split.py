"""split_markdown: parts fit the limit, nothing is lost, code fences stay balanced and a
code block that fits a message is never cut."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seam.plugins.chat.markdown_telegram import to_telegram_html, utf16_len
from seam.plugins.chat.split import parse_blocks, split_formatted, split_markdown

_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")

words = st.text(
    alphabet=st.sampled_from("abcxyz*_`~[]()<>&#-.!|\\ 🙂é"), min_size=1, max_size=12
) | st.sampled_from(["```", "**bold**", "_it_", "`code`", "[a](https://x.y)", "a" * 90])
lines = st.lists(words, min_size=0, max_size=12).map(" ".join)
paragraphs = st.lists(lines, min_size=1, max_size=6).map("\n".join)
code_blocks = st.builds(
    lambda fence, lang, body: f"{fence}{lang}\n" + "\n".join(body) + f"\n{fence}",
    st.sampled_from(["```", "~~~", "````"]),
    st.sampled_from(["", "python", "js"]),
    st.lists(st.text(alphabet="ab <>&`~*_ \t{}", max_size=70), max_size=25),
)
documents = st.lists(paragraphs | code_blocks, max_size=8).map("\n\n".join)


def content(text: str) -> list[tuple[bool, str]]:
    """What a reader gets from a text: its non-space characters, each marked code or not
    (a backslash before a backtick or tilde left out: the splitter adds one to keep a cut
    that begins with "```" reading as text)."""
    return [
        (b.is_code, ch)
        for b in parse_blocks(text)
        for ch, after in zip(b.text, b.text[1:] + " ", strict=False)
        if not ch.isspace() and not (not b.is_code and ch == "\\" and after in "`~")
    ]


def open_fence_left(part: str) -> bool:
    fence: str | None = None
    for line in part.split("\n"):
        if fence is None:
            opened = _OPEN.match(line)
            if opened and not (opened.group(1)[0] == "`" and "`" in line[opened.end() :]):
                fence = opened.group(1)
        elif set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            fence = None
    return fence is not None


def check(text: str, limit: int, measure: object = len) -> list[str]:
    parts = split_markdown(text, limit, measure=measure)  # type: ignore[arg-type]
    for part in parts:
        assert measure(part) <= limit  # type: ignore[operator]
        assert not open_fence_left(part), part
        assert part.strip()
    assert [c for part in parts for c in content(part)] == content(text)
    return parts


@settings(max_examples=300, deadline=None)
@given(documents, st.integers(min_value=24, max_value=400))
def test_parts_fit_keep_everything_and_balance_fences(text: str, limit: int) -> None:
    parts = check(text, limit)
    for block in parse_blocks(text):
        if block.is_code and len(block.render()) <= limit:
            assert any(block.render() in part for part in parts), block.render()


def telegram_measure(md: str) -> int:
    return utf16_len(to_telegram_html(md))


@settings(max_examples=150, deadline=None)
@given(documents, st.integers(min_value=60, max_value=500))
def test_parts_fit_after_telegram_formatting(text: str, limit: int) -> None:
    check(text, limit, telegram_measure)


def test_short_text_is_one_part() -> None:
    assert split_markdown("Hello **there**.\n\nSecond.", 4096) == ["Hello **there**.\n\nSecond."]


def test_blank_text_gives_no_parts() -> None:
    assert split_markdown(" \n\n \n", 100) == []


def test_cuts_between_paragraphs_before_lines_and_words() -> None:
    para1 = "one two three four five"
    para2 = "six seven eight"
    assert split_markdown(f"{para1}\n\n{para2}", 30) == [para1, para2]
    assert split_markdown("alpha beta\ngamma delta", 12) == ["alpha beta", "gamma delta"]
    assert split_markdown("alpha beta gamma delta", 12) == ["alpha beta", "gamma delta"]


def test_a_code_block_that_fits_moves_whole_to_the_next_part() -> None:
    code = "```python\nprint(1)\nprint(2)\n```"
    parts = split_markdown(f"{'intro ' * 5}\n\n{code}\n\nafter", 40)
    assert any(part.startswith(code) for part in parts)


def test_a_code_block_longer_than_a_message_is_refenced_with_its_language() -> None:
    body = "\n".join(f"line_{i} = {i}" for i in range(40))
    parts = split_markdown(f"```python\n{body}\n```", 100)
    assert len(parts) > 1
    for part in parts:
        assert part.startswith("```python\n") and part.endswith("\n```")
        assert len(part) <= 100
    assert "\n".join(p[len("```python\n") : -len("\n```")] for p in parts) == body


def test_an_unclosed_fence_is_closed_in_every_part() -> None:
    parts = split_markdown("text\n\n```sh\n" + "echo hi\n" * 30, 60)
    assert all(not open_fence_left(p) for p in parts)
    assert all(p.startswith("```sh") for p in parts[1:])


def test_a_word_longer_than_a_message_is_cut_between_characters() -> None:
    url = "https://example.com/" + "x" * 250
    parts = split_markdown(f"see {url} now", 100)
    assert all(len(p) <= 100 for p in parts)
    assert "".join(parts).replace(" ", "") == f"see{url}now"


def test_a_cut_that_starts_with_backticks_stays_text() -> None:
    parts = split_markdown("aaaa ```py bbbb cccc", 10)
    assert all(not open_fence_left(p) for p in parts)


def test_limit_must_be_positive() -> None:
    with pytest.raises(ValueError):
        split_markdown("x", 0)


def test_split_formatted_measures_what_the_platform_gets() -> None:
    def shout(md: str) -> str:
        return md.upper() + "!!"

    parts = split_formatted("one two three four five six", 12, shout)
    assert parts == ["ONE TWO!!", "THREE FOUR!!", "FIVE SIX!!"]
