"""The world the agents act in: the canonical data model, the loaders (`world.loaders`: RecBole
atomic files, the sequential layout, AgentSociety, InstructRec), ml-100k out of the recbole wheel,
synthetic catalogs, the leave-one-out split and the scenario cuts that decide what a user's visible
history is, the per-dataset `Environment` (catalog, histories, training matrix, popularity, lazily
built resources), the dataset's shape (which optional fields it has), MiniLM embeddings and item
vectors, cache paths, seeding, durable JSONL logs, progress reports and the project's error types.

It has no method rooms: every method family (baselines, arag, memrec, amem4rec, chainrec) reads the
same world, and no module here names one.

The bottom layer: imports nothing from the project's other packages.
"""
