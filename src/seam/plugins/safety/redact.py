"""Secret redaction for logs, events and stored transcripts.

Each secret becomes `[REDACTED:kind]`; around it, everything stays as it was (the name in
`GITHUB_TOKEN=...`, the user in `https://user:...@host`), so a redacted line still says
what it was about. Patterns favour precision: replacing a git sha, a `max_tokens=100`
or a `password: str` annotation would corrupt code the model reads back later, so a
value has to look like a secret, not merely sit next to a suspicious name.

Speed: each rule runs only when one of its literal markers occurs in the text (a
substring test, far cheaper than a regex), and each regex starts with a literal so the
engine can skip ahead. Rules about names (`password=`, `"token": "..."`) run only on the
lines where a finder saw such a name followed by `=` or `:`. Most text has no marker at
all and comes back as the same object.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

Replace = Callable[[re.Match[str]], str]


def _fixed(kind: str) -> Replace:
    label = f"[REDACTED:{kind}]"

    def replace(match: re.Match[str]) -> str:
        return label

    return replace


# A value that only refers to a secret (a variable, a placeholder, an earlier redaction)
# is left alone.
_NOT_A_VALUE = re.compile(
    r"(?:\$|<|\{|%|\[REDACTED|\.\.\.|…|your[_-]|"
    r"(?:\*+|x+|none|null|nil|true|false|undefined|changeme)$)",
    re.IGNORECASE,
)


def _redacted(keep: str, value: str, kind: str | None) -> str | None:
    """`keep` then the redacted `value`, or None when the value is no secret. With no
    fixed kind, the kind comes from the name (password, token, else secret)."""
    quote = value[0] if value[:1] in ("'", '"') and value[-1:] == value[0] else ""
    bare = value[1:-1] if quote else value
    if not bare or _NOT_A_VALUE.match(bare):
        return None
    if kind is None:
        if bare.isdigit():  # MAX_TOKEN=100: a setting, not a secret
            return None
        name = keep.lower()
        kind = "password" if "pass" in name else "token" if "token" in name else "secret"
    return f"{keep}{quote}[REDACTED:{kind}]{quote}"


def _keep_name(kind: str) -> Replace:
    """For rules with `keep` and `value` groups: keep the name, redact the value."""

    def replace(match: re.Match[str]) -> str:
        return _redacted(match["keep"], match["value"], kind) or match.group(0)

    return replace


@dataclass(frozen=True, slots=True)
class _Rule:
    markers: tuple[str, ...]  # lower case; the rule runs only if one occurs in the text
    pattern: re.Pattern[str]
    replace: Replace


def _rule(kind: str, markers: tuple[str, ...], pattern: str, keep: bool = False) -> _Rule:
    return _Rule(
        markers, re.compile(pattern, re.DOTALL), _keep_name(kind) if keep else _fixed(kind)
    )


# Token shapes; each literal prefix is checked for a word character before it afterwards
# (a lookbehind placed after the literal keeps the engine's fast literal scan).
_RULES: tuple[_Rule, ...] = (
    _rule(
        "private_key",
        ("-----begin",),
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*)",
    ),
    _rule("anthropic", ("sk-ant-",), r"sk-ant-(?<![\w-]sk-ant-)[A-Za-z0-9_-]{20,}"),
    _rule(
        "openai",
        ("sk-",),
        r"sk-(?<![\w-]sk-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}",
    ),
    _rule(
        "github",
        ("gh", "github_pat_"),
        r"gh[pousr]_(?<![\w-]gh._)[A-Za-z0-9]{36,}|"
        r"github_pat_(?<![\w-]github_pat_)[A-Za-z0-9_]{22,}",
    ),
    _rule("slack", ("xox",), r"xox[abposr]-(?<![\w-]xox.-)[A-Za-z0-9-]{10,}"),
    _rule(
        "aws_access_key",
        ("akia", "asia"),
        r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _rule("google_api_key", ("aiza",), r"AIza(?<![\w-]AIza)[0-9A-Za-z_-]{35}(?![\w-])"),
    _rule(
        "stripe",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        r"[sr]k_(?:live|test)_(?<![\w-][sr]k_live_)(?<![\w-][sr]k_test_)[0-9A-Za-z]{16,}",
    ),
    _rule(
        "jwt",
        ("eyj",),
        r"eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    ),
    _rule(
        "bearer",
        ("bearer",),
        r"(?P<keep>[Bb](?i:earer)\s+)"
        r"(?P<value>(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{16,})",
        keep=True,
    ),
    _rule(
        "basic_auth",
        ("basic",),
        r"(?P<keep>[Aa](?i:uthorization)\s*:\s*(?i:basic)\s+)(?P<value>[A-Za-z0-9+/=]{8,})",
        keep=True,
    ),
    _rule(
        "aws_secret",
        ("aws_secret_access_key",),
        r"(?P<keep>[Aa](?i:ws_secret_access_key)[\"']?\s*[=:]\s*[\"']?)"
        r"(?P<value>[A-Za-z0-9/+=]{40})",
        keep=True,
    ),
    _rule(
        "url_password",
        ("://",),
        r"(?P<keep>://[^/\s:@\[\]]+:)(?P<value>[^/\s@]+)(?=@)",
        keep=True,
    ),
    _rule(
        "url_param",
        ("pass", "pwd", "token", "key", "secret", "sig"),
        r"(?P<keep>[?&](?i:password|passwd|pwd|pass|token|access_token|refresh_token|id_token|"
        r"auth_token|private_token|api_key|apikey|api-key|secret|client_secret|sig|signature|"
        r"x-amz-signature|x-amz-credential|x-amz-security-token)=)(?P<value>[^&\s#\"'<>]+)",
        keep=True,
    ),
)

# Names that hold secrets end in one of these words: GITHUB_TOKEN, db_password, client_secret.
_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*?(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|secret[_-]?key|credentials?)"
)
_NAMED_MARKERS = ("pass", "secret", "token", "key", "credential")
# Finds a candidate name cheaply: the first letter as a case-folded class lets the engine
# skip ahead; the rest of the line is then checked by _NAMED.
_NAMED_FINDER = re.compile(
    r"[PpSsTtKkCc](?i:assword|asswd|assphrase|ecret|oken|ey|redentials?)[\"']?[ \t]*[:=]"
)
_NAMED = re.compile(
    # NAME=value at the start of a line: .env files, `env` output, shell exports. Not
    # indented (unless exported): an indented `api_key=key,` is a keyword argument.
    rf"^(?P<env_keep>(?:[ \t]*export[ \t]+)?(?i:{_NAME})=)"
    r"(?P<env_value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'#(),]+(?=\s|$))"
    # name: value in YAML, where the value has a digit (so `password: str` stays).
    rf"|^(?P<yaml_keep>[ \t]*(?:-[ \t]+)?(?i:{_NAME}):[ \t]+)"
    r"(?P<yaml_value>(?=[^\s#]*\d)[^\s#\"'\[\]{}()|,]{6,})(?=[ \t]*(?:#.*)?$)"
    # name: "value" / name = 'value' / "name": "value" (code, JSON, YAML, TOML).
    rf"|(?P<code_keep>(?<![\w-])[\"']?(?i:{_NAME})[\"']?[ \t]*[:=][ \t]*[\"'])"
    r"(?P<code_value>[^\"'\s]{4,})(?=[\"'])"
)


def _replace_named(match: re.Match[str]) -> str:
    form = (match.lastgroup or "").removesuffix("_value")  # env, yaml or code
    return _redacted(match[f"{form}_keep"], match[f"{form}_value"], None) or match.group(0)


# Every marker of every rule, for one look first: text holding none of them (most text,
# and nearly every short name or id) has nothing any rule could match.
_MARKERS = {marker for rule in _RULES for marker in rule.markers} | set(_NAMED_MARKERS)
_ANY_MARKER = re.compile("|".join(sorted(map(re.escape, _MARKERS))))


def redact(text: str) -> str:
    """`text` with each secret replaced by `[REDACTED:kind]`; the same object if none."""
    lowered = text.lower()
    if _ANY_MARKER.search(lowered) is None:
        return text
    out = text
    for rule in _RULES:
        if any(marker in lowered for marker in rule.markers):
            out = rule.pattern.sub(rule.replace, out)
    if any(marker in lowered for marker in _NAMED_MARKERS):
        out = _redact_named(out)
    return text if out == text else out


def _redact_named(text: str) -> str:
    parts: list[str] = []
    done = 0  # text[:done] is already in parts
    for found in _NAMED_FINDER.finditer(text):
        if found.start() < done:
            continue  # on a line already handled
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        end = len(text) if end < 0 else end
        parts.append(text[done:start])
        parts.append(_NAMED.sub(_replace_named, text[start:end]))
        done = end
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


class RedactingFilter(logging.Filter):
    """Redacts a record's message (formatted with its args) and its traceback text.

    Attach it to handlers: a filter on a logger does not see records from its children."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: the handler reports it, as it would anyway
            return True
        redacted = redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True
