"""The dashboard's Keys section: create (shown once), list with scope, revoke.

It is the same `KeyStore` the CLI (`seam keys ...`) and the authenticator use, re-read
when its file changes, so a key revoked here is refused (401) on its very next request,
and one created by `seam keys create` is listed at once. The list never carries a key's
hash: only its first characters, so a person can tell keys apart.

A request cannot revoke the key it came with (409): that would lock the caller out in the
middle of what it was doing. Revoke it from the page (its cookie is no key), another
owner key, or `seam keys revoke NAME`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web.auth import Principal
from seam.apps.web.control.deps import Control
from seam.apps.web.errors import ApiError
from seam.apps.web.keys import ApiKey
from seam.wiring.web_keys import DEFAULT_TENANT


class NewKey(BaseModel):
    """`POST /api/keys`: the name is checked by the key store (1 to 100 characters), so a
    bad one is a 400 saying so, as `seam keys create` says it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=1000)
    tenant: str | None = Field(None, max_length=1000)
    scope: str = Field("full", max_length=100)


def key_body(key: ApiKey) -> dict[str, Any]:
    """What the page and the API show of a key: never its hash."""
    return {
        "name": key.name,
        "tenant": key.tenant,
        "scope": key.scope,
        "prefix": key.prefix,
        "created_at": key.created_at,
        "owner": key.tenant == DEFAULT_TENANT,
    }


def add_routes(api: APIRouter, control: Control) -> None:
    """`GET`/`POST /api/keys`, `DELETE /api/keys/{name}` (the owner's alone: access.py)."""

    @api.get("/keys", tags=["keys"])
    async def list_keys() -> dict[str, Any]:
        """Every API key: name, tenant, scope, first characters and when it was made."""
        return {"keys": [key_body(k) for k in control.need_keys().list()]}

    @api.post("/keys", tags=["keys"], status_code=201)
    async def create_key(body: NewKey) -> dict[str, Any]:
        """A new key, returned once (only its hash is kept): copy it now. 409 when a key
        of that name exists; 400 for a bad name, tenant or scope."""
        store = control.need_keys()
        if any(k.name == body.name for k in store.list()):
            raise ApiError(409, f"a key named {body.name!r} exists; revoke it first")
        try:
            secret = store.create(body.name, body.tenant or DEFAULT_TENANT, body.scope)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        made = next(k for k in store.list() if k.name == body.name)
        return {**key_body(made), "key": secret}

    @api.delete("/keys/{name}", tags=["keys"])
    async def revoke_key(name: str, request: Request) -> dict[str, Any]:
        """Revoke a key: its next request is refused (401). 404 when no key has that name;
        409 when it is the key this request came with."""
        who: Principal = request.state.principal
        if who.id == f"key:{name}":
            raise ApiError(
                409,
                "this request came with that key: revoke it from the page, another key or "
                "seam keys revoke",
            )
        if not control.need_keys().revoke(name):
            raise ApiError(404, f"no key named {name!r}")
        return {"revoked": name}


__all__ = ["NewKey", "add_routes", "key_body"]
