"""A loopback OpenAI server shared by the tests of a module, reset before each test.

For modules whose tests share one long-lived `seam` process (whose OPENAI_BASE_URL is fixed
when it starts): each test still gets an empty script, an empty record of requests, and
stalls that hold until it releases them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAIServer


class SharedModel(OpenAIServer):
    """`reset` gives the next test a fresh script and record; a release lasts until then."""

    def reset(self) -> None:
        self.release()  # a reply the last test left stalled (a cancelled turn) finishes
        with self._lock:
            self._queues[self.main_path].clear()
            self.requests.clear()
        self._released.clear()


@pytest.fixture(scope="module", name="shared_model")
def shared_model_fixture() -> Iterator[SharedModel]:
    """The module's server (one per pytest worker), as `shared_model`; imported under
    this name so a parameter named `shared_model` does not shadow the import."""
    with SharedModel() as server:
        yield server
