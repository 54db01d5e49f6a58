"""ChainRec's runtime knobs (graphs/chainrec/graph.py): the common `Context` plus its own knobs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from state.context import Context

PlannerName = Literal["rule", "llm", "fixed", "learned"]
"""Values of `Context.chainrec_planner`."""
T_MAX = 6
"""T_max, the step budget of the feasibility mask (the paper's Sec. 3.2 "maximum step budget T_max",
Sec. 4.1, Alg. 1 line 3): tool calls an episode may make before CandidateRank is forced. The paper
names T_max but prints no value; 6 is ours (the spec's default). Table 3's averages (ChainRec 5.05,
DeepSeek-R1 6.28 planning steps) count CandidateRank too, so they fit a budget of 6 tools + the
ranking step."""


def _weight(tool: str, default: float) -> float:
    return field(
        default=default,
        metadata={
            "description": f"ChainRec CandidateRank fallback: weight of {tool}'s evidence in the fusion "
            "(multiplied by the tool's confidence; 0 ignores it)."
        },
    )


@dataclass(kw_only=True)
class ChainRecContext(Context):
    """ChainRec: planner, step budget, reward, evidence budgets and CandidateRank's fusion weights."""

    chainrec_planner: PlannerName = field(
        default="rule",
        metadata={
            "description": "ChainRec planner: rule (state-dependent heuristic), llm (zero-shot, role "
            "planner; falls back to rule), fixed (the configured chain, then CandidateRank), learned "
            "(a trained policy: `chainrec_checkpoint`, else the dataset's latest checkpoint of the "
            "`chainrec_planner_scope`; refuses with how to train one when there is none)."
        },
    )
    chainrec_library: str = field(
        default="",
        metadata={
            "description": "ChainRec: the tool library file the planner, the graph and the trajectories "
            "load (empty: the shipped library, agents/chainrec/online/default_library.json; a file "
            "`recgraph chainrec mine-tools` wrote: its mined tools). A missing needed tool is refused "
            "in one line."
        },
    )
    chainrec_max_steps: int = field(
        default=T_MAX,
        metadata={
            "description": "ChainRec: tool budget T_max (default T_MAX = 6; the paper prints no value); "
            "CandidateRank is forced once it is spent."
        },
    )
    chainrec_fixed_chain: str = field(
        default="",
        metadata={
            "description": "ChainRec fixed planner: comma-separated tool names in order (empty: every "
            "tool in catalog order); infeasible ones are skipped."
        },
    )
    chainrec_drop_tools: str = field(
        default="",
        metadata={
            "description": "ChainRec ablations: comma-separated tools removed from the library the planner "
            "plans over (chainrec_no_geo: GeoContext, the paper's Table 4); CandidateRank stays."
        },
    )
    chainrec_reward_lambda: float = field(
        default=0.003,
        metadata={
            "description": "ChainRec reward R = AvgHR@{1,3,5} - lambda * tool calls: the lambda (the "
            "learned planner trains on it; 0.003 is about 1% of one hit step, 1/3)."
        },
    )
    chainrec_planner_state: Literal["memory", "scenario"] = field(
        default="memory",
        metadata={
            "description": "ChainRec learned planner: its state. memory = (u, I_cand, M_t) as in Eq. 2 "
            "(what the episode's tools wrote and the candidate count); scenario = the ablation that also "
            "reads the scenario tag and task facts no tool gathered. Keyed into every checkpoint."
        },
    )
    chainrec_planner_scope: Literal["run", "scenario"] = field(
        default="run",
        metadata={
            "description": "ChainRec learned planner: what one checkpoint covers. run (the paper's) = one "
            "planner over every scenario, trained on tasks of all five (on AgentRecBench's release layout: "
            "users in no task folder); scenario = the ablation with one checkpoint per scenario, trained "
            "on that scenario's tasks only."
        },
    )
    chainrec_policy_stage: Literal["dpo", "sft"] = field(
        default="dpo",
        metadata={
            "description": "ChainRec learned planner: which weights to plan with, dpo (SFT then DPO) or sft."
        },
    )
    chainrec_checkpoint: str = field(
        default="",
        metadata={
            "description": "ChainRec learned planner: checkpoint folder (empty: the newest for the dataset, "
            "planner scope (every scenario, or the scenario in the per-scenario ablation) and planner state "
            "under the dataset's cache; none: the planner refuses in one line saying how to train one)."
        },
    )
    chainrec_dpo_beta: float = field(
        default=0.1, metadata={"description": "ChainRec planner training: DPO's beta (Eq. 11)."}
    )
    chainrec_train_tasks: int = field(
        default=300,
        metadata={
            "description": "ChainRec planner training: training tasks (users' last training interactions, "
            "split evenly over the scenarios of a planner over every scenario)."
        },
    )
    chainrec_chain_cap: int = field(
        default=2000,
        metadata={
            "description": "ChainRec trajectories: enumerate every feasible chain up to this many per task, "
            "else sample this many (seeded)."
        },
    )
    chainrec_long_items: int = field(
        default=50,
        metadata={"description": "ChainRec: most recent history items the long-horizon tools read."},
    )
    chainrec_short_items: int = field(
        default=5,
        metadata={"description": "ChainRec ShortTermPreference: the recency window, in items."},
    )
    chainrec_review_count: int = field(
        default=3, metadata={"description": "ChainRec: reviews one get_reviews call returns at most."}
    )
    chainrec_review_chars: int = field(
        default=600,
        metadata={"description": "ChainRec: characters of review text one get_reviews call returns at most."},
    )
    chainrec_geo_scale_km: float = field(
        default=5.0,
        metadata={"description": "ChainRec GeoContext: distance (km) at which the geo score drops to 1/e."},
    )
    chainrec_weight_long_term: float = _weight("LongTermPreference", 0.5)
    chainrec_weight_short_term: float = _weight("ShortTermPreference", 0.5)
    chainrec_weight_positive: float = _weight("PositivePreference", 0.5)
    chainrec_weight_negative: float = _weight("NegativePreference", 0.1)
    chainrec_weight_item_semantic: float = _weight("ItemSemantic", 1.0)
    chainrec_weight_item_profile: float = _weight("ItemProfile", 3.0)
    chainrec_weight_author: float = _weight("AuthorPreference", 1.0)
    chainrec_weight_geo: float = _weight("GeoContext", 1.0)
