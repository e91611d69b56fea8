"""Secret redaction: a table of secrets, a table of look-alikes that must survive, logs."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator

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


def test_a_megabyte_of_ordinary_text_is_fast() -> None:
    text = "\n".join(LOOK_ALIKES) * 600  # about 1 MB with many near-misses
    started = time.perf_counter()
    assert redact(text) == text
    assert time.perf_counter() - started < 1.0


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
