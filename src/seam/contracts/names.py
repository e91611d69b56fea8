"""Names a platform supplies (a chat user's display name) are made safe to print and log.

A display name is whatever its owner typed: it can hold ESC sequences that repaint the
owner's terminal when `seam pairing list` prints it, a newline that forges a log line,
or bidi overrides that show `evil` as `live`. `clean_name` drops every control
character (C0, DEL, C1) and the bidi embedding/override/isolate marks; everything else
(accents, scripts, emoji with their joiners) is kept.
"""

from __future__ import annotations

import unicodedata

# Bidi marks, embeddings, overrides and isolates (Unicode's Bidi_Control property).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def clean_name(name: str) -> str:
    """`name` without control characters or bidi controls, trimmed of outer spaces."""
    kept = (c for c in name if c not in BIDI_CONTROLS and unicodedata.category(c) != "Cc")
    return "".join(kept).strip()


__all__ = ["BIDI_CONTROLS", "clean_name"]
