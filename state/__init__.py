"""The typed blackboard and the settings.

Shared: `context` (`Context`, the knobs every method shares), `contract` (`RecInput` -> `RecOutput`,
the one input/output contract), `base_state` (the state every method's state extends), `blackboard`
(the messages agents post, and their reducer), `degraded` (features switched off for missing data)
and `schemas` (`RankedList`, the ranking answer of the single-call baselines).

One room per method family, each with `context.py` (its `Context` subclass, one knob prefix),
`state.py` (its blackboard state with reducers) and `schemas.py` (its agents' answers):

- `state.baselines`: `BaselinesContext` only (knobs named after their baseline);
- `state.arag`: `AragContext` (`arag_`), ARAG's state and schemas;
- `state.memrec`: `MemRecContext` (`memrec_`), MemRec's state and schemas;
- `state.amem4rec`: `Amem4RecContext` (`amem4rec_`), AMEM4Rec's state and schemas;
- `state.chainrec`: `ChainRecContext` (`chainrec_`), ChainRec's state and schemas, plus the tool
  mining schemas (`mining_schemas`);
- `state.router`: `RouterContext` (`router_`, and every wrapped method's knobs) and `RouterState`;
- `state.agentcf`: `AgentCFContext` (`agentcf_`), AgentCF's states and schemas.

May import: `world` only.
"""
