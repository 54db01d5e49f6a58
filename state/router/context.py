"""The router's runtime knobs (graphs/router/graph.py): ChainRec's planner knobs plus the knobs of
every method whose agents it calls as tools (MemRec, AMEM4Rec, ARAG, AgentCF, the baselines), and
the fusion weights and cost term of those method tools."""

from __future__ import annotations

from dataclasses import dataclass, field

from state.agentcf.context import AgentCFContext
from state.amem4rec.context import Amem4RecContext
from state.arag.context import AragContext
from state.baselines.context import BaselinesContext
from state.chainrec.context import ChainRecContext
from state.memrec.context import MemRecContext

DEFAULT_SCORERS = "itemknn,bpr"
"""CollaborativeSignal's classic scorers unless `router_collaborative` names others (also for a
context without the knob, ChainRec's)."""


def _weight(tool: str, default: float) -> float:
    return field(
        default=default,
        metadata={
            "description": f"Router CandidateRank fallback: weight of {tool}'s evidence in the fusion "
            "(multiplied by the tool's confidence; 0 ignores it)."
        },
    )


@dataclass(kw_only=True)
class RouterContext(
    ChainRecContext, MemRecContext, Amem4RecContext, AragContext, AgentCFContext, BaselinesContext
):
    """The router: ChainRec's planner over ChainRec's library plus the method tools."""

    router_method_tools: bool = field(
        default=True,
        metadata={
            "description": "Router: offer the method tools (MemoryNeighbourhood, PatternMemories, "
            "IntentEvidence, CollaborativeSignal, SequentialSignal, GraphSignal, AgentMemories, "
            "RecencyRanking) to the planner; "
            "false is ChainRec's own library."
        },
    )
    router_cost_lambda: float = field(
        default=0.000001,
        metadata={
            "description": "Router reward R = AvgHR@{1,3,5} - lambda_steps * tool calls - this * "
            "tokens of the chain (the planned tokens of each tool's LLM call). 1e-6: a ~1,800-token "
            "call weighs 0.002 AvgHR, so cost settles near-ties and quality decides."
        },
    )
    router_collaborative: str = field(
        default=DEFAULT_SCORERS,
        metadata={
            "description": "Router CollaborativeSignal: comma-separated classic scorers averaged by "
            "rank (itemknn, bpr). Both by default: BPR's factors add what co-occurrence misses "
            "(ml-100k training tasks: MemoryNeighbourhood fused with item-kNN alone 0.786 AvgHR, "
            "with both 0.809)."
        },
    )
    router_sequential: str = field(
        default="sasrec,gru4rec",
        metadata={
            "description": "Router SequentialSignal: comma-separated trained sequential baselines "
            "averaged by rank (sasrec, gru4rec); the models are the baselines' own, trained once."
        },
    )
    chainrec_weight_memory_neighbourhood: float = _weight("MemoryNeighbourhood", 1.0)
    chainrec_weight_pattern_memories: float = _weight("PatternMemories", 1.0)
    chainrec_weight_intent_evidence: float = _weight("IntentEvidence", 1.0)
    chainrec_weight_collaborative: float = _weight("CollaborativeSignal", 2.0)
    chainrec_weight_sequential: float = _weight("SequentialSignal", 2.0)
    chainrec_weight_graph: float = _weight("GraphSignal", 2.0)
    chainrec_weight_agent_memories: float = _weight("AgentMemories", 1.0)
    chainrec_weight_recency_ranking: float = _weight("RecencyRanking", 1.0)
