"""The dashboard's Channels section: each gateway platform's state, pending pairing requests
(approve, deny), paired users (revoke). Owner-only (`access.OWNER_PREFIXES`).

The same pairing file `seam pairing list|approve|revoke` reads and changes (under its
lock), so the CLI and a running gateway see a change at once, and the reverse.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request

from seam.apps.gateway.pairing import PairingError
from seam.apps.web.auth import Principal
from seam.apps.web.control.channels_state import channels_state, pairing_store
from seam.apps.web.control.deps import Control
from seam.apps.web.errors import ApiError
from seam.contracts.names import clean_name
from seam.wiring.settings import ConfigError

Code = Annotated[str, Path(min_length=1, max_length=32, description="The pairing code.")]
Name = Annotated[str, Path(min_length=1, max_length=200)]


def add_routes(api: APIRouter, control: Control) -> None:
    """`GET /api/channels`, approve and deny a code, revoke a paired user."""

    @api.get("/channels", tags=["control"])
    async def channels() -> dict[str, Any]:
        """Each gateway platform (configured or not, its adapter's state and last error,
        its dead and stuck updates), the pairing codes waiting, the paired users."""
        settings = control.need_settings()
        try:
            return await channels_state(settings, control.backend.runtime.store)
        except ConfigError as exc:
            raise ApiError(409, str(exc)) from None

    @api.post("/channels/pairing/{code}/approve", tags=["control"])
    async def approve(request: Request, code: Code) -> dict[str, Any]:
        """Let the person who was given `code` talk to the agent (as `seam pairing
        approve`); 400 for a code that is not waiting (wrong codes count to a lockout)."""
        who: Principal = request.state.principal
        store = pairing_store(control.need_settings())
        try:
            user = store.approve(code, by=f"web:{who.tenant}")
        except PairingError as exc:
            raise ApiError(400, clean_name(str(exc))) from None
        except ConfigError as exc:
            raise ApiError(409, str(exc)) from None
        return {"approved": user.ref, "user_name": user.user_name}

    @api.post("/channels/pairing/{code}/deny", tags=["control"])
    async def deny(code: Code) -> dict[str, Any]:
        """Drop the waiting `code` without pairing anyone (they may ask again); 404 when
        no such code waits."""
        try:
            gone = pairing_store(control.need_settings()).deny(code)
        except ConfigError as exc:
            raise ApiError(409, str(exc)) from None
        if gone is None:
            raise ApiError(404, f"no pairing code {clean_name(code)!r} is waiting")
        return {"denied": gone.code, "user": f"{gone.platform}:{gone.user_id}"}

    @api.delete("/channels/{platform}/users/{user}", tags=["control"])
    async def revoke(platform: Name, user: Name) -> dict[str, Any]:
        """Stop `platform`:`user` from talking to the agent (as `seam pairing revoke`);
        404 when that user is not paired."""
        try:
            gone = pairing_store(control.need_settings()).revoke(f"{platform}:{user}")
        except ConfigError as exc:
            raise ApiError(409, str(exc)) from None
        if not gone:
            raise ApiError(404, f"{clean_name(platform)}:{clean_name(user)} is not paired")
        return {"revoked": [item.ref for item in gone]}


__all__ = ["add_routes"]
