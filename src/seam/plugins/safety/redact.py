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

import base64
import binascii
import logging
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

from seam.plugins.safety.lazy_pattern import LazyPattern
from seam.plugins.safety.shapes import has_run, shape

Replace = Callable[[re.Match[str]], str]


def _fixed(kind: str) -> Replace:
    label = f"[REDACTED:{kind}]"

    def replace(match: re.Match[str]) -> str:
        return label

    return replace


# A value that only refers to a secret (a variable, a placeholder, an earlier redaction)
# is left alone.
_NOT_A_VALUE = LazyPattern(
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
    pattern: LazyPattern  # compiled when a marker first occurs
    replace: Replace


def _rule(kind: str, markers: tuple[str, ...], pattern: str, keep: bool = False) -> _Rule:
    return _Rule(
        markers, LazyPattern(pattern, re.DOTALL), _keep_name(kind) if keep else _fixed(kind)
    )


# The rest of a private key's base64 body, over wrapped lines (or `\\n` escapes). After
# "MII" (a long DER sequence) only an RSA key's start counts, not a certificate's.
_KEY_BODY_REST = (
    r"(?:(?<=MII)[A-Za-z0-9+/]{3}IBA(?:AKC|DANBgkqhkiG9w0BAQEFAASC)|(?<!MII))"
    r"[A-Za-z0-9+/=]*(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]+)*"
)

# Token shapes; each literal prefix is checked for a word character before it afterwards
# (a lookbehind placed after the literal keeps the engine's fast literal scan).
_RULES: tuple[_Rule, ...] = (
    # Spaces may arrive URL-encoded (`quote(open(key).read())`); an unended block (output
    # cut short) is redacted to the end of the text.
    _rule(
        "private_key",
        ("-----begin",),
        r"-----BEGIN(?:[ +]|%20)(?:[A-Z0-9 +]|%20)*PRIVATE(?:[ +]|%20)KEY(?:(?:[ +]|%20)BLOCK)?"
        r"-----(?:.*?-----END(?:[ +]|%20)(?:[A-Z0-9 +]|%20)*PRIVATE(?:[ +]|%20)KEY"
        r"(?:(?:[ +]|%20)BLOCK)?-----|.*)",
    ),
    # A key's body without its BEGIN line (`sed 1d ~/.ssh/id_ed25519`), by how the DER (or
    # OpenSSH) structure of a private key starts: OpenSSH, PKCS#1/#8 RSA, EC, Ed25519.
    *(
        _rule("private_key", (head.lower(),), head + _KEY_BODY_REST)
        for head in (
            "b3BlbnNzaC1rZXktdj",
            "MII",  # then PKCS#1 or PKCS#8 RSA (checked by _KEY_BODY_REST's lookahead)
            "MIGHAgEAMBMGByqGSM49",
            "MHcCAQEEI",
            "MIGkAgEBBDA",
            "MC4CAQAwBQYDK2VwBCIEI",
        )
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
    # The names AWS tools give the secret key: credentials files and env (aws_secret_access_key),
    # `aws sts`/`aws iam` JSON (SecretAccessKey), SDK code (secret_access_key, aws_secret_key).
    # One rule per spelling, so each starts with a literal the engine can skip ahead to.
    *(
        _rule(
            "aws_secret",
            (name.lower(),),
            rf"(?P<keep>{name}(?<![A-Za-z0-9]{name}){rest}[\"']?\s*[=:]\s*[\"']?)"
            r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
            keep=True,
        )
        for name, rest in (
            ("aws_secret", "(?:_access)?(?:_key)?"),
            ("AWS_SECRET", "(?:_ACCESS)?(?:_KEY)?"),
            ("awsSecret", "(?:Access)?(?:Key)?"),
            ("AwsSecret", "(?:Access)?(?:Key)?"),
            ("secret_access_key", ""),
            ("SECRET_ACCESS_KEY", ""),
            ("secretAccessKey", ""),
            ("SecretAccessKey", ""),
            ("secret-access-key", ""),
        )
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
_NAMED_FINDER = LazyPattern(
    r"[PpSsTtKkCc](?i:assword|asswd|assphrase|ecret|oken|ey|redentials?)[\"']?[ \t]*[:=]"
)
_NAMED = LazyPattern(
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
    out = _redact(text, depth=0)
    return text if out == text else out


def _redact(text: str, depth: int) -> str:
    lowered = text.lower()
    out = text
    # One look first: text holding no marker at all (most text) skips every rule; an
    # encoded run is still decoded below, since its markers are hidden by the encoding.
    if _ANY_MARKER.search(lowered) is not None:
        if "akia" in lowered or "asia" in lowered:
            out = _redact_aws_pairs(out)
        for rule in _RULES:
            if any(marker in lowered for marker in rule.markers):
                out = rule.pattern.sub(rule.replace, out)
        if any(marker in lowered for marker in _NAMED_MARKERS):
            out = _redact_named(out)
    if depth < MAX_DECODE_DEPTH and has_run(shape(out), MIN_ENCODED_RUN):
        out = _ENCODED.sub(lambda match: _encoded(match.group(0), depth), out)
    return out


# A bare AWS secret key has no shape of its own (40 characters of base64), so it is
# recognised by its company: within this many characters of an access key id, as in a
# credentials CSV, `aws configure list` or an SDK call with both.
AWS_PAIR_WINDOW = 256
_AWS_KEY_ID = LazyPattern(r"A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])")
# Mixed case with a digit or / or +: not a 40-digit hex git sha, not a word.
_AWS_SECRET = LazyPattern(
    r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])"
    r"(?=[A-Za-z0-9/+]{0,39}[0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"
)


def _redact_aws_pairs(text: str) -> str:
    windows: list[list[int]] = []
    for found in _AWS_KEY_ID.finditer(text):
        start, end = max(0, found.start() - AWS_PAIR_WINDOW), found.end() + AWS_PAIR_WINDOW
        if windows and start <= windows[-1][1]:
            windows[-1][1] = end
        else:
            windows.append([start, end])
    if not windows:
        return text
    parts: list[str] = []
    done = 0
    for start, end in windows:
        parts.append(text[done:start])
        parts.append(_AWS_SECRET.sub("[REDACTED:aws_secret]", text[start:end]))
        done = min(end, len(text))
    parts.append(text[done:])
    return "".join(parts)


# Base64 and hex runs (also wrapped over lines, or over `\n` escapes in JSON) are decoded
# and redacted as text: `base64 ~/.ssh/id_rsa` or `xxd -p .env` shows what it encodes.
# A run that hides a secret is replaced whole. Decoding goes this many levels deep.
MAX_DECODE_DEPTH = 2
MIN_ENCODED_CHARS = 32
MIN_ENCODED_RUN = 24  # of standard base64 characters: the cheap test before the regex
_ENCODED = LazyPattern(
    rf"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{{{MIN_ENCODED_CHARS},}}={{0,2}}"
    r"(?:(?:\r?\n|\\n)[A-Za-z0-9+/_-]+={0,2})*"
)
_HEX = LazyPattern(r"(?:[0-9a-f]{2})+|(?:[0-9A-F]{2})+")
# "PRIVATE KEY" in base64 at each of the three byte offsets, and in hex: a PEM file's
# encoding, wherever the run was cut.
_ENCODED_PEM = ("UFJJVkFURSBLRV", "BSSVZBVEUgS0VZ", "QUklWQVRFIEtFW", "50524956415445204b4559")
_LABEL = LazyPattern(r"\[REDACTED:(\w+)\]")


def _encoded(run: str, depth: int) -> str:
    joined = run.replace("\\n", "").replace("\r", "").replace("\n", "")
    if any(marker in joined or marker.upper() in joined for marker in _ENCODED_PEM):
        return "[REDACTED:private_key]"
    data = _decode(joined)
    if data is None:
        return run
    text = data.decode("utf-8", "replace")
    redacted = _redact(text, depth + 1)
    if redacted == text:
        return run
    found = _LABEL.search(redacted)
    return f"[REDACTED:{found.group(1) if found else 'secret'}]"


def _decode(joined: str) -> bytes | None:
    if _HEX.fullmatch(joined):
        return bytes.fromhex(joined)
    core = joined.rstrip("=").replace("-", "+").replace("_", "/")
    if len(core) % 4 == 1:
        core = core[:-1]
    try:
        return base64.b64decode(core + "=" * (-len(core) % 4))
    except (binascii.Error, ValueError):
        return None


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
        parts.append(_redact_named_line(text[start:end]))
        done = end
    if not parts:
        return text
    parts.append(text[done:])
    return "".join(parts)


# What a name may hold before its keyword (`_NAME`'s chunks), and what separates chunks.
_NAME_CHARS = string.ascii_letters + string.digits + "_.-"
_SEPARATORS = ("_", ".", "-")
# Two separators in a row, where no name of chunks passes.
_BREAKS = tuple(a + b for a in _SEPARATORS for b in _SEPARATORS)


def _redact_named_line(line: str) -> str:
    """`_NAMED.sub(_replace_named, line)`, trying the regex once where it can match.

    Why: `_NAMED` cannot skip ahead (it starts with a lookbehind and a repeated chunk of
    a name), so `sub` tried every word of the line (9-10 ms for an 80 kB line of prose,
    and minified JSON or a long log line is one line), and every start walks the name to
    its keyword, so a hostile name of `a.a.a...` (a start after each `.`) took time in
    the square of its length: 4.8 s for 10 kB, minutes for a tool result's 80 kB, all of
    it on the event loop.

    Where a match can be: at the line's start (the `env` and `yaml` forms are anchored
    there), or its name ends at a hit of `_NAMED_FINDER` (a keyword, then `:` or `=`) and
    it starts in that name's run of name characters (`_name_start`). Tried in the order
    `sub` would try them, with the same regex, so the result is the same.
    """
    parts: list[str] = []
    done = 0  # line[:done] is already in parts
    found = _NAMED.match(line)
    if found is not None:
        parts.append(_replace_named(found))
        done = found.end()
    look = done
    while (hit := _NAMED_FINDER.search(line, look)) is not None:
        floor, look = look, hit.end()
        start = _name_start(line, hit.start(), floor)
        if start is None or (found := _NAMED.match(line, start)) is None:
            continue
        parts.append(line[done:start])
        parts.append(_replace_named(found))
        done = look = found.end()
    if not parts:
        return line
    parts.append(line[done:])
    return "".join(parts)


def _name_start(line: str, keyword: int, floor: int) -> int | None:
    """The one place a match may start whose name ends in the keyword at `keyword`, after
    `floor` (the last hit's or match's end) and after 0 (tried with the line's start).

    The lookbehind allows a start in the run of name characters before the keyword only
    at the run's start (unless a letter of another script ends the word before it) or
    after a `.`; a quote before the run gives the same match as the run's start, with the
    quote kept either way. A start before two separators in a row fails there, and every
    start after them walks the same chunks to the same keyword and the same rest, so all
    of those match or none does: the first is tried.
    """
    run = line[floor:keyword]
    first = keyword - (len(run) - len(run.rstrip(_NAME_CHARS)))
    name = line[first:keyword]
    broken = max(name.rfind(pair) + 1 for pair in _BREAKS)  # the pair's second; 0: none
    if broken == 0 and not name.startswith(_SEPARATORS):
        if first == 0:
            return None  # the line's start was tried, and every later start is the same
        if not line[first - 1].isalnum():  # ASCII ones are in the run; others are `\w`
            return first
    dot = line.find(".", first + broken, keyword)
    return None if dot < 0 else dot + 1


class RedactingFilter(logging.Filter):
    """Redacts a record's message (formatted with its args) and its traceback text.

    Attach it to handlers: a filter on a logger does not see records from its children.
    `redactor` replaces the pattern redaction (wiring hands in one that also knows the
    process's own secrets)."""

    def __init__(self, redactor: Callable[[str], str] | None = None) -> None:
        super().__init__()
        self.redactor = redactor or redact

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: the handler reports it, as it would anyway
            return True
        redacted = self.redactor(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor(record.exc_text)
        return True
