"""A deliverer that gets stuck right after its sender delivered, before the outbox can
record it: the process the crash test kills with SIGKILL.

    python outbox_deliverer_child.py DB ROOT FLAG LEASE

Delivers `file:` items (into ROOT) and webhooks from the SQLite store at DB; after the
first send it writes FLAG and blocks its event loop for good (so neither `mark_sent` nor
the send timeout can run).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from seam.contracts.outbox import OutboxItem
from seam.plugins.delivery.outbox_worker import OutboxDeliverer
from seam.plugins.delivery.senders import FileSender, Sender, WebhookSender
from seam.services.sessions.sqlite import SQLiteSessionStore


class StuckAfterSending:
    def __init__(self, inner: Sender, flag: Path) -> None:
        self.inner = inner
        self.prefix = inner.prefix
        self.flag = flag

    async def send(self, item: OutboxItem) -> str | None:
        await self.inner.send(item)
        self.flag.write_text(item.key)
        time.sleep(3600)  # stuck with the event loop: nothing else runs until the kill
        return None


async def main(db: str, root: str, flag: str, lease: float) -> None:
    store = SQLiteSessionStore(db)
    senders = [
        StuckAfterSending(FileSender(Path(root)), Path(flag)),
        StuckAfterSending(WebhookSender(allow=["127.0.0.1"]), Path(flag)),
    ]
    await OutboxDeliverer(store, senders, lease=lease, poll=0.05).run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])))
