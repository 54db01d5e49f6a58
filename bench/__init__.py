"""Evaluation only: the protocol (users, candidates, eligibility), metrics and paired statistics,
the batch runner with its workers, resume and crash reports, reports and plots, `bench perf` with
the client floor, the planned-calls and fallback checks, LangSmith feedback, and the simulated
OpenAI-compatible server with its faults. Nothing `graph.invoke()` needs lives here.

It has no method rooms: methods plug in through `graphs.registry` (their specs and hooks in
`graphs/<method>/`), and no code here depends on a particular method.

May import: `graphs`, `agents`, `prompts`, `tools`, `state`, `world`.
"""
