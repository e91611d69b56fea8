"""Files people send: text documents go into the working directory, named to the model;
the rest gets a reply saying Seam cannot use it here yet.

Saved as `chat-files/<message id>-<name>` under the working directory, through a
storage confined to it (`working_dir_storage`): the name is reduced to safe characters
(no directories, no dot-files), so a file can only land in that folder, and the message
id keeps two files of one name apart and makes a redelivered message save the same path
(its submission text, which names the file, must not change). A sandboxed command can
plant a link at `chat-files` or at the file's name; the storage refuses a link that
leads out (or into `$SEAM_HOME`) and opens beneath the working directory, so the
sender's text never lands through it: they are told in one line, and the turn goes on.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from seam.contracts.chat import Attachment
from seam.contracts.storage import Storage, StorageError

log = logging.getLogger("seam.gateway")

FOLDER = "chat-files"
# Bigger documents are not read into the context's working directory.
MAX_DOCUMENT_BYTES = 1_000_000
TEXT_MIMES = ("application/json", "application/xml", "application/x-yaml", "application/toml")
UNUSABLE = {
    "voice": "voice messages",
    "audio": "audio files",
    "image": "images",
    "video": "videos",
    "other": "this kind of attachment",
}


@dataclass
class Received:
    saved: list[str] = field(default_factory=list)  # paths relative to the working dir
    refused: list[str] = field(default_factory=list)  # one sentence per refused file


def safe_name(name: str) -> str:
    base = posixpath.basename(name.replace("\\", "/")).strip()
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).lstrip(".") or "file"
    return base[:120]


def is_text(item: Attachment) -> bool:
    mime = (item.mime_type or "").lower()
    return mime.startswith("text/") or mime in TEXT_MIMES or not mime


def wanted(item: Attachment) -> bool:
    """Whether `item` is what `receive` reads: a text document within the limit."""
    small = item.size is None or item.size <= MAX_DOCUMENT_BYTES
    return item.kind == "document" and small and is_text(item)


def readable(item: Attachment) -> bool:
    """Whether `receive` downloads `item` (wanted, and it can be fetched)."""
    return wanted(item) and item.fetch is not None


async def receive(attachments: Sequence[Attachment], message_id: str, storage: Storage) -> Received:
    """Save the text documents through `storage` (confined to the working directory:
    relative paths land there); a sentence for each attachment that was not saved."""
    out = Received()
    for item in attachments:
        if item.kind != "document":
            what = UNUSABLE.get(item.kind, UNUSABLE["other"])
            out.refused.append(f"I can't use {what} here yet.")
            continue
        if item.size is not None and item.size > MAX_DOCUMENT_BYTES:
            out.refused.append(f"{item.name} is too big for me (over 1 MB).")
            continue
        if item.fetch is None or not is_text(item):
            out.refused.append(f"I can only read text documents, not {item.name}.")
            continue
        try:
            data = await item.fetch()
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            out.refused.append(f"{item.name} is not a text file I can read.")
            continue
        except Exception as exc:
            log.warning("downloading %s failed: %s", item.name, exc)
            out.refused.append(f"I could not download {item.name}; please send it again.")
            continue
        relative = f"{FOLDER}/{safe_name(message_id)}-{safe_name(item.name)}"
        try:
            await storage.write_text(relative, text)
        except StorageError as exc:
            log.warning("not saving %s: %s", item.name, exc)
            out.refused.append(f"I could not save {item.name} in my working directory.")
            continue
        out.saved.append(relative)
    return out


def describe(saved: Sequence[str]) -> str:
    """The line the model reads about the files."""
    names = ", ".join(saved)
    return f"[The user sent {'a file' if len(saved) == 1 else 'files'}, saved as {names}]"
