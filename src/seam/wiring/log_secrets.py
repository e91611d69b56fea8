"""What a command's logs redact with, built from the settings the command already read.

The log handlers are installed before a command runs (a fault while reading the settings
must be logged too), so they cannot be handed the settings' redactor then. A command
that opens a runtime hands its redactor over (`adopt`): the runtime built it from the
settings it loaded, so the logs need not read `config.toml` a second time to build the
same one. Until then (or in a command without a runtime), the first record builds it from
the environment's settings, as `wiring.secrets.redactor_for_env` does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextvars import ContextVar

Redact = Callable[[str], str]


class LogSecrets:
    """The redactor the command's log handlers call (see the module's docstring)."""

    def __init__(self) -> None:
        self._redact: Redact | None = None

    def adopt(self, redact: Redact | None) -> None:
        """Redact with the runtime's own redactor, unless one is already in use."""
        if self._redact is None and redact is not None:
            self._redact = redact

    def __call__(self, text: str) -> str:
        if self._redact is None:
            from seam.plugins.safety.redact import redact
            from seam.wiring.secrets import redactor_for_env

            self._redact = redact  # a record logged while building is still redacted
            self._redact = redactor_for_env(os.environ)
        return self._redact(text)


# The running command's `LogSecrets` (set by `runner.execute` around the command).
COMMAND_SECRETS: ContextVar[LogSecrets | None] = ContextVar("seam_log_secrets", default=None)
