"""How long the agent loop waits before retrying a failed LLM request: what the provider's 429 or 503
asked for, else our exponential backoff.

The OpenAI SDK's own retry (`max_retries`, off in `agents.backends`) reads `retry-after-ms` and
`Retry-After` but not the `x-ratelimit-reset-*` durations OpenAI sends with every 429, and its
retries would be invisible to our accounting: the agent loop counts every failed request per kind
(`AgentUsage.errors`, the simulator's fault table), feeds connection failures to the circuit breaker
(`agents.breaker`) and bounds attempts with `Context.llm_retries`. So the client sends once and the
loop retries, waiting as long as the provider's headers say:

1. `retry-after-ms` (milliseconds), else `Retry-After` (seconds, or an HTTP date);
2. else `x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens` (Go-style durations: `1s`, `6m0s`,
   `20ms`): the reset of the limit the matching `x-ratelimit-remaining-*` shows exhausted (0), or the
   later of the two when no remaining count says which limit was hit;
3. else (no header, another status, a timeout, an unusable answer) `backoff * 2 ** (attempt - 1)`.

A provider's wait is capped at `MAX_RETRY_WAIT`: a limit resetting in six minutes is retried after
one, and fails into the fallback (counted) if still closed, rather than stalling the run.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Mapping

MAX_RETRY_WAIT = 60.0
"""The longest a provider's headers can make one retry wait, in seconds."""
HEADER_STATUSES = (429, 503)
"""HTTP statuses whose headers set the wait (rate limited; unavailable, e.g. overloaded)."""

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(text: str) -> float | None:
    """Seconds in a Go-style duration (`1s`, `6m0s`, `20ms`, `1h2m3.5s`; a bare number is seconds),
    or None when `text` is not one."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return None if math.isnan(seconds) else seconds
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def _retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds from `retry-after-ms` or `Retry-After` (seconds or an HTTP date), if either parses."""
    if (value := headers.get("retry-after-ms")) is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - now
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _limit_resets(headers: Mapping[str, str]) -> float | None:
    """Seconds until the hit limit resets, from the `x-ratelimit-reset-*` headers (module doc, 2)."""
    resets: dict[str, float] = {}
    for limit in ("requests", "tokens"):
        value = headers.get(f"x-ratelimit-reset-{limit}")
        seconds = parse_duration(value) if value is not None else None
        if seconds is not None:
            resets[limit] = seconds
    remaining = {limit: headers.get(f"x-ratelimit-remaining-{limit}", "").strip() for limit in resets}
    exhausted = [seconds for limit, seconds in resets.items() if remaining[limit] == "0"]
    chosen = exhausted or list(resets.values())
    return max(chosen) if chosen else None


def header_wait(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait the headers ask for, in seconds (not capped, at least 0), or None when none says.
    `now`: the Unix time an HTTP-date `Retry-After` counts from (default: the clock)."""
    lowered = {str(key).lower(): str(value) for key, value in headers.items()}
    wait = _retry_after(lowered, time.time() if now is None else now)
    if wait is None or math.isnan(wait):
        wait = _limit_resets(lowered)
    return None if wait is None else max(0.0, wait)


def retry_wait(
    error: BaseException | None, attempt: int, backoff: float, cap: float = MAX_RETRY_WAIT
) -> float:
    """Seconds to wait before retry `attempt` (1 = the first retry) after `error` (None: the answer
    arrived but was unusable): a 429's or 503's header wait, capped at `cap`, else the backoff."""
    response = getattr(error, "response", None)
    if getattr(error, "status_code", None) in HEADER_STATUSES and response is not None:
        wait = header_wait(getattr(response, "headers", None) or {})
        if wait is not None:
            return min(wait, cap)
    return backoff * 2 ** (attempt - 1)
