"""What agents and planners call, and the stores the methods keep. Each module's docstring states
its contract.

Shared: `catalog_index` (the recall stage of every retrieval from the whole catalog, an exact scan) and
`similarity` (embedding look-ups: a user's profile vector, items ordered by similarity, stable
ordering by scores).

One room per method family that keeps a store or calls tools:

- `tools.memrec`: MemRec's memory graph (`graph`: versioned SQLite text memories of users and items),
  Stage W's durable background writer (`writer`) and the training adjacency it sits on (`adjacency`);
- `tools.amem4rec`: AMEM4Rec's global memory pool (`pool`), its folder and manifest (`folder`), its
  Chroma cosine index (`index`), one memory as a record (`record`) and the memory-text vectors
  (`vectors`);
- `tools.chainrec`: ChainRec's environment tools `get_user`, `get_item`, `get_reviews`
  (`episode_tools`) over the dataset's indexed interactions (`episode_corpus`);
- `tools.agentcf`: AgentCF's agent memories and their checkpoint file (`store`).

The baselines and ARAG keep no store of their own, so they have no room here.

May import: `state`, `world`.
"""
