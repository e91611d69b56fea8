"""When a heartbeat's reply is dropped: it says `HEARTBEAT_OK` and hardly anything else.

The rule: the reply holds `HEARTBEAT_OK` and at most `OK_SLACK` (4) other characters that
are not whitespace: punctuation, a short "ok", Markdown bold around it. So `HEARTBEAT_OK`,
`HEARTBEAT_OK.`, `ok HEARTBEAT_OK` and `**HEARTBEAT_OK**` are dropped; `HEARTBEAT_OK — all
good` (more than a few characters besides) and a sentence that mentions the token are
delivered: whatever else the model wrote might matter, and a message too many beats a
finding never seen. The token is matched in any case.
"""

from __future__ import annotations

HEARTBEAT_OK = "HEARTBEAT_OK"
OK_SLACK = 4


def is_heartbeat_ok(reply: str) -> bool:
    """True when the reply is only the all-clear (see the module doc): drop it."""
    text = reply.strip()
    upper = text.upper()
    if upper.startswith(HEARTBEAT_OK):
        rest = text[len(HEARTBEAT_OK) :]
    elif upper.endswith(HEARTBEAT_OK):
        rest = text[: -len(HEARTBEAT_OK)]
    else:
        rest = _around(text, upper)
        if rest is None:
            return False
    return sum(1 for ch in rest if not ch.isspace()) <= OK_SLACK


def _around(text: str, upper: str) -> str | None:
    """What surrounds the token when a few characters wrap it (`**HEARTBEAT_OK**`):
    only if it starts or ends within the slack of the reply's ends."""
    at = upper.find(HEARTBEAT_OK)
    if at < 0:
        return None
    end = at + len(HEARTBEAT_OK)
    if at > OK_SLACK and len(text) - end > OK_SLACK:
        return None  # in the middle of the text
    return text[:at] + text[end:]
