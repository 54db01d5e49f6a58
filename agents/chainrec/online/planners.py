"""The planners `Context.chainrec_planner` selects, all behind the interface of planning.py.

- `rule` (RulePlanner): a state-dependent plan, see its docstring.
- `fixed` (FixedPlanner): one configured chain, infeasible tools skipped, then CandidateRank.
- `llm` (LlmPlanner): zero-shot: the tool catalog, what the memory holds, the mask; the action is an
  enum of exactly the feasible actions; infeasible or unknown answers are repaired to the rule
  planner's choice (counted); a failed model falls back to the rule planner.

`PLANNERS` maps the name to a factory; the learned planner of the offline stage is one more entry.
Every planner plans over the catalog the graph gives it (`PlanView.catalog`: the run's library file,
plus an extension's cards); the graph also names the rule planner that decides for `rule` and backs
up the others. `needed_tools` names the tools a planner cannot run without; a library lacking one is
refused in one line (`MissingTool`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from agents.base import AgentTask, InvalidAnswer
from agents.chainrec.online.catalog import (
    AUTHOR,
    CANDIDATE_RANK,
    GEO,
    ITEM_PROFILE,
    ITEM_SEMANTIC,
    LONG_TERM,
    NEGATIVE,
    POSITIVE,
    SHORT_TERM,
    TOOLS,
    Catalog,
    ToolSpec,
    action_names,
    is_user_tool,
    parse_chain,
)
from agents.chainrec.online.library_file import TERMINAL, ToolLibrary
from agents.chainrec.online.planning import AskingPlanner, Planner, PlanView, choose, repair_choice
from agents.validation import constrained_schema
from prompts import chainrec as prompts
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import REASON_CHARS, PlannerAnswer, PlannerChoice
from world.errors import RecgraphError

if TYPE_CHECKING:
    from agents.chainrec.online.learned_planner import LearnedPlanner


class RulePlanner:
    """A documented state-dependent heuristic.

    1. Regime: the scenario tag (classic, cold_user, cold_item, evolving_short, evolving_long), turned
       into cold_user when a tool reported at most 5 visible history items.
    2. The regime's plan: classic LongTerm → ShortTerm → ItemProfile → ItemSemantic → Positive;
       cold_user ItemProfile → ItemSemantic (item-side first: the history says little);
       cold_item ItemSemantic → LongTerm → ShortTerm (popularity misleads for cold targets: no
       ItemProfile); evolving_short ShortTerm → ItemSemantic → ItemProfile; evolving_long ShortTerm →
       LongTerm → ItemSemantic → ItemProfile.
    3. Memory adjusts it: GeoContext goes first and AuthorPreference second whenever feasible; a short
       window (ShortTerm saw at most 2 items) adds LongTerm; 3 or more low ratings add
       NegativePreference after the user tools; no high rating drops PositivePreference.
    4. Scores: the plan's i-th tool 1 − 0.05·i, CandidateRank 0.5 (so it wins once the plan is done),
       any other tool 0.1; the best feasible action is chosen.
    """

    name = "rule"
    PLANS: ClassVar[dict[str, tuple[str, ...]]] = {
        "classic": (LONG_TERM, SHORT_TERM, ITEM_PROFILE, ITEM_SEMANTIC, POSITIVE),
        "cold_user": (ITEM_PROFILE, ITEM_SEMANTIC),
        "cold_item": (ITEM_SEMANTIC, LONG_TERM, SHORT_TERM),
        "evolving_short": (SHORT_TERM, ITEM_SEMANTIC, ITEM_PROFILE),
        "evolving_long": (SHORT_TERM, LONG_TERM, ITEM_SEMANTIC, ITEM_PROFILE),
    }
    COLD_HISTORY = 5
    THIN_WINDOW = 2
    MANY_DISLIKES = 3
    STOP = 0.5

    def needs(self) -> set[str]:
        """The tools its regime plans name (a library without one of them cannot run this planner;
        the memory adjustments' tools are only added when the library has them)."""
        return set().union(*self.PLANS.values())

    def regime(self, view: PlanView) -> str:
        """The scenario tag, or cold_user when the memory shows a very short history."""
        regime = view.scenario if view.scenario in self.PLANS else "classic"
        history = view.stat("history_items")
        return "cold_user" if history is not None and history <= self.COLD_HISTORY else regime

    def plan(self, view: PlanView) -> list[str]:
        """The tools this state calls for, in order (some may already have run)."""
        regime = self.regime(view)
        plan = list(self.PLANS[regime])
        recent = view.stat("recent_items")
        if recent is not None and recent <= self.THIN_WINDOW and LONG_TERM not in plan:
            plan.insert(plan.index(SHORT_TERM) + 1 if SHORT_TERM in plan else 0, LONG_TERM)
        if (view.stat("low_rated_items") or 0) >= self.MANY_DISLIKES and regime != "cold_user":
            users = [i for i, tool in enumerate(plan) if is_user_tool(tool, view.catalog)]
            plan.insert(users[-1] + 1 if users else len(plan), NEGATIVE)
        if view.stat("high_rated_items") == 0 and POSITIVE in plan:
            plan.remove(POSITIVE)
        return [GEO, *plan[:1], AUTHOR, *plan[1:]]

    def decide(self, view: PlanView) -> PlannerChoice:
        """Score the feasible actions by the plan and pick the best."""
        plan = [tool for tool in self.plan(view) if view.mask.get(tool, False)]
        scores = {spec.name: 0.1 for spec in view.catalog}
        for position, tool in enumerate(plan):
            scores[tool] = 1.0 - 0.05 * position
        scores[CANDIDATE_RANK] = self.STOP
        regime = self.regime(view)
        reason = f"rule[{regime}]: " + (
            "next planned tool {action}" if plan else "plan done, rank with {action}"
        )
        return choose(scores, view, reason)


class FixedPlanner:
    """One configured chain (`Context.chainrec_fixed_chain`; default: every tool in catalog order):
    its next feasible tool, then CandidateRank."""

    name = "fixed"

    def __init__(self, chain: Sequence[str]) -> None:
        """`chain`: tool names in order."""
        self.chain = list(chain)

    def decide(self, view: PlanView) -> PlannerChoice:
        """The chain's first feasible tool not yet run; CandidateRank when none is left."""
        nxt = next((tool for tool in self.chain if view.mask.get(tool, False)), None)
        scores = {action: 0.0 for action in view.feasible}
        if nxt is not None:
            scores[nxt] = 1.0
        else:
            scores[CANDIDATE_RANK] = 1.0
        reason = "fixed chain: " + ("next tool {action}" if nxt else "chain done, {action}")
        return choose(scores, view, reason)


def catalog_line(spec: ToolSpec, view: PlanView) -> str:
    """One action as the LLM planner's prompt lists it (its planned cost when the view has costs)."""
    line = f"- {spec.name}: {spec.description} Reads: {spec.inputs}. Writes: {spec.outputs}."
    cost = view.costs.get(spec.name)
    return f"{line} Cost: {cost.describe(len(view.candidates))}." if cost is not None else line


class LlmPlanner:
    """Zero-shot planner (role "planner"): catalog, memory and mask in the prompt; the answer's action
    is an enum of the feasible actions; infeasible or unknown answers are repaired to the rule
    planner's choice (counted); a failed model falls back to the rule planner."""

    name = "llm"

    def __init__(self, backup: Planner | None = None) -> None:
        """`backup`: the planner that repairs and replaces failed answers (default: rule)."""
        self.backup = backup or RulePlanner()

    def task(self, view: PlanView) -> AgentTask[PlannerChoice]:
        """The planner call for this decision."""
        catalog = "\n".join(catalog_line(spec, view) for spec in view.catalog)
        if view.catalog_note:
            catalog += f"\n{view.catalog_note}"
        masked = {name: why for name, why in view.notes.items()}
        messages = prompts.planner_messages(
            view.user_id,
            len(view.candidates),
            view.step,
            view.max_steps,
            catalog,
            prompts.memory_digest(view.memory),
            view.feasible,
            masked,
        )

        def validate(answer: PlannerChoice) -> tuple[PlannerChoice, list[str]]:
            if not answer.action.strip():
                raise InvalidAnswer("'action' is empty; name one feasible action", "empty_action")
            choice, repairs = repair_choice(answer, view, self.backup)
            if not repairs:
                choice = choice.model_copy(update={"scores": {choice.action: 1.0}})
            return choice, repairs

        return AgentTask(
            agent="planner",
            role="planner",
            messages=messages,
            schema=PlannerChoice,
            validate=validate,
            fallback=lambda: self.backup.decide(view),
            json_schema=constrained_schema(
                PlannerAnswer, {"action": {"enum": view.feasible}, "reason": {"maxLength": REASON_CHARS}}
            ),
        )


PlannerFactory = Callable[[ChainRecContext, Catalog, Planner], Planner | AskingPlanner]
"""(context, catalog, the graph's rule planner) -> a planner."""

PLANNERS: dict[str, PlannerFactory] = {
    "rule": lambda ctx, catalog, rule: rule,
    "fixed": lambda ctx, catalog, rule: FixedPlanner(parse_chain(ctx.chainrec_fixed_chain, catalog)),
    "llm": lambda ctx, catalog, rule: LlmPlanner(rule),
    "learned": lambda ctx, catalog, rule: _learned(ctx, catalog),
}
"""`Context.chainrec_planner` -> factory. A new planner is one more entry."""


def _learned(ctx: ChainRecContext, catalog: Catalog) -> LearnedPlanner:
    from agents.chainrec.online.learned_catalog import CatalogLearnedPlanner  # they build on this module
    from agents.chainrec.online.learned_planner import LearnedPlanner

    default = action_names(catalog) == action_names(TOOLS)
    return LearnedPlanner(ctx) if default else CatalogLearnedPlanner(ctx, catalog)


def ranking_context(ctx: ChainRecContext, catalog: Catalog, scenario: str) -> ChainRecContext:
    """The context CandidateRank ranks with: under the learned planner, with the fusion weights its
    checkpoint learned on the training tasks (config.json `fusion`, agents/chainrec/offline/
    fusion_fit.py), so the episode is ranked as training scored its chains; otherwise `ctx`."""
    if ctx.chainrec_planner != "learned":
        return ctx
    from agents.chainrec.online.fusion import with_fusion_weights

    fusion = _learned(ctx, catalog).checkpoint(scenario).config.get("fusion") or {}
    return with_fusion_weights(ctx, fusion.get("weights") if fusion.get("used") == "learned" else None)


def needed_tools(ctx: ChainRecContext, rule: Planner) -> list[str]:
    """The tools the run's planner cannot run without: CandidateRank (it ends every episode) and, for
    the rule and LLM planners (the rule planner decides or backs up), the rule planner's plans'
    tools. The fixed chain's tools are checked by `parse_chain`, a learned planner's by its checkpoint."""
    needed = [TERMINAL]
    if ctx.chainrec_planner in ("rule", "llm") and hasattr(rule, "needs"):
        needed += sorted(rule.needs())
    return needed


def check_library(library: ToolLibrary, catalog: Catalog, ctx: ChainRecContext, rule: Planner) -> None:
    """`MissingTool` (one line) when `catalog` (the library's cards, with any extension's) lacks a tool
    the run's planner needs, named with the library's file."""
    checked = ToolLibrary(catalog, library.clusters, library.source, library.path)
    checked.require(needed_tools(ctx, rule), f"the {ctx.chainrec_planner} planner")


def planner_for(
    ctx: ChainRecContext, catalog: Catalog = TOOLS, rule: Planner | None = None
) -> Planner | AskingPlanner:
    """The planner `ctx` names over `catalog` (`rule`: the rule planner that decides for "rule" and
    backs up the others; default ChainRec's); a clear error for an unknown name or a bad fixed chain."""
    factory = PLANNERS.get(ctx.chainrec_planner)
    if factory is None:
        raise RecgraphError(
            f"unknown chainrec_planner {ctx.chainrec_planner!r}; choose one of {', '.join(PLANNERS)}"
        )
    try:
        return factory(ctx, catalog, rule or RulePlanner())
    except ValueError as error:
        raise RecgraphError(str(error)) from None
