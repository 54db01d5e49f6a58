"""MemRec's engines and agents: candidate-aware curation (features, rule language, shipped
rule sets, domain statistics), Stage R synthesis, ReRank, Stage W writes, the LM_Mem rule writer
and initial memories. May import: `agents` (shared machinery), `prompts`, `tools`, `state`, `world`.
"""
