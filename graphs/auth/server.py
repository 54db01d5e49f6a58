"""The `langgraph_sdk.Auth` a LangGraph server loads (langgraph.json: `"auth": {"path":
"./graphs/auth/server.py:auth"}`): who is calling (graphs/auth/credentials.py), what each role may
do (graphs/auth/policy.py) and how large a request may be (graphs/auth/limits.py).

Read once when the server starts: the keys, the JWT settings and the limits. Settings that cannot
work, or `RECGRAPH_REQUIRE_AUTH=1` with no credential configured, stop the server with one line
(`recgraph: error: ...`, exit 2); otherwise it logs one line saying which mode it runs in. Studio's
own bypass (`x-auth-scheme: langsmith`, which `langgraph dev` accepts from anyone) is switched off
in langgraph.json (`disable_studio_auth`): every request goes through `authenticate`.

Status codes: 401 no or a bad credential; 403 a caller acting outside its role (another user's id,
a service graph, another user's thread or store namespace, a deployment setting); 422 an input past
a limit or not a RecInput, naming the field. The bounds apply in the open mode too.
"""

from __future__ import annotations

import os
import sys
from typing import Any
from uuid import UUID, uuid5

from langgraph_sdk import Auth

from graphs.auth.credentials import Caller, Credentials, Unauthenticated
from graphs.auth.limits import InputTooLarge, Limits
from graphs.auth.policy import (
    Forbidden,
    check_run,
    owner_filter,
    store_namespace_allowed,
    tag_owner,
    user_datasets,
)
from graphs.registry import METHODS, SERVICE_GRAPHS
from world.errors import RecgraphError

NAMESPACE_GRAPH = UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
"""LangGraph's namespace of the default assistants' ids (`uuid5(NAMESPACE_GRAPH, graph_id)`)."""
ROLE_PERMISSION = "recgraph:"
"""Prefix of the permission carrying a caller's role (`recgraph:user`, `recgraph:service`)."""


def start() -> tuple[Credentials, Limits, frozenset[str] | None]:
    """The server's settings; one line and exit 2 when they cannot work (no traceback)."""
    try:
        credentials, limits = Credentials.from_env(), Limits.from_env()
        if credentials.open and os.environ.get("RECGRAPH_REQUIRE_AUTH", "").strip() not in ("", "0"):
            raise RecgraphError(
                "RECGRAPH_REQUIRE_AUTH is set but no RECGRAPH_API_KEYS, RECGRAPH_JWT_SECRET or "
                "RECGRAPH_JWT_PUBLIC_KEY is: refusing to start an open server"
            )
    except RecgraphError as error:
        sys.stderr.write(f"recgraph: error: {error}\n")
        sys.stderr.flush()
        os._exit(2)  # the server's startup would print a traceback for any exception
    sys.stderr.write(credentials.describe() + "\n")
    return credentials, limits, user_datasets()


CREDENTIALS, LIMITS, USER_DATASETS = start()
DEFAULT_ASSISTANTS = {str(uuid5(NAMESPACE_GRAPH, g)): g for g in (*METHODS, *SERVICE_GRAPHS)}
"""Default assistant id -> graph id (the only assistants a user caller may run)."""

auth = Auth()


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> dict[str, Any]:
    """The caller of a request (401 when its credential is missing or not valid)."""
    try:
        caller = CREDENTIALS.caller(header(headers, b"authorization"), header(headers, b"x-api-key"))
    except Unauthenticated as error:
        raise Auth.exceptions.HTTPException(status_code=401, detail=str(error)) from None
    return {
        "identity": caller.identity,
        "display_name": caller.identity,
        "permissions": [f"{ROLE_PERMISSION}{caller.role}"],
        "is_authenticated": True,
    }


def header(headers: dict[bytes, bytes], name: bytes) -> str | None:
    """One header's text (None when absent)."""
    value = headers.get(name)
    return value.decode("latin-1") if value is not None else None


def caller_of(ctx: Auth.types.AuthContext) -> Caller:
    """The `Caller` `authenticate` made for this request; 403 for any other user object (e.g. a
    Studio user, were `disable_studio_auth` turned off)."""
    permissions = set(ctx.permissions or ())
    identity = str(getattr(ctx.user, "identity", ""))
    if f"{ROLE_PERMISSION}service" in permissions and identity == "service":
        return Caller("service")
    if f"{ROLE_PERMISSION}user" in permissions and identity.startswith("user:"):
        return Caller("user", identity.removeprefix("user:"))
    raise Auth.exceptions.HTTPException(status_code=403, detail="not a recgraph caller")


def refuse(error: RecgraphError) -> Auth.exceptions.HTTPException:
    """The HTTP error of a refusal: 403 `Forbidden`, 422 `InputTooLarge`."""
    status = 422 if isinstance(error, InputTooLarge) else 403
    return Auth.exceptions.HTTPException(status_code=status, detail=str(error))


def graph_of(assistant_id: object) -> str | None:
    """The graph a default assistant (by id or graph name) runs; None for any other assistant."""
    text = str(assistant_id)
    return text if text in DEFAULT_ASSISTANTS.values() else DEFAULT_ASSISTANTS.get(text)


def check(caller: Caller, assistant_id: object, kwargs: dict[str, Any]) -> None:
    """`policy.check_run` for a run (or a cron's run), as an HTTP refusal."""
    try:
        check_run(caller, graph_of(assistant_id), kwargs, LIMITS, USER_DATASETS)
    except (Forbidden, InputTooLarge) as error:
        raise refuse(error) from None


@auth.on
async def owned(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """Every resource and action not handled below: the caller's owner tag on what it creates, and
    a user caller sees only what it owns."""
    caller = caller_of(ctx)
    if ctx.action in ("create", "update"):  # elsewhere `metadata` is a search filter, not the resource's
        tag_owner(caller, value)
    return owner_filter(caller)


@auth.on.threads.create_run
async def run_allowed(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> dict[str, str] | None:
    """A run: the caller's role and the input bounds, checked before the run (or its thread) exists."""
    caller = caller_of(ctx)
    check(caller, value.get("assistant_id"), dict(value.get("kwargs") or {}))
    tag_owner(caller, value)
    return owner_filter(caller)


@auth.on.crons.create
async def cron_allowed(ctx: Auth.types.AuthContext, value: Auth.types.CronsCreate) -> dict[str, str] | None:
    """A cron: the runs it will start are checked as runs now."""
    caller = caller_of(ctx)
    payload = dict(value.get("payload") or {})
    check(caller, payload.get("assistant_id"), payload)
    tag_owner(caller, value)
    return owner_filter(caller)


@auth.on.assistants
async def assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Assistants are the deployment's: anyone may read and search them, only the service changes them."""
    caller = caller_of(ctx)
    if caller.role != "service" and ctx.action not in ("read", "search"):
        detail = "assistants are changed by the service only"
        raise Auth.exceptions.HTTPException(status_code=403, detail=detail)


@auth.on.store
async def store(ctx: Auth.types.AuthContext, value: Any) -> None:
    """A user caller's store items live under its own namespace `(identity, ...)`."""
    caller = caller_of(ctx)
    if not store_namespace_allowed(caller, value.get("namespace")):
        detail = f"a user caller's store namespace starts with {caller.identity!r}"
        raise Auth.exceptions.HTTPException(status_code=403, detail=detail)
