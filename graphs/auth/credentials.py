"""Who is calling: a served request's credential checked against the server's keys or JWT settings.

Two modes, read from the environment when the server starts (`Credentials.from_env`):

- quick start, static API keys: `RECGRAPH_API_KEYS="KEY:user:ID,KEY:service"` — each key is a
  `user` (who may act only as user `ID`) or the `service` (the operator: bench, memory writes,
  training). A presented key is compared with every configured key in constant time
  (`hmac.compare_digest`), so the time taken says nothing about which key or prefix matched.
- production, JWTs: `RECGRAPH_JWT_SECRET` (HS256) or `RECGRAPH_JWT_PUBLIC_KEY` (RS256: the PEM
  text, or a path to a PEM file); `sub` is the user id, the `role` claim is `user` or `service`,
  `exp` is required and enforced (optional `RECGRAPH_JWT_AUDIENCE`, `RECGRAPH_JWT_ISSUER`).

Both may be configured at once. Nothing configured = the open development mode (every caller is the
service). Credentials are read from `Authorization: Bearer <key or token>` or `x-api-key: <key>`.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from world.errors import RecgraphError

Role = Literal["user", "service"]
ROLES: tuple[Role, ...] = ("user", "service")
MIN_KEY_CHARS = 16
"""Shortest API key accepted: a short key could be guessed by a caller who may retry freely."""
JWT_LEEWAY_SECONDS = 0
"""Clock skew allowed on `exp` (none: an expired token is refused at once)."""


class AuthConfigError(RecgraphError):
    """The server's authentication settings cannot work (one line; the server does not start)."""


class Unauthenticated(RecgraphError):
    """The request's credential is missing, unknown, malformed or expired (401)."""


@dataclass(frozen=True)
class Caller:
    """An authenticated caller."""

    role: Role
    """`user`: acts only for `user_id`, on resources it owns; `service`: the operator, everything."""
    user_id: str = ""
    """The user a `user` caller is (empty for the service)."""
    via: str = "key"
    """How it authenticated: `key`, `jwt` or `open` (no credentials configured)."""

    @property
    def identity(self) -> str:
        """The owner tag stored on the threads, runs, crons and store items this caller creates."""
        return f"user:{self.user_id}" if self.role == "user" else "service"


@dataclass(frozen=True)
class ApiKey:
    """One configured static key, kept as its SHA-256 digest (the key itself is never stored)."""

    digest: bytes
    """SHA-256 of the key: equal-length values for the constant-time comparison."""
    caller: Caller
    """Who presents it."""


def parse_api_keys(text: str) -> tuple[ApiKey, ...]:
    """`KEY:user:ID,KEY:service` -> the keys; `AuthConfigError` naming the bad entry (by position:
    the key itself is never echoed)."""
    keys: list[ApiKey] = []
    for position, entry in enumerate((e.strip() for e in text.split(",")), start=1):
        if not entry:
            continue
        parts = entry.split(":")
        where = f"RECGRAPH_API_KEYS entry {position}"
        if len(parts) == 3 and parts[1] == "user" and parts[2].strip():
            caller = Caller("user", parts[2].strip())
        elif len(parts) == 2 and parts[1] == "service":
            caller = Caller("service")
        else:
            raise AuthConfigError(f"{where} is not KEY:user:ID or KEY:service")
        if len(parts[0]) < MIN_KEY_CHARS:
            raise AuthConfigError(f"{where}: the key is shorter than {MIN_KEY_CHARS} characters")
        keys.append(ApiKey(hashlib.sha256(parts[0].encode()).digest(), caller))
    digests = [k.digest for k in keys]
    if len(set(digests)) != len(digests):
        raise AuthConfigError("RECGRAPH_API_KEYS lists the same key twice")
    return tuple(keys)


def key_caller(keys: tuple[ApiKey, ...], presented: str) -> Caller | None:
    """The caller whose key is `presented`, or None. Every key is compared (no early exit), each in
    constant time over equal-length digests."""
    digest = hashlib.sha256(presented.encode()).digest()
    found: Caller | None = None
    for key in keys:
        if hmac.compare_digest(key.digest, digest):
            found = key.caller
    return found


@dataclass(frozen=True)
class JwtSettings:
    """How JWTs are checked."""

    algorithm: Literal["HS256", "RS256"]
    """HS256 with a shared secret or RS256 with the issuer's public key."""
    key: str = field(repr=False)
    """The secret or the PEM public key (never shown)."""
    audience: str | None = None
    """Required `aud`, when set."""
    issuer: str | None = None
    """Required `iss`, when set."""


def jwt_settings(environ: dict[str, str]) -> JwtSettings | None:
    """The JWT settings of `environ`, None when none is set; refuses both keys at once."""
    secret, public = environ.get("RECGRAPH_JWT_SECRET", ""), environ.get("RECGRAPH_JWT_PUBLIC_KEY", "")
    if secret and public:
        raise AuthConfigError("set RECGRAPH_JWT_SECRET (HS256) or RECGRAPH_JWT_PUBLIC_KEY (RS256), not both")
    audience = environ.get("RECGRAPH_JWT_AUDIENCE") or None
    issuer = environ.get("RECGRAPH_JWT_ISSUER") or None
    if secret:
        if len(secret) < 32:
            raise AuthConfigError("RECGRAPH_JWT_SECRET is shorter than 32 characters (HS256 needs 256 bits)")
        return JwtSettings("HS256", secret, audience, issuer)
    if public:
        pem = public if "-----BEGIN" in public else read_pem(public)
        return JwtSettings("RS256", pem, audience, issuer)
    return None


def read_pem(path: str) -> str:
    """The PEM text of the file `RECGRAPH_JWT_PUBLIC_KEY` names (read once, at server start)."""
    try:
        return Path(path).read_text()
    except OSError as error:
        raise AuthConfigError(f"RECGRAPH_JWT_PUBLIC_KEY: cannot read {path}: {error.strerror}") from None


def jwt_caller(settings: JwtSettings, token: str) -> Caller:
    """The caller a valid token names; `Unauthenticated` (expired, bad signature, missing claims)."""
    import jwt

    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            settings.key,
            algorithms=[settings.algorithm],
            audience=settings.audience,
            issuer=settings.issuer,
            leeway=JWT_LEEWAY_SECONDS,
            options={"require": ["exp", "sub"]},
        )
    except jwt.ExpiredSignatureError:
        raise Unauthenticated("the token has expired") from None
    except jwt.InvalidTokenError as error:
        raise Unauthenticated(f"invalid token: {error}") from None
    role, subject = claims.get("role"), str(claims.get("sub") or "")
    if role not in ROLES:
        raise Unauthenticated("the token's role claim is not 'user' or 'service'")
    if role == "user" and not subject:
        raise Unauthenticated("the token's sub (the user id) is empty")
    return Caller(role, subject if role == "user" else "", via="jwt")


def looks_like_jwt(credential: str) -> bool:
    """Three base64url segments separated by dots (what a JWS compact token is)."""
    return credential.count(".") == 2 and all(credential.split("."))


@dataclass(frozen=True)
class Credentials:
    """The server's authentication settings (read once, when it starts)."""

    keys: tuple[ApiKey, ...] = ()
    """Static API keys."""
    jwt: JwtSettings | None = None
    """JWT checking, when configured."""

    @property
    def open(self) -> bool:
        """No credential configured: the development mode, every caller is the service."""
        return not self.keys and self.jwt is None

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Credentials:
        """The settings of `environ` (default: the process environment)."""
        env = dict(os.environ if environ is None else environ)
        return cls(parse_api_keys(env.get("RECGRAPH_API_KEYS", "")), jwt_settings(env))

    def caller(self, authorization: str | None, api_key: str | None) -> Caller:
        """Who presents these headers; `Unauthenticated` when nobody valid does."""
        if self.open:
            return Caller("service", via="open")
        credential = bearer(authorization) or (api_key or "").strip()
        if not credential:
            raise Unauthenticated("no credential: send Authorization: Bearer <key or token> or x-api-key")
        if self.jwt is not None and looks_like_jwt(credential):
            return jwt_caller(self.jwt, credential)
        found = key_caller(self.keys, credential)
        if found is None:
            raise Unauthenticated("unknown credential")
        return found

    def describe(self) -> str:
        """One line for the server's log: the mode, never a key."""
        if self.open:
            return (
                "recgraph auth: OPEN development mode, no RECGRAPH_API_KEYS or JWT key configured: "
                "anyone who reaches this port may call every graph"
            )
        modes = []
        if self.keys:
            users = sum(k.caller.role == "user" for k in self.keys)
            modes.append(f"{len(self.keys)} API key(s) ({users} user, {len(self.keys) - users} service)")
        if self.jwt is not None:
            modes.append(f"JWT {self.jwt.algorithm}")
        return "recgraph auth: callers authenticated by " + " and ".join(modes)


def bearer(authorization: str | None) -> str:
    """The credential of an `Authorization: Bearer X` header ('' otherwise)."""
    scheme, _, value = (authorization or "").strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""
