"""Evaluation only: the protocol (users, candidates), metrics, the batch runner, reports and
plots, `bench perf`, and the simulated OpenAI-compatible server. Nothing `graph.invoke()` needs
lives here. No method name appears in it: methods plug in through `graphs.registry`.

May import: `graphs`, `agents`, `prompts`, `tools`, `state`, `world`.
"""
