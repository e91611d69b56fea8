"""Delivery targets: what each one means, in canonical form, or one line saying why not.

owner                     the `[gateway] owner` target (resolved when delivering)
<platform>:<chat>[:<thread>]
                          a gateway chat (telegram:<chat>, slack:<channel>, ...: the
                          platforms wiring registers): its chat sender delivers it
file:<path>               a file under `$SEAM_HOME/deliveries/` (relative paths are
                          taken from there; absolute ones must lie inside it)
https://... / http://...  a webhook: the JSON payload is POSTed, retried
none                      nothing is delivered (the run's output stays in its ledger)
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from pathlib import Path
from urllib.parse import urlsplit

from seam.contracts.delivery import DeliveryError

OWNER = "owner"
NONE = "none"
FILE_PREFIX = "file:"
# A chat or channel id, and an optional thread after a second colon: no spaces, no
# control characters (they end up in an API call's path or body).
_CHAT_ID = re.compile(r"[A-Za-z0-9_@#.+\-]+(:[A-Za-z0-9_.\-]+)?")


def kinds_hint(chats: Collection[str]) -> str:
    platforms = "".join(f"{name}:<chat>, " for name in chats)
    return f"use owner, {platforms}file:<path>, an https:// webhook URL or none"


def canonical_target(target: str, deliveries: Path, chats: Collection[str] = ()) -> str:
    """`target` in canonical form (see the module doc), or `DeliveryError` in one line.
    `chats`: the chat platforms' names (wiring's registry). `owner` stays `owner` here: it
    is resolved at delivery time, so a job follows a changed `[gateway] owner`."""
    text = target.strip()
    lowered = text.lower()
    if lowered in (OWNER, NONE):
        return lowered
    if lowered.startswith(("https://", "http://")):
        return _webhook(text)
    if lowered.startswith(FILE_PREFIX):
        return FILE_PREFIX + str(file_path(text[len(FILE_PREFIX) :], deliveries))
    platform, sep, rest = text.partition(":")
    if sep and platform.lower() in chats:
        if not _CHAT_ID.fullmatch(rest):
            raise DeliveryError(
                f"delivery target {target!r}: {platform.lower()}:<chat> needs a chat or channel"
                " id (letters, digits, @#_.+-; a thread after a second colon)"
            )
        return f"{platform.lower()}:{rest}"
    raise DeliveryError(f"unknown delivery target {target!r}: {kinds_hint(chats)}")


def file_path(raw: str, deliveries: Path) -> Path:
    """The file a `file:` target names: inside `deliveries`, symlinks resolved."""
    text = raw.strip()
    if not text:
        raise DeliveryError("delivery target file: needs a path, e.g. file:daily.md")
    if "\x00" in text:
        raise DeliveryError("delivery target file: the path holds a NUL byte")
    if text.endswith("/"):
        raise DeliveryError(f"delivery target file:{text}: names a directory, not a file")
    path = Path(text).expanduser()
    if ".." in path.parts:
        raise DeliveryError(f"delivery target file:{text}: '..' may not appear in the path")
    root = Path(os.path.realpath(deliveries))
    full = Path(os.path.realpath(path if path.is_absolute() else root / path))
    if full == root or root not in full.parents:
        raise DeliveryError(
            f"delivery target file:{text}: files are delivered only under {deliveries}/"
            " (give a path relative to it)"
        )
    return full


def _webhook(url: str) -> str:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise DeliveryError(f"delivery target {url!r}: not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise DeliveryError(f"delivery target {url!r}: a webhook needs http(s)://host/...")
    if any(ch.isspace() for ch in url):
        raise DeliveryError(f"delivery target {url!r}: a URL may not hold spaces")
    return url
