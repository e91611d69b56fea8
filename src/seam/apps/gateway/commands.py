"""The slash commands every chat understands: /new, /stop, /undo, /usage, /cron, /dnd,
/mcp, /help, and an MCP server's prompts as `/server:prompt arg=value` (typed: Telegram's
command menu cannot hold a `:`, but the typed line arrives as text and is routed here)."""

from __future__ import annotations

from seam.wiring.mcp import is_command

HELP = (
    "I'm your Seam agent. Just write to me; I answer here.\n\n"
    "/new — start a fresh conversation\n"
    "/stop — stop my current answer\n"
    "/undo — take back my last turn that changed files\n"
    "/usage — tokens and cost so far\n"
    "/cron — the scheduled jobs, when they run next (the owner only)\n"
    "/dnd [on|off] — quiet hours: hold what I send unasked (owner only)\n"
    "/mcp — MCP prompts; run one: /server:prompt\n"
    "/help — this message"
)
NAMES = {
    "new": "new",
    "reset": "new",
    "stop": "stop",
    "undo": "undo",
    "usage": "usage",
    "cron": "cron",
    "dnd": "dnd",
    "mcp": "mcp",
    "help": "help",
}
PROMPT = "prompt"  # `/server:prompt ...`: an MCP prompt
NAMES["start"] = "help"  # what Telegram sends when someone opens the bot


def parse_command(text: str) -> str | None:
    """The command a message is (`/new`, `/new@my_bot`), "unknown" for another slash
    word, None for an ordinary message."""
    text = text.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    word = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
    word = word.split("@", 1)[0].lower()
    if not word or "/" in word:
        return None  # a path like /etc/hosts is a message
    if is_command(text):
        return PROMPT
    return NAMES.get(word, "unknown")


def usage_text(
    calls: int, input_tokens: int, output_tokens: int, cost: float, unpriced: int
) -> str:
    if not calls:
        return "No model calls in this conversation yet."
    cost_text = f"${cost:.4f}" if cost or not unpriced else "unknown (no price for this model)"
    return (
        f"This conversation: {calls} model call(s), {input_tokens:,} input and "
        f"{output_tokens:,} output tokens, cost {cost_text}."
    )


def command_argument(text: str) -> str:
    """What follows the command word (`/dnd on` -> "on")."""
    parts = text.strip().split(maxsplit=1)
    return parts[1].strip().lower() if len(parts) > 1 else ""
