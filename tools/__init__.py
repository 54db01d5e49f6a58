"""What agents and planners call: catalog retrieval over Chroma, embedding look-ups
(`tools.similarity`), and memory stores (MemRec's versioned memory graph and its durable writer).
Each module's docstring states its contract.

May import: `state`, `world`.
"""
