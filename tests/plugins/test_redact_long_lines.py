"""Secrets after a name (`"api_key": "..."`, `password=...`) on long lines.

Minified JSON, a long log line or an 80 kB tool result without newlines is one line. The
named rule tries its regex once per name (`_redact_named_line`), not at every word of the
line, and must find exactly what the whole-line regex finds; a hostile name built to
make that regex walk it again from every start must not hold the event loop.
"""

from __future__ import annotations

import json
import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from seam.plugins.safety import redact as redaction
from seam.plugins.safety.redact import redact

# Parts of names, separators, quotes and values, the named forms' alphabet.
PARTS = [
    *("token", "password", "PASSWORD", "secret", "api_key", "apikey", "api-key", "key"),
    *("access_key", "private_key", "credentials", "passphrase", "passwd", "Key", "my"),
    *("db", "config.", "_", "-", ".", "..", "=", ":", " ", "\t", "\n", "'", '"', "#"),
    *("export ", "- ", "abc123XYZ", "s3cr3tValue99", "x", "9", "(", ",", "$HOME", "<v>"),
    *("[REDACTED:x]", "true", "12345678", "é", "²", "中", "'token'", '"key":', "_.", "a."),
]

# Whole named assignments, each from a lead-in, a name, a separator and a value: the
# shapes the rule looks for, where the parts above alone rarely line up.
ASSIGNMENTS = st.tuples(
    st.sampled_from(["", " ", "x", "x ", "\n", "'", '"', "a.", "a..", "_.", "-", "é", "{"]),
    st.sampled_from(["token", "password", "api_key", "apikey", "secret", "my.token", "Key"]),
    st.sampled_from(["=", ":", ": ", " = ", '"=', "':", "\t:\t", '": ']),
    st.sampled_from(["'s3cr3tValue99'", '"abc123XYZ"', "abc123XYZ", "12345678", "$HOME"]),
).map("".join)
TEXTS = st.lists(st.one_of(ASSIGNMENTS, st.sampled_from(PARTS)), max_size=16).map("".join)


def _whole_lines(text: str) -> str:
    """The named rule as it ran before: the regex over each line that has a hit."""
    out = []
    for line in text.split("\n"):
        hit = redaction._NAMED_FINDER.search(line) is not None
        out.append(redaction._NAMED.sub(redaction._replace_named, line) if hit else line)
    return "\n".join(out)


@settings(max_examples=1000, deadline=None)
@given(TEXTS)
# A name that starts after a `.` inside a run (the run's start is no name), one after
# a quote that follows a word, and one a character into the line.
@example("__.token: 'abc123XYZ'")
@example("x a..token='s3cr3tValue99'")
@example("x'token': 'abc123XYZ'")
@example(" token: 'abc123XYZ'")
def test_the_named_rule_finds_what_the_whole_line_regex_finds(text: str) -> None:
    assert redaction._redact_named(text) == _whole_lines(text)


def test_a_minified_json_is_redacted_as_its_pretty_printed_form() -> None:
    records = [
        {
            "user": f"u{n}",
            "api_key": f"k{n}Zx81Qp0Lm3Vt",
            "config.password": f"p4ss-{n}-w0rd",
            "password": "str",  # a type name, not a secret: both forms keep it
            "note": "token: not quoted, so no value to redact",
        }
        for n in range(400)
    ]
    one_line = redact(json.dumps(records))
    assert "\n" not in one_line
    pretty = redact(json.dumps(records, indent=1))
    assert json.loads(one_line) == json.loads(pretty)
    first = json.loads(one_line)[0]
    assert first["api_key"] == "[REDACTED:secret]"
    assert first["config.password"] == "[REDACTED:password]"
    assert first["user"] == "u0"
    assert "k399Zx81Qp0Lm3Vt" not in one_line


def test_a_hostile_name_does_not_hold_redaction() -> None:
    """`a.a.a...` lets the regex start after every `.` and walk the rest of the name from
    each: 40 kB took a minute before (time in the square of the length). The bound is a
    guard against that, far above the cost now (milliseconds); bench/redaction.py says
    how fast redaction is."""
    hostile = "a." * 20_000
    texts = [
        hostile + ".token: 'k3yValue42'",  # a break just before the keyword
        "x " + hostile + "token: no-quotes",  # a name that fails after its keyword
    ]
    started = time.perf_counter()
    found = [redact(text) for text in texts]
    assert time.perf_counter() - started < 5.0
    assert found[0].endswith("..token: '[REDACTED:token]'")
    assert found[1] == texts[1]
