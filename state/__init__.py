"""The typed blackboard: TypedDict states with their reducers, pydantic schemas of agent answers,
the `RecInput`/`RecOutput` contract and the runtime `Context`.

May import: `world` only.
"""
