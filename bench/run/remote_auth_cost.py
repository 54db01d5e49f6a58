"""What authentication costs per request: the same cheap run sent to an open and a secured server.

    python -m bench.run.remote_auth_cost --open URL --secured URL --key KEY [--jwt TOKEN] \\
        --dataset PATH --user 7 --requests 200

Each round sends one `popularity` ranking (`/runs/wait`, a graph that takes about a millisecond
once warm, so the HTTP round trip and the auth handlers dominate) to the open server, then the same
with the key (and the token) to the secured one, interleaved so both see the same machine load.
Printed: the median and 90th percentile per server and credential, and the in-process cost of the
auth code alone (`Credentials.caller` + `policy.check_run`) per request, which has no network noise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request
from typing import Any

from bench.run.remote_replicas import auth_headers
from graphs.auth.credentials import Credentials
from graphs.auth.limits import Limits
from graphs.auth.policy import check_run


def timed_run(url: str, body: dict[str, Any], key: str | None) -> float:
    """Seconds of one `/runs/wait` (an error answer fails the measurement)."""
    headers = {"Content-Type": "application/json", **auth_headers(key)}
    request = urllib.request.Request(f"{url}/runs/wait", json.dumps(body).encode(), headers, method="POST")
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as answer:
        output = json.loads(answer.read())
    seconds = time.perf_counter() - started
    if "__error__" in output:
        raise RuntimeError(f"{url}: {output['__error__']}")
    return seconds


def in_process_seconds(
    key: str, token: str | None, body: dict[str, Any], rounds: int = 2000
) -> dict[str, float]:
    """Microseconds per request of the auth code alone, per credential (keys from the environment)."""
    credentials, limits = Credentials.from_env(), Limits()
    found = {}
    for name, credential in (("key", key), ("jwt", token)):
        if not credential:
            continue
        started = time.perf_counter()
        for _ in range(rounds):
            caller = credentials.caller(f"Bearer {credential}", None)
            check_run(caller, "popularity", body, limits, None)
        found[name] = (time.perf_counter() - started) / rounds * 1e6
    return found


def main(argv: list[str] | None = None) -> None:
    """Measure and print (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--open", required=True, help="URL of a server without keys")
    parser.add_argument("--secured", required=True, help="URL of a server with RECGRAPH_API_KEYS")
    parser.add_argument("--key", required=True, help="a key of the secured server for --user")
    parser.add_argument("--jwt", default=None, help="a token of the secured server for --user")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--user", default="7")
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args(argv)
    body = {
        "assistant_id": "popularity",
        "input": {"user_id": args.user},
        "context": {"dataset": args.dataset},
    }
    targets = {"open": (args.open, None), "key": (args.secured, args.key)}
    if args.jwt:
        targets["jwt"] = (args.secured, args.jwt)
    for url, key in targets.values():  # warm: the dataset is loaded on the first run
        timed_run(url, body, key)
    seconds: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(args.requests):
        for name, (url, key) in targets.items():
            seconds[name].append(timed_run(url, body, key))
    for name, found in seconds.items():
        found.sort()
        median, p90 = statistics.median(found) * 1e3, found[int(0.9 * (len(found) - 1))] * 1e3
        print(f"{name:5s} {len(found)} runs: median {median:.2f} ms, p90 {p90:.2f} ms")
    for name, micro in in_process_seconds(args.key, args.jwt, {"input": body["input"]}).items():
        print(f"auth code alone ({name}): {micro:.1f} µs per request")


if __name__ == "__main__":
    main()
