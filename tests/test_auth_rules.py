"""graphs/auth/ without a server: credentials (keys, HS256 and RS256 tokens), input bounds and what
each role may run. The served behaviour is in tests/auth/."""

from __future__ import annotations

import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from graphs.auth.credentials import AuthConfigError, Caller, Credentials, Unauthenticated, parse_api_keys
from graphs.auth.limits import InputTooLarge, Limits
from graphs.auth.policy import Forbidden, check_run, dataset_allowed, store_namespace_allowed, tag_owner

SEVEN, SERVICE = "seven-0123456789abcdef", "service-0123456789abcd"
USER7, SERVICE_CALLER = Caller("user", "7"), Caller("service")


def credentials(**extra: str) -> Credentials:
    return Credentials.from_env({"RECGRAPH_API_KEYS": f"{SEVEN}:user:7,{SERVICE}:service", **extra})


def test_api_keys_name_their_callers_and_nothing_else() -> None:
    found = credentials()
    assert found.caller(f"Bearer {SEVEN}", None) == Caller("user", "7")
    assert found.caller(None, SERVICE) == Caller("service")
    for wrong in (SEVEN[:-1], SEVEN + "x", SEVEN.upper(), ""):
        with pytest.raises(Unauthenticated):
            found.caller(f"Bearer {wrong}", None)
    with pytest.raises(Unauthenticated, match="no credential"):
        found.caller(None, None)
    assert SEVEN not in found.describe() and SEVEN not in repr(found)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("short:user:7", "entry 1: the key is shorter than 16"),
        (f"{SEVEN}:admin", "entry 1 is not KEY:user:ID or KEY:service"),
        (f"{SEVEN}:user:", "entry 1 is not KEY:user:ID"),
        (f"{SEVEN}:service,{SEVEN}:user:7", "the same key twice"),
    ],
)
def test_bad_key_settings_stop_the_server_without_echoing_a_key(text: str, message: str) -> None:
    with pytest.raises(AuthConfigError, match=message) as caught:
        parse_api_keys(text)
    assert SEVEN not in str(caught.value)


def test_no_settings_is_the_open_mode() -> None:
    open_mode = Credentials.from_env({})
    assert open_mode.open and open_mode.caller(None, None) == Caller("service", via="open")
    assert "OPEN development mode" in open_mode.describe()


def test_hs256_tokens_are_checked_for_signature_role_and_expiry() -> None:
    secret = "s" * 32
    found = Credentials.from_env({"RECGRAPH_JWT_SECRET": secret})

    def token(claims: dict, key: str = secret) -> str:
        return jwt.encode({"exp": int(time.time()) + 60, **claims}, key, algorithm="HS256")

    assert found.caller(f"Bearer {token({'sub': '7', 'role': 'user'})}", None) == Caller("user", "7", "jwt")
    assert found.caller(f"Bearer {token({'sub': 'ops', 'role': 'service'})}", None).role == "service"
    refused = [
        (token({"sub": "7", "role": "user", "exp": int(time.time()) - 1}), "expired"),
        (token({"sub": "7", "role": "user"}, "t" * 32), "invalid token"),
        (token({"sub": "7", "role": "admin"}), "role claim"),
        (jwt.encode({"sub": "7", "role": "user"}, secret, algorithm="HS256"), "exp"),
        (
            jwt.encode({"sub": "7", "role": "user", "exp": time.time() + 60}, "", algorithm="none"),
            "unknown credential",
        ),
    ]
    for bad, message in refused:
        with pytest.raises(Unauthenticated, match=message):
            found.caller(f"Bearer {bad}", None)
    with pytest.raises(AuthConfigError, match="shorter than 32"):
        Credentials.from_env({"RECGRAPH_JWT_SECRET": "short"})


def test_rs256_tokens_are_checked_with_the_public_key(tmp_path) -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    (tmp_path / "public.pem").write_bytes(pem)
    found = Credentials.from_env({"RECGRAPH_JWT_PUBLIC_KEY": str(tmp_path / "public.pem")})
    good = jwt.encode({"sub": "9", "role": "user", "exp": time.time() + 60}, private, algorithm="RS256")
    assert found.caller(f"Bearer {good}", None) == Caller("user", "9", "jwt")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode({"sub": "9", "role": "service", "exp": time.time() + 60}, other, algorithm="RS256")
    with pytest.raises(Unauthenticated):
        found.caller(f"Bearer {forged}", None)
    # an HS256 token signed with the public key as a secret (algorithm confusion) is refused
    confused = jwt.encode(
        {"sub": "9", "role": "service", "exp": time.time() + 60}, "k" * 32, algorithm="HS256"
    )
    with pytest.raises(Unauthenticated):
        found.caller(f"Bearer {confused}", None)


def test_limits_name_the_field_and_the_knob() -> None:
    limits = Limits(max_candidates=3, max_text_chars=10, max_id_chars=4, max_history=2, max_memory_chars=20)
    limits.check({"user_id": "7", "candidates": ["1", "2", "3"], "instruction": "x" * 10})
    cases = [
        (
            {"candidates": ["1", "2", "3", "4"]},
            "input.candidates: 4 items, more than RECGRAPH_MAX_CANDIDATES=3",
        ),
        ({"instruction": "x" * 11}, "input.instruction: 11 characters, more than RECGRAPH_MAX_TEXT_CHARS=10"),
        ({"user_id": "12345"}, "input.user_id: 5 characters, more than RECGRAPH_MAX_ID_CHARS=4"),
        ({"candidates": ["12345"]}, "input.candidates[0]: 5 characters"),
        ({"history": [1, 2, 3]}, "input.history: 3 items, more than RECGRAPH_MAX_HISTORY=2"),
        ({"jobs": [{"updates": [{"text": "y" * 21}]}]}, "input.jobs[0].updates[0].text: 21 characters"),
    ]
    for payload, message in cases:
        with pytest.raises(InputTooLarge) as caught:
            limits.check(payload)
        assert str(caught.value) == message or str(caught.value).startswith(message)
    assert Limits.from_env({"RECGRAPH_MAX_CANDIDATES": "7"}).max_candidates == 7
    with pytest.raises(Exception, match="RECGRAPH_MAX_TEXT_CHARS='lots' is not a positive integer"):
        Limits.from_env({"RECGRAPH_MAX_TEXT_CHARS": "lots"})


def run(payload: dict, context: dict | None = None) -> dict:
    return {"input": payload, "context": context or {}}


def test_what_a_user_may_run() -> None:
    limits = Limits()
    check_run(
        USER7, "memrec", run({"user_id": 7, "scenario": "classic"}, {"dataset": "ml-100k"}), limits, None
    )
    refused = [
        ("memrec", run({"user_id": "8"}), Forbidden, "user 7 may rank only for itself"),
        ("memrec_write", run({"user_id": "7", "item_id": "1"}), Forbidden, "needs the service role"),
        ("amem4rec_commit", run({"plans": []}), Forbidden, "needs the service role"),
        (None, run({"user_id": "7"}), Forbidden, "only the recommendation graphs' own assistants"),
        (
            "memrec",
            run({"user_id": "7", "history": []}),
            InputTooLarge,
            "input.history: not a RecInput field",
        ),
        ("memrec", run({"candidates": ["1"]}), InputTooLarge, "input.user_id: required"),
        ("memrec", run({"user_id": "7"}, {"memrec_memory": "/x"}), Forbidden, "context.memrec_memory"),
        ("memrec", run({"user_id": "7"}, {"base_url": "http://x"}), Forbidden, "context.base_url"),
        ("memrec", run({"user_id": "7"}, {"dataset": "../data"}), Forbidden, "context.dataset"),
        ("memrec", run({"user_id": "7"}, {"top_k": 10**9}), InputTooLarge, "context.top_k"),
        ("memrec", {**run({"user_id": "7"}), "command": {"resume": 1}}, Forbidden, "command"),
    ]
    for graph, kwargs, error, message in refused:
        with pytest.raises(error, match=message):
            check_run(USER7, graph, kwargs, limits, None)
    # the service may run anything within the bounds, and the bounds apply to it too
    check_run(
        SERVICE_CALLER, "memrec_write", run({"user_id": "8", "item_id": "1"}, {"base_url": "x"}), limits, None
    )
    with pytest.raises(InputTooLarge, match=r"input\.history"):
        check_run(SERVICE_CALLER, "memrec", run({"user_id": "8", "history": [1] * 501}), limits, None)


def test_datasets_store_namespaces_and_owner_tags() -> None:
    assert dataset_allowed("ml-100k", None) and not dataset_allowed("/etc", None)
    assert not dataset_allowed("ml-100k", frozenset({"/data/cds"})) and dataset_allowed(
        "/data/cds", frozenset({"/data/cds"})
    )
    assert store_namespace_allowed(USER7, ("user:7", "notes")) and not store_namespace_allowed(
        USER7, ("user:8",)
    )
    assert not store_namespace_allowed(USER7, None) and store_namespace_allowed(SERVICE_CALLER, None)
    planted = {"metadata": {"owner": "user:8"}}
    tag_owner(USER7, planted)
    assert planted["metadata"]["owner"] == "user:7"
    users_thread = {"metadata": {"owner": "user:7"}}
    tag_owner(SERVICE_CALLER, users_thread)
    assert users_thread["metadata"]["owner"] == "user:7"  # the service does not take a user's thread
