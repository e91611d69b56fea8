"""Which of the runtime's environment variables a command may see.

Only an allow list of harmless names (PATH, HOME, locale, terminal) passes, plus globs
the configuration adds; names that look like credentials never pass, whoever asks. Both
backends start commands from this filtered copy (bubblewrap from a cleared environment),
so a provider key in Seam's own environment is absent, not merely hidden.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fnmatch import translate

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

# Variables a command may see from the base environment; everything else is dropped.
SAFE_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "TMPDIR",
    "TZ",
)
# Never passed, whoever asks: names that look like credentials (matched upper-cased).
SECRET_ENV: tuple[str, ...] = (
    "*_API_KEY",
    "*_API_KEYS",
    "*APIKEY*",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*PRIVATE_KEY*",
    "*OAUTH*",
    "AUTH_*",
    "*_AUTH",
    "*_AUTH_*",  # SSH_AUTH_SOCK too: the agent socket unlocks the person's keys
    "*_DSN",
    "DATABASE_URL",
    "AWS_*",
    "AZURE_*",
    "OPENAI_*",
    "ANTHROPIC_*",
    "GEMINI_*",
    "GROQ_*",
    "MISTRAL_*",
    "OPENROUTER_*",
    "HF_*",
    "HUGGING*",
    "GH_*",
    "GITHUB_*",
    "SEAM_*",
)


def _glob_regex(globs: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(translate(g) for g in globs))


_SAFE = _glob_regex(SAFE_ENV)
_SECRET = _glob_regex(SECRET_ENV)


def is_secret(name: str) -> bool:
    return _SECRET.match(name.upper()) is not None


def filter_env(base: Mapping[str, str], *, pass_env: Iterable[str] = ()) -> dict[str, str]:
    """The safe subset of `base`: allowed names (plus `pass_env` globs), secrets never."""
    allowed = _SAFE if not pass_env else _glob_regex((*SAFE_ENV, *pass_env))
    env = {k: v for k, v in base.items() if allowed.match(k) and not is_secret(k)}
    env.setdefault("PATH", DEFAULT_PATH)
    return env
