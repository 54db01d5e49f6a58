"""Evaluation only, in rooms by concern (bench/README.md): the protocol (users, candidates,
eligibility, metrics, knobs), the statistics, the planned cost, the machinery that runs methods
(runner, workers, remote replicas, checkpoints, crash reports, tracing, `bench perf`, the cost
probe), the reports and `recgraph reproduce`'s tables. Nothing `graph.invoke()` needs lives here.

It has no method rooms: methods plug in through `graphs.registry` (their specs and hooks in
`graphs/<method>/`), and no code here depends on a particular method.

May import: `graphs`, `agents`, `prompts`, `tools`, `state`, `world`, `llmsim`.
"""
