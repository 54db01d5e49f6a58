"""`recgraph bench --set NAME=VALUE`: any field of the selected methods' context classes, from the
command line (the papers' sensitivity sweeps: MemRec's k and N_f, AMEM4Rec's w, |L| and K, ...).

Rules (each refusal is one line naming the knob and the method, exit 2):
- NAME must be a field of at least one selected method's context class (`MethodSpec.context`); it
  applies to every selected method whose class has it and the others run as they would without it
  (the run's header says which methods it reached).
- VALUE is parsed by the field's type: int, float (finite), bool (true/false, 1/0, yes/no, on/off),
  str, or one of a `Literal`'s choices; a number must lie in the field's range: at least its
  metadata's `minimum` (0 when the field names none: no knob takes a negative count, weight or
  rate) and at most its `maximum` when it names one; a role's model (rec_model, mem_model,
  planner_model) must be a backend --llm accepts, and is preflighted like --llm before the run.
- A knob with its own bench option (--dataset, --seed, --llm, ...) is refused: use the option.
- A knob a selected ablation fixes (`MethodSpec.overrides`, e.g. memrec_no_read's
  memrec_use_read=False) may only be set to that ablation's value: anything else would either be
  overridden silently or turn the ablation into another method.
- A knob the method's prepare step sets itself (a memory or pool path made for the run) is refused
  after that step, when the value it ranks with differs from the one given (`check_prepared`).

The parsed values are part of the run's protocol (`Protocol.knobs`, written as `set`), so resuming
an --out folder with another --set is refused like any other protocol change, and checkpoint
threads are keyed by them; metrics.json records what each method ran with under `set`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import cache
from typing import Any, Literal, get_args, get_origin, get_type_hints

from state.context import Context
from world.errors import ProtocolError, RecgraphError

OWN_OPTIONS: Mapping[str, str] = {
    "dataset": "--dataset",
    "seed": "--seed",
    "llm": "--llm",
    "base_url": "--base-url",
    "llm_timeout": "--llm-timeout",
    "llm_retries": "--llm-retries",
    "max_connection_failures": "--max-connection-failures",
    "requests_per_second": "--rps",
}
"""Common knobs `recgraph bench` sets from its own options (and records in the protocol); the run's
context is built from those options (`recgraph.llm_session.context_from_args`)."""


def option_dest(option: str) -> str:
    """The argparse attribute an option is parsed into (`--base-url` -> `base_url`)."""
    return option.removeprefix("--").replace("-", "_")


ROLE_MODELS = ("rec_model", "mem_model", "planner_model")
"""Common knobs naming a backend (checked like --llm, and preflighted before the run)."""

TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")


class KnobError(ProtocolError):
    """A --set the selected methods cannot take."""


@cache
def knob_types(schema: type[Context]) -> dict[str, Any]:
    """A context class's settable fields and their (resolved) types."""
    hints = get_type_hints(schema)
    return {f.name: hints[f.name] for f in fields(schema) if f.init}


def parse_value(schema: type[Context], name: str, text: str, method: str) -> Any:
    """`text` as a value of `schema`'s field `name`, or `KnobError` naming the knob and `method`."""
    kind = knob_types(schema)[name]
    where = f"--set {name}={text}: {method}'s {name}"
    if get_origin(kind) is Literal:
        choices = get_args(kind)
        found = [c for c in choices if str(c) == text]
        if not found:
            raise KnobError(f"{where} is one of {', '.join(map(str, choices))}")
        return found[0]
    if kind is bool:
        if text.lower() in TRUE_WORDS or text.lower() in FALSE_WORDS:
            return text.lower() in TRUE_WORDS
        raise KnobError(f"{where} is a bool (true or false)")
    if kind is int:
        try:
            number = int(text)
        except ValueError:
            raise KnobError(f"{where} is an int") from None
        return in_range(schema, name, number, where)
    if kind is float:
        try:
            value = float(text)
        except ValueError:
            raise KnobError(f"{where} is a number") from None
        if not math.isfinite(value):
            raise KnobError(f"{where} is a finite number")
        return in_range(schema, name, value, where)
    if kind is str:
        if name in ROLE_MODELS and text:
            from agents.backends import check_backend

            try:
                check_backend(text)
            except RecgraphError:
                raise KnobError(f"{where} is a backend: heuristic, local, sim or openai:<model>") from None
        return text
    raise KnobError(f"{where} has type {kind}, which --set cannot parse")


def in_range(schema: type[Context], name: str, value: float, where: str) -> Any:
    """`value` when it lies in field `name`'s range (metadata `minimum`, default 0, and `maximum`),
    else `KnobError`."""
    metadata = next(f.metadata for f in fields(schema) if f.name == name)
    low, high = metadata.get("minimum", 0), metadata.get("maximum")
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise KnobError(f"{where} is {bound}")
    return value


def split_assignment(text: str) -> tuple[str, str]:
    """NAME and VALUE of one `--set NAME=VALUE`."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise KnobError(f"--set {text!r} is not NAME=VALUE")
    return name.strip(), value.strip()


@dataclass(frozen=True)
class KnobSettings:
    """The --set values of a run: as given and per selected method."""

    given: Mapping[str, Any]
    """Knob -> parsed value, in the order given (the protocol's `set`)."""
    per_method: Mapping[str, Mapping[str, Any]]
    """Method -> the knobs that apply to it (a subset of `given`)."""

    def for_method(self, method: str) -> dict[str, Any]:
        """The knobs that apply to `method` (empty: none)."""
        return dict(self.per_method.get(method, {}))

    def apply(self, method: str, context: Context) -> Context:
        """`context` (the method's context class) with its knobs set."""
        values = self.for_method(method)
        return replace(context, **values) if values else context

    def base(self, method: str, context: Context) -> Context:
        """What `method`'s prepare step starts from: the run's `context`, or, when knobs are set for
        it, the method's context class with them applied."""
        from graphs.registry import method_context

        return self.apply(method, method_context(method, context)) if self.for_method(method) else context

    def preflight(self, context: Context) -> None:
        """Fail before any work when a role model given with --set cannot work (no key, no
        simulator running, no local model): what `llm_session` checks for --llm."""
        roles = {name: value for name, value in self.given.items() if name in ROLE_MODELS}
        if roles:
            from agents.backends import preflight

            preflight(replace(context, **roles))

    def describe(self) -> str:
        """One header line: each knob and the methods it reached (and those it did not)."""
        parts = []
        for name, value in self.given.items():
            reached = [m for m, knobs in self.per_method.items() if name in knobs]
            parts.append(f"{name}={value} ({', '.join(reached)})")
        skipped = [m for m, knobs in self.per_method.items() if not knobs]
        tail = f"; no such knob in {', '.join(skipped)}" if skipped else ""
        return f"--set {'; '.join(parts)}{tail}"


NO_SETTINGS = KnobSettings({}, {})
"""A run without --set."""


def settings_of(given: Sequence[tuple[str, Any]], methods: Sequence[str]) -> KnobSettings:
    """The settings of a protocol's parsed knobs (`Protocol.knobs`, checked when parsed) for
    `methods`: each knob reaches the methods whose context class has it."""
    from graphs.registry import METHODS

    per_method = {m: {n: v for n, v in given if n in knob_types(METHODS[m].context)} for m in methods}
    return KnobSettings(dict(given), per_method)


def knob_settings(assignments: Sequence[str], methods: Sequence[str]) -> KnobSettings:
    """Parse and check every `--set NAME=VALUE` against the context classes of `methods` (see the
    module docstring for the rules)."""
    from graphs.registry import METHODS

    if not assignments:
        return KnobSettings({}, {method: {} for method in methods})
    given: dict[str, Any] = {}
    per_method: dict[str, dict[str, Any]] = {method: {} for method in methods}
    for assignment in assignments:
        name, text = split_assignment(assignment)
        if name in given:
            raise KnobError(f"--set {name} is given twice")
        if name in OWN_OPTIONS:
            raise KnobError(f"--set {name}: use bench's {OWN_OPTIONS[name]} option")
        having = [m for m in methods if name in knob_types(METHODS[m].context)]
        if not having:
            raise KnobError(unknown_knob(name, methods))
        for method in having:
            spec = METHODS[method]
            value = parse_value(spec.context, name, text, method)
            if name in spec.overrides and spec.overrides[name] != value:
                raise KnobError(
                    f"--set {name}={text}: {method} fixes {name}={spec.overrides[name]} (what makes it "
                    f"that ablation); leave {method} out or set the value it fixes"
                )
            per_method[method][name] = value
        given[name] = per_method[having[0]][name]
    return KnobSettings(given, per_method)


def unknown_knob(name: str, methods: Sequence[str]) -> str:
    """The refusal of a knob no selected method has, with the closest knob names."""
    from graphs.registry import METHODS

    classes = dict.fromkeys(METHODS[m].context for m in methods)
    known = sorted({n for schema in classes for n in knob_types(schema)})
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    shown = ", ".join(methods) if len(methods) <= 4 else f"{', '.join(methods[:4])}, ..."
    return f"--set {name}: no selected method has a knob {name!r} ({shown}){hint}"


def check_prepared(method: str, settings: KnobSettings, context: Context) -> None:
    """Refuse a run whose prepare step replaced a knob given with --set (e.g. a memory path the
    bench makes for the run): the method would rank with another value than the one given."""
    for name, value in settings.for_method(method).items():
        used = getattr(context, name)
        if used != value:
            raise KnobError(
                f"--set {name}={value}: {method}'s prepare step sets {name} itself (to {used!r}) for "
                "this run; leave it unset"
            )
