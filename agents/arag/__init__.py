"""ARAG's agents: user understanding, NLI, context summary, item ranker, their deterministic
signals and the blackboard reading helpers. May import: `agents` (shared machinery), `prompts`,
`tools`, `state`, `world`.
"""
