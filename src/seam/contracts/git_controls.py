"""Whether a command is one that writes git's control files, for the sandbox's exception.

Under bubblewrap `.git/hooks` and `.git/config` are read-only (code planted there runs on
the person's host later). A command tool may lift that for one call, and only when the
person approved that very command, and the command is about those files: it names
`.git/hooks` or `.git/config`, or runs `git config`, `git remote` or `git submodule`
(global options such as `-C dir` allowed before the subcommand). Pure text matching: it
only ever narrows what an approval already allowed.
"""

from __future__ import annotations

import re

_PATHS = re.compile(r"\.git/(hooks|config)\b")
_GIT = re.compile(
    r"(^|[\s;&|(`])git(\s+(-[cC]\s+\S+|--?[\w-]+(=\S+)?))*\s+(config|remote|submodule)\b"
)


def names_git_controls(command: str) -> bool:
    """True when `command` names `.git/hooks`/`.git/config` or runs `git config`,
    `git remote` or `git submodule`."""
    return bool(_PATHS.search(command) or _GIT.search(command))
