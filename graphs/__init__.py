"""One module per method building its `StateGraph` (exports `builder` and `graph`), the shared
node factory (`graphs.nodes`), the first node every graph shares (`graphs.common`), and the
registry (`graphs.registry`): the one extension point naming every method with its graph, kind,
ablation overrides and lifecycle hooks.

May import: `agents`, `prompts`, `tools`, `state`, `world`. Never `bench` or `recgraph`.
"""
