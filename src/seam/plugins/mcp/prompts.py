"""MCP prompts as chat commands: `/server:prompt arg=value ...` runs a turn with its text.

A prompt is a template the person picks (unlike tools, which the model picks), so chat
surfaces offer each one as a slash command. The line's words after the command are the
prompt's arguments: `name=value` (quote a value with spaces, shell style), or bare values
taken in the order the server declares the arguments. A missing required argument or an
unknown name is a one-line error naming the prompt's arguments. The server's answer
(`prompts/get`) becomes the turn's text: its messages' text in order, an assistant
message marked as such, embedded text resources with their URI, images as a note (a
turn's own message carries no images).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from seam.plugins.mcp.connection import ServerConnection

# The client (connection, content) is imported by what talks to a server: `wiring/mcp.py`
# re-exports the parsing here to every surface, which most runs never use.


class PromptError(ValueError):
    """The command line does not fit the prompt; the message is for the person."""


@dataclass(frozen=True)
class PromptCommand:
    server: str
    prompt: str
    arguments: dict[str, str]


def parse_command(name: str, rest: str) -> PromptCommand | None:
    """`/server:prompt` and the rest of its line; None when `name` is not that shape."""
    names = _split_name(name)
    if names is None:
        return None
    server, prompt = names
    import shlex

    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise PromptError(f"cannot read the arguments: {exc}") from None
    named: dict[str, str] = {}
    bare: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key.isidentifier():
            named[key] = value
        else:
            bare.append(word)
    if bare:
        named["\0"] = "\0".join(bare)  # resolved against the declared arguments later
    return PromptCommand(server, prompt, named)


class PromptSource(Protocol):
    """What serves a prompt command (`McpServers`)."""

    async def prompt(self, command: PromptCommand) -> str: ...


def is_command(line: str) -> bool:
    """Whether a chat line starts with `/server:prompt` (an MCP prompt)."""
    words = line.strip().split(maxsplit=1)
    return bool(words) and _split_name(words[0]) is not None


async def command_text(servers: PromptSource | None, line: str) -> str:
    """The text of the turn the line `/server:prompt arg=value ...` asks for: the one
    place every chat surface (terminal, gateways, ACP) turns a prompt into a turn.
    `PromptError` (one line, for the person) when the line, server or prompt is wrong."""
    words = line.split(maxsplit=1)
    name, rest = [*words, "", ""][:2]
    command = parse_command(name, rest)
    if command is None:
        raise PromptError(f"unknown command {name}")
    if servers is None:
        raise PromptError(f"unknown command {name}: no MCP servers here")
    text = await servers.prompt(command)
    if not text.strip():
        raise PromptError(f"{name} gave no text to send")
    return text


def _split_name(name: str) -> tuple[str, str] | None:
    """`/server:prompt` (an `@bot` suffix, as Telegram groups add, taken off) as its two
    names; None when the word is not that shape."""
    if not name.startswith("/") or ":" not in name:
        return None
    server, _, prompt = name[1:].partition(":")
    prompt = prompt.split("@", 1)[0]
    return (server, prompt) if server and prompt else None


def bind(declared: Sequence[Any], given: dict[str, str], usage: str) -> dict[str, str]:
    """The arguments to send: bare values fill the declared arguments in order, names
    must be declared ones, and every required argument must be there."""
    given = dict(given)
    bare = given.pop("\0", "").split("\0") if "\0" in given else []
    names = [arg.name for arg in declared]
    free = [n for n in names if n not in given]
    if len(bare) > len(free):
        raise PromptError(f"too many values; usage: {usage}")
    given.update(zip(free, bare, strict=False))
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise PromptError(f"unknown argument {unknown[0]!r}; usage: {usage}")
    missing = [arg.name for arg in declared if arg.required and arg.name not in given]
    if missing:
        raise PromptError(f"missing {', '.join(missing)}; usage: {usage}")
    return given


def usage(server: str, prompt: Any) -> str:
    """`/server:prompt city=… [state=…]`: how the command is written."""
    words = [f"/{server}:{prompt.name}"]
    for arg in prompt.arguments or ():
        words.append(f"{arg.name}=…" if arg.required else f"[{arg.name}=…]")
    return " ".join(words)


async def get_prompt(conn: ServerConnection, command: PromptCommand) -> str:
    """The turn text of `command`'s prompt (the server is started when it is not)."""
    from seam.plugins.mcp.connection import ServerError

    server, name = command.server, command.prompt
    try:
        await conn.client()
    except ServerError as exc:
        raise PromptError(f"MCP server {server!r}: {exc}") from None
    found = next((p for p in conn.prompts if p.name == name), None)
    if found is None:
        offered = ", ".join(p.name for p in conn.prompts) or "none"
        raise PromptError(f"MCP server {server!r} has no prompt {name!r} (its prompts: {offered})")
    arguments = bind(found.arguments or (), command.arguments, usage(server, found))
    try:
        result = await conn.request(name, lambda client: client.get_prompt(name, arguments))
    except ServerError as exc:
        raise PromptError(f"MCP server {server!r}: {exc}") from None
    return prompt_text(result)


def prompt_text(result: Any) -> str:
    """A `GetPromptResult` as the text of one turn."""
    from seam.plugins.mcp.content import part

    parts: list[str] = []
    for message in getattr(result, "messages", None) or ():
        text = part(message.content, [])
        parts.append(f"(assistant) {text}" if message.role == "assistant" else text)
    return "\n\n".join(part for part in parts if part.strip())


__all__ = [
    "PromptCommand",
    "PromptError",
    "PromptSource",
    "bind",
    "command_text",
    "get_prompt",
    "is_command",
    "parse_command",
    "prompt_text",
    "usage",
]
