"""The `recgraph` command line: thin wrappers over `bench` and `graphs`, and its settings.

Shared commands: `bench` (and `bench perf`), `compare`, `datasets` (and `datasets synth`) and
`recommend`, with their options and help texts.

One room per method family that has commands of its own, registered through its spec's `cli` hook:
`recgraph.memrec` (`recgraph memrec rules|feedback|init`), `recgraph.amem4rec`
(`recgraph amem4rec train|pool show`) and `recgraph.chainrec` (`recgraph chainrec
trajectories|train|export|mine-tools`). The baselines and ARAG run through the shared commands only.

May import everything.
"""
