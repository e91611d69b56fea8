"""Tab completion in `seam chat`: slash commands, and the arguments some of them take.

`/mo` + Tab gives `/model`; after `/model ` Tab offers the configured model names, after
`/personality ` the personalities, after `/mcp ` and `/dnd ` their words. The lists are
asked for at each Tab, so a model or personality added meanwhile is offered at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

Choices = Callable[[str], Iterable[str]]


class SlashCompleter(Completer):
    """Completes `/command` names (`commands()`) and then the command's argument
    (`arguments(command)`, empty for a command that takes none)."""

    def __init__(self, commands: Callable[[], Iterable[str]], arguments: Choices) -> None:
        self._commands = commands
        self._arguments = arguments

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/") or "\n" in text:
            return
        command, space, typed = text.partition(" ")
        if not space:
            choices: Iterable[str] = self._commands()
            typed = command
        elif " " in typed:
            return  # past the one argument
        else:
            choices = self._arguments(command)
        for choice in dict.fromkeys(choices):
            if choice.startswith(typed) and choice != typed:
                yield Completion(choice, start_position=-len(typed))


__all__ = ["SlashCompleter"]
