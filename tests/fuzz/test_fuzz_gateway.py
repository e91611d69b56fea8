"""The chat gateway's parsers of platform input: slash commands, chat references, a
Telegram entity's text (UTF-16 offsets), and the Markdown split and formatted for
Telegram; any input gives an answer or the parser's own error, never a crash."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st
from telegram import MessageEntity

from seam.apps.gateway.chats import parse_ref
from seam.apps.gateway.commands import parse_command
from seam.plugins.chat.markdown_telegram import TELEGRAM_LIMIT, format_telegram, utf16_len
from seam.plugins.chat.telegram.parse import entity_text as _entity_text

markdownish = st.lists(
    st.sampled_from(
        ["```", "`", "*", "_", "**", "[", "](", ")", "\n", "\n\n", "# ", "> ", "<", "&"]
    )
    | st.text(max_size=12),
    max_size=30,
).map("".join)


@given(st.text(max_size=60))
@example("/new@bot extra")
@example("/")
@example("//x")
def test_any_text_is_a_command_or_a_message(text: str) -> None:
    assert parse_command(text) is None or isinstance(parse_command(text), str)


@given(st.text(max_size=40))
def test_a_chat_reference_parses_or_is_a_value_error(text: str) -> None:
    try:
        ref = parse_ref(text)
    except ValueError:
        return
    assert ref.platform


@given(st.text(max_size=30), st.integers(0, 70), st.integers(0, 70))
@example("😀/start", 1, 6)
def test_an_entity_anywhere_in_the_text_is_read_without_an_error(
    text: str, offset: int, length: int
) -> None:
    entity = MessageEntity(MessageEntity.BOT_COMMAND, offset, length)
    assert isinstance(_entity_text(text, entity), str)


@given(markdownish)
def test_any_reply_is_formatted_into_messages_within_the_limit(text: str) -> None:
    for piece in format_telegram(text, limit=120):
        assert utf16_len(piece) <= max(120, 0) or len(piece) <= TELEGRAM_LIMIT
