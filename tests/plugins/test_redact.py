"""Secret redaction: a table of secrets, a table of look-alikes that must survive, logs."""

from __future__ import annotations

import base64
import io
import json
import logging
import time
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from seam.plugins.safety.redact import RedactingFilter, redact

# Built from parts so this file is not itself a set of secret-shaped strings to scanners.
OPENAI = "sk-" + "proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
LEGACY_OPENAI = "sk-" + "T3BlbkFJ" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
ANTHROPIC = "sk-ant-" + "api03-" + "x" * 20 + "Yz09_-AbC" + "q" * 40
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCD"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
STRIPE = "sk_" + "live_" + "51H8aBcDeFgHiJkLmNoPqRsTu"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

SECRETS = [
    (f"key: {OPENAI}", "key: [REDACTED:openai]"),
    (f"OPENAI_API_KEY={LEGACY_OPENAI}", "OPENAI_API_KEY=[REDACTED:openai]"),
    (f'{{"api_key": "{ANTHROPIC}"}}', '{"api_key": "[REDACTED:anthropic]"}'),
    (
        f"git remote set-url origin https://{GITHUB}@github.com/me/x",
        "git remote set-url origin https://[REDACTED:github]@github.com/me/x",
    ),
    (f"token {GITHUB_PAT} expires", "token [REDACTED:github] expires"),
    (f"SLACK_BOT_TOKEN='{SLACK}'", "SLACK_BOT_TOKEN='[REDACTED:slack]'"),
    (f"id={AWS_KEY} region=eu-west-1", "id=[REDACTED:aws_access_key] region=eu-west-1"),
    (
        f"[default]\naws_secret_access_key = {AWS_SECRET}\n",
        "[default]\naws_secret_access_key = [REDACTED:aws_secret]\n",
    ),
    (f"maps?key={GOOGLE}&q=x", "maps?key=[REDACTED:google_api_key]&q=x"),
    (f"stripe.api_key = '{STRIPE}'", "stripe.api_key = '[REDACTED:stripe]'"),
    (f"cookie: session={JWT}; Path=/", "cookie: session=[REDACTED:jwt]; Path=/"),
    (
        'curl -H "Authorization: Bearer abc123def456ghi789jkl" https://api.example.com',
        'curl -H "Authorization: Bearer [REDACTED:bearer]" https://api.example.com',
    ),
    ("Authorization: Basic dXNlcjpodW50ZXIy", "Authorization: Basic [REDACTED:basic_auth]"),
    (f"before\n{PEM}\nafter", "before\n[REDACTED:private_key]\nafter"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA (output cut here",
        "[REDACTED:private_key]",
    ),
    (
        "postgres://app:s3cr3t-pw@db.internal:5432/main",
        "postgres://app:[REDACTED:url_password]@db.internal:5432/main",
    ),
    (
        "GET /callback?code=1&access_token=ya29.a0AfH6SM&state=x",
        "GET /callback?code=1&access_token=[REDACTED:url_param]&state=x",
    ),
    (
        "DB_PASSWORD=hunter2\nexport API_TOKEN=abc.def",
        "DB_PASSWORD=[REDACTED:password]\nexport API_TOKEN=[REDACTED:token]",
    ),
    ("  password: Tr0ub4dor&3  # prod", "  password: [REDACTED:password]  # prod"),
    ('client_secret = "9f8e7d6c5b4a"', 'client_secret = "[REDACTED:secret]"'),
]


@pytest.mark.parametrize(("text", "expected"), SECRETS, ids=[str(i) for i in range(len(SECRETS))])
def test_secrets_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


LOOK_ALIKES = [
    "Keys start with sk- and are 51 characters long.",
    "pip install scikit-learn  # not sk-learn",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "max_tokens=100, temperature=0.2",
    "MAX_TOKEN=4096\nTOKENIZER_PATH=/models/tok.json\nPWD=/home/me\nOLDPWD=/tmp",
    "def login(password: str, token: str | None = None) -> None:",
    "    api_key=api_key,\n    eos_token=llm.token_eos(),",
    "password = args.password",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=<your key here>\nSECRET=changeme",
    "The bearer of this letter is welcome.",
    "Authorization: Bearer $TOKEN",
    "ssh://git@github.com/org/repo.git and git@github.com:org/repo.git",
    "http://localhost:8080/path@v2",
    "See https://example.com/docs?page=2&sort=asc",
    "the ghost of gh_pages past; ghp_short",
    "AKIA is the prefix of AWS access key ids",
    "eyJhbGciOiJIUzI1NiJ9 alone is just a header",
    "password: SecretStr",
    "Call `redact(text)`; it returns `[REDACTED:kind]` markers.",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_text_without_secrets_is_the_same_object() -> None:
    text = "nothing to see here\n" * 1000
    assert redact(text) is text


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact("\n".join(text for text, _ in SECRETS))
    assert redact(once) == once


def test_a_megabyte_of_ordinary_text_does_not_backtrack_catastrophically() -> None:
    """A guard against a pattern that backtracks without end (a hang, not a slow pass):
    the bound is far above any real cost. How fast redaction is: bench/redaction.py."""
    text = "\n".join(LOOK_ALIKES) * 600  # about 1 MB with many near-misses
    started = time.perf_counter()
    assert redact(text) == text
    assert time.perf_counter() - started < 30.0


@pytest.fixture
def log() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("test_redact")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    yield logger, stream
    logger.removeHandler(handler)


def test_logging_filter_redacts_message_args_and_tracebacks(
    log: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = log
    logger.warning("calling with key %s (%d tries)", OPENAI, 3)
    try:
        raise RuntimeError(f"auth failed for {GITHUB}")
    except RuntimeError:
        logger.exception("request failed")
    written = stream.getvalue()
    assert "WARNING calling with key [REDACTED:openai] (3 tries)" in written
    assert "RuntimeError: auth failed for [REDACTED:github]" in written
    assert OPENAI not in written and GITHUB not in written


def test_logging_filter_leaves_clean_records_untouched(
    log: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = log
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    assert RedactingFilter().filter(record) is True
    assert (record.msg, record.args) == ("hello %s", ("world",))
    logger.info("turn %s took %.1f s", "t1", 1.25)
    assert stream.getvalue() == "INFO turn t1 took 1.2 s\n"


# -- private keys and AWS secret keys in the forms a command can still print ------------

_FILLER = "q1W2e3R4t5Y6u7I8o9P0aSdFgHjKlZxCvBnM" * 2  # base64-alphabet body text
# How each kind of private key's body starts (OpenSSH, PKCS#8 RSA, PKCS#1 RSA, EC, Ed25519).
KEY_BODIES = {
    "OPENSSH PRIVATE KEY": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "PRIVATE KEY": "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDOiiby5o7Ofwjx",
    "RSA PRIVATE KEY": "MIIEogIBAAKCAQEApVRO/s0xj6AiFa43lM5aEn2KYTPzWglqhVPlEOGPtgGsbfH9",
    "EC PRIVATE KEY": "MHcCAQEEIDLluEaDw/ELqE0+X9/Q97K812745QPDe/xkLs0UEuXVoAoGCCqGSM49",
    "ED25519": "MC4CAQAwBQYDK2VwBCIEIDdniIJ3m8xUfhI46tE2mds7u9n7WQrMjU2Bs/Hnawt8",
}


def _pem(kind: str, head: str) -> str:
    label = "PRIVATE KEY" if kind == "ED25519" else kind
    body = "\n".join([head, _FILLER[:64], _FILLER[:20] + "=="])
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


def _b64(text: str, prefix: bytes = b"") -> str:
    return base64.b64encode(prefix + text.encode()).decode()


def _wrapped(text: str, width: int) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


KEY_FORMS = {
    "pem": lambda pem: pem,
    "body without its BEGIN line": lambda pem: pem.split("\n", 1)[1],
    "body alone": lambda pem: "\n".join(pem.splitlines()[1:-1]),
    "base64, wrapped at 76": lambda pem: _wrapped(_b64(pem), 76),
    "base64 on one line": lambda pem: _b64(pem),
    "base64 at offset 1": lambda pem: _b64(pem, b"\n"),
    "base64 at offset 2": lambda pem: _b64(pem, b"\n\n"),
    "url-safe base64": lambda pem: base64.urlsafe_b64encode(pem.encode()).decode(),
    "hex (xxd -p)": lambda pem: _wrapped(pem.encode().hex(), 60),
    "url-encoded": lambda pem: quote(pem),
    "escaped in JSON": lambda pem: json.dumps({"out": pem}),
}


@pytest.mark.parametrize("form", KEY_FORMS, ids=list(KEY_FORMS))
@pytest.mark.parametrize("kind", KEY_BODIES, ids=list(KEY_BODIES))
def test_private_keys_are_caught_in_every_form(kind: str, form: str) -> None:
    head = KEY_BODIES[kind]
    shown = KEY_FORMS[form](_pem(kind, head))
    out = redact(f"$ cat key\n{shown}\n$ ")
    assert "[REDACTED:private_key]" in out
    assert _FILLER[:24] not in out and head[10:30] not in out
    assert _b64(_FILLER[:30])[4:24] not in out
    assert out.startswith("$ cat key\n")


def test_a_pgp_private_key_block_is_caught() -> None:
    block = (
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{_FILLER}\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    assert redact(f"a\n{block}\nb") == "a\n[REDACTED:private_key]\nb"


@pytest.mark.parametrize(
    "text",
    [
        f"Access key ID,Secret access key\n{AWS_KEY},{AWS_SECRET}\n",
        f'{{"AccessKeyId": "{AWS_KEY}", "SecretAccessKey": "{AWS_SECRET}", "Expiration": "x"}}',
        f"aws configure set aws_access_key_id {AWS_KEY}; aws configure set x {AWS_SECRET}",
        f's3 = client("s3", aws_access_key_id="{AWS_KEY}",\n  aws_secret_key="{AWS_SECRET}")',
        f'"SecretAccessKey": "{AWS_SECRET}"',
        f"secret_access_key: '{AWS_SECRET}'",
        _b64(f"[default]\naws_access_key_id = {AWS_KEY}\naws_secret_access_key = {AWS_SECRET}\n"),
        _wrapped(
            _b64(f"[default]\naws_access_key_id={AWS_KEY}\naws_secret_access_key={AWS_SECRET}\n"),
            76,
        ),
    ],
)
def test_bare_aws_secret_keys_are_caught_in_typical_contexts(text: str) -> None:
    out = redact(text)
    assert AWS_SECRET not in out and AWS_SECRET[5:25] not in out
    assert _b64(AWS_SECRET)[8:28] not in out


@pytest.mark.parametrize(
    "text",
    [
        # 40 characters next to a key id, but a hex sha (no upper case) or a plain word run.
        f"{AWS_KEY} at commit 3f786850e387550fdab836ed7e6dc881de23001b",
        f"{AWS_KEY} in ThisIsAnOrdinaryCamelCaseIdentifierRunX",
        # 40 base64-looking characters with no key id near.
        f"checksum {AWS_SECRET[::-1]}",
        # base64 of ordinary text is decoded, found harmless, and kept.
        _b64("just an ordinary line of text, nothing secret in it at all"),
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTES",  # a certificate
    ],
)
def test_aws_and_base64_look_alikes_are_left_alone(text: str) -> None:
    out = redact(text)
    assert out == text.replace(AWS_KEY, "[REDACTED:aws_access_key]")
