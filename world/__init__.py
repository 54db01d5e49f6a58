"""The world the agents act in: the canonical data model, the loaders, the leave-one-out
split and scenario cuts that decide what a user's visible history is, the per-dataset
`Environment` (catalog, histories, training matrix, popularity, lazily built resources),
MiniLM item embeddings, cache paths, durable JSONL logs and the project's error types.

The bottom layer: imports nothing from the project's other packages.
"""
