"""Prompt templates, in our own words after each paper's structure.

Shared: `prompts.common`, the item and candidate layouts and the quoting helpers: item and user text
enters prompts only as `quote(...)` data, and every system message carries `DATA_RULE`.

One room per method family: `prompts.baselines` (the LLM baselines' ranking prompt), `prompts.arag`
(ARAG's four agents), `prompts.memrec` (Stage R, ReRank, Stage W; `rules`: the LM_Mem rule writer),
`prompts.amem4rec` (extraction, linking, evolution, ranking), `prompts.chainrec` (the tool agents,
the zero-shot planner, CandidateRank; `mining`: the chain-of-thought traces of tool mining) and
`prompts.router` (the planner's note on tool costs) and `prompts.agentcf` (AgentCF's choice,
reflections and ranking variants).

May import: `state`, `world`.
"""
