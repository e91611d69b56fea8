"""`SeamApp` hands requests straight to its middleware stack only while FastAPI's own
telemetry is off, and goes FastAPI's way (which wraps each request) once it is on."""

from __future__ import annotations

from typing import Any

import httpx

from seam.apps.web.app import SeamApp


class _Telemetry:
    """Stands in for FastAPI's native telemetry: on or off, and counts what it wraps."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.wrapped = 0

    def enabled(self) -> bool:
        return self.on

    async def __call__(self, *, app: Any, scope: Any, receive: Any, send: Any, **_: Any) -> None:
        self.wrapped += 1
        await app(scope, receive, send)


async def test_requests_go_fastapis_way_while_its_telemetry_is_on() -> None:
    app = SeamApp()

    @app.get("/x")
    async def x() -> dict[str, int]:
        return {"x": 1}

    telemetry = _Telemetry(on=False)
    app._native_telemetry = telemetry  # type: ignore[attr-defined]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for _ in range(3):
            assert (await client.get("/x")).json() == {"x": 1}
        assert telemetry.wrapped == 0
        telemetry.on = True
        app._telemetry_checked = -1e9  # as if a second had passed since the last look
        for _ in range(3):
            assert (await client.get("/x")).json() == {"x": 1}
        assert telemetry.wrapped == 3
