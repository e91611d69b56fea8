"""Markdown to Telegram HTML: what a Telegram user sees, well-formed markup whatever the
model wrote, and messages within Telegram's limit."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from seam.plugins.chat.markdown_telegram import (
    TELEGRAM_LIMIT,
    format_telegram,
    html_to_plain,
    to_telegram_html,
    utf16_len,
)

_TAG = re.compile(r"<[^<>]*>")
ALLOWED = {"b", "i", "s", "code", "pre", "a", "blockquote", "tg-spoiler"}


class _Checker(HTMLParser):
    """Fails on anything Telegram's HTML parser would reject: unknown or badly nested tags,
    a bare `<` or `&`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in ALLOWED, tag
        if tag == "a":
            assert [name for name, _ in attrs] == ["href"]
        if tag == "code" and attrs:
            assert self.stack[-1:] == ["pre"]
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack[-1] == tag, (self.stack, tag)
        self.stack.pop()

    def handle_entityref(self, name: str) -> None:
        assert name in {"lt", "gt", "amp", "quot"}, name

    def handle_charref(self, name: str) -> None:
        raise AssertionError(name)


def well_formed(text: str) -> None:
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.stack == []
    assert "<" not in _TAG.sub("", text)


markdownish = st.text(alphabet=st.sampled_from("ab _*~|`[]()<>&#->\\\n!:/.h🙂"), max_size=200)


@settings(max_examples=400, deadline=None)
@given(markdownish)
def test_any_text_becomes_well_formed_telegram_html(text: str) -> None:
    well_formed(to_telegram_html(text))


@settings(max_examples=100, deadline=None)
@given(markdownish, st.integers(min_value=60, max_value=300))
def test_every_part_is_well_formed_and_within_the_limit(text: str, limit: int) -> None:
    for part in format_telegram(text, limit):
        well_formed(part)
        assert utf16_len(part) <= limit


def test_entities() -> None:
    assert to_telegram_html("**bold**, *it*, _it_, ~~gone~~ and `x < y`") == (
        "<b>bold</b>, <i>it</i>, <i>it</i>, <s>gone</s> and <code>x &lt; y</code>"
    )
    assert to_telegram_html("[docs](https://a.example/x_(y)?q=1&r=2)") == (
        '<a href="https://a.example/x_(y)?q=1&amp;r=2">docs</a>'
    )


def test_text_that_markdown_v2_trips_on_stays_as_written() -> None:
    text = "my_var_name = 1.5 + C++ (see #3) - ok! {a|b} = x=y <tag> & more"
    assert html_to_plain(to_telegram_html(text)) == text


def test_code_block_with_language_and_escaping() -> None:
    md = '```python\nif a < b and c & d:\n    print("*not bold*")\n```'
    assert to_telegram_html(md) == (
        '<pre><code class="language-python">if a &lt; b and c &amp; d:\n'
        '    print("*not bold*")</code></pre>'
    )


def test_headings_bullets_and_quotes() -> None:
    md = "# Plan\n- first **step**\n- second\n> quoted\n> lines"
    assert to_telegram_html(md) == (
        "<b>Plan</b>\n• first <b>step</b>\n• second\n<blockquote>quoted\nlines</blockquote>"
    )


def test_unmatched_markers_stay_text() -> None:
    assert html_to_plain(to_telegram_html("2 * 3 = 6, a ** b, x_ and `tick")) == (
        "2 * 3 = 6, a ** b, x_ and `tick"
    )


def test_links_only_to_schemes_telegram_accepts() -> None:
    assert to_telegram_html("[x](javascript:alert(1))") == "x (javascript:alert(1))"


def test_round_trip_of_a_long_answer_keeps_every_word_within_telegrams_limit() -> None:
    words = [f"word{i} **b{i}** `c{i}`" for i in range(2500)]
    code = "```python\n" + "\n".join(f"x_{i} = {i}" for i in range(50)) + "\n```"
    md = " ".join(words[:1200]) + "\n\n" + code + "\n\n" + " ".join(words[1200:])
    parts = format_telegram(md)
    assert len(parts) > 1
    assert all(utf16_len(p) <= TELEGRAM_LIMIT for p in parts)
    assert any(p.startswith('<pre><code class="language-python">x_0 = 0') for p in parts)
    plain = " ".join(html_to_plain(p) for p in parts).split()
    expected = " ".join(w.replace("**", "").replace("`", "") for w in words)
    assert [w for w in plain if w.startswith(("word", "b", "c"))] == expected.split()


def test_emoji_count_as_two_units() -> None:
    parts = format_telegram("🙂" * 3000)
    assert [utf16_len(p) for p in parts] == [4096, 1904]
