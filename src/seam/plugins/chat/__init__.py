"""Chat platform adapters (Telegram, Slack, Discord): each implements
`contracts.chat.ChatAdapter`; the gateway builds them from config and hands them to the
sessions it starts."""
