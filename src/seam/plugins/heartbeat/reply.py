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
    # The token at the start, else at the end, of the reply (wrapped in a few characters
    # at most, as in `**HEARTBEAT_OK**`): what is left must be hardly anything.
    for at in (upper.find(HEARTBEAT_OK), upper.rfind(HEARTBEAT_OK)):
        if at < 0:
            return False
        rest = text[:at] + text[at + len(HEARTBEAT_OK) :]
        if sum(1 for ch in rest if not ch.isspace()) <= OK_SLACK:
            return True
    return False
