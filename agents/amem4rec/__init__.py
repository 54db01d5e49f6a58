"""AMEM4Rec's agents: the extractor, the similarity validator with Eq. 7's policy, the semantic
validator, the evolver and the ranker, each with its deterministic fallback. May import: `agents`
(shared machinery), `prompts`, `tools`, `state`, `world`.
"""
