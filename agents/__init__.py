"""The agents: prompt + typed answer + validation/repair + deterministic fallback. Shared LLM
machinery lives at the top (`base` drives one agent call, `backends` builds chat models,
`usage` accounts calls/tokens/cost, `ranking` validates rankings); each method has a room:
`agents.arag`, `agents.memrec`, and the classic / LLM baseline rankers.

May import: `prompts`, `tools`, `state`, `world`.
"""
