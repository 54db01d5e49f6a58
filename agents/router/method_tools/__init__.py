"""The router's method tools: other methods' agents as tools of ChainRec's library.

Each module exports `SPEC` (what the planner sees: name, description, inputs, outputs; all
item-side), its fetch function (`Episode -> Fetched`, the deterministic fallback being the method's
own heuristic path), `unavailable(env, ctx) -> str | None` (what is missing and how to build it) and
`PREREQUISITE` (the registry method whose `prepare` hook builds it, or None):

- memory_neighbourhood.py: MemoryNeighbourhood, MemRec's curated neighbourhood and facets;
- pattern_memories.py: PatternMemories, AMEM4Rec's retrieved pattern memories;
- intent_evidence.py: IntentEvidence, ARAG's user understanding, NLI and context summary;
- collaborative.py: CollaborativeSignal, item-kNN (and BPR) scores, no LLM call.

agents/router/catalog.py assembles them with ChainRec's `TOOLS` into the router's catalog and library,
with each action's planned cost.
"""
