"""The baselines' context: the common knobs plus each baseline's own, prefixed by its method name
(graphs/baselines/)."""

from __future__ import annotations

from dataclasses import dataclass, field

from state.context import Context


@dataclass(kw_only=True)
class BaselinesContext(Context):
    """Classic and single-call LLM baselines: history windows, neighbours and BPR's factors."""

    recency_llm_items: int = field(
        default=5, metadata={"description": "recency_llm: how many recent interactions the prompt shows."}
    )
    vanilla_rag_items: int = field(
        default=10, metadata={"description": "vanilla_rag: history items retrieved into the prompt."}
    )
    embedding_recent_items: int = field(
        default=10,
        metadata={"description": "embedding: how many of the most recent history items profile the user."},
    )
    itemknn_neighbors: int = field(
        default=50,
        metadata={"description": "ItemKNN: neighbours kept per history item (0 keeps all)."},
    )
    bpr_factors: int = field(default=64, metadata={"description": "BPR: latent factors."})
    bpr_iterations: int = field(default=100, metadata={"description": "BPR: training epochs."})
    sasrec_embedding_dim: int = field(
        default=50, metadata={"description": "SASRec: item embedding size (the paper's d=50)."}
    )
    sasrec_max_len: int = field(
        default=50,
        metadata={"description": "SASRec: most recent items the encoder reads (the paper's n=50)."},
    )
    sasrec_num_blocks: int = field(default=2, metadata={"description": "SASRec: self-attention blocks."})
    sasrec_num_heads: int = field(default=1, metadata={"description": "SASRec: attention heads."})
    sasrec_dropout: float = field(default=0.2, metadata={"description": "SASRec: dropout rate."})
    sasrec_learning_rate: float = field(default=0.001, metadata={"description": "SASRec: Adam step size."})
    sasrec_batch_size: int = field(
        default=512, metadata={"description": "SASRec: training prefixes per batch."}
    )
    sasrec_negatives: int = field(
        default=2048, metadata={"description": "SASRec: sampled negatives shared per batch (cornac's)."}
    )
    sasrec_epochs: int = field(
        default=2,
        metadata={
            "description": "SASRec: training epochs; the best on the validation targets is kept"
            " (at most 2,048 users' targets, a seeded sample beyond: `trained.VALIDATION_USERS`)."
        },
    )
    sasrec_epoch_prefixes: int = field(
        default=200_000,
        metadata={
            "description": "SASRec: most training prefixes per epoch (cornac trains on every prefix of"
            " every session; beyond this, an epoch is the first batches of its shuffled sessions, another"
            " seeded subset each epoch; 0: every prefix). ml-100k has 38,762."
        },
    )
    gru4rec_hidden: int = field(default=100, metadata={"description": "GRU4Rec: GRU hidden units."})
    gru4rec_max_len: int = field(
        default=50, metadata={"description": "GRU4Rec: most recent items the GRU reads and trains on."}
    )
    gru4rec_learning_rate: float = field(
        default=0.05, metadata={"description": "GRU4Rec: Adagrad step size (cornac's default)."}
    )
    gru4rec_batch_size: int = field(default=512, metadata={"description": "GRU4Rec: parallel sessions."})
    gru4rec_negatives: int = field(
        default=2048, metadata={"description": "GRU4Rec: sampled negatives shared per batch."}
    )
    gru4rec_epochs: int = field(
        default=3,
        metadata={
            "description": "GRU4Rec: training epochs; the best on the validation targets is kept"
            " (at most 2,048 users' targets, a seeded sample beyond: `trained.VALIDATION_USERS`)."
        },
    )
    lightgcn_embedding_dim: int = field(default=64, metadata={"description": "LightGCN: embedding size."})
    lightgcn_layers: int = field(default=3, metadata={"description": "LightGCN: propagation layers."})
    lightgcn_learning_rate: float = field(
        default=0.001, metadata={"description": "LightGCN: Adam step size."}
    )
    lightgcn_batch_size: int = field(
        default=2048,
        metadata={
            "description": "LightGCN: training interactions per BPR batch (larger on a graph of"
            " over 48 batches: at most `lightgcn.MAX_BATCHES` batches an epoch)."
        },
    )
    lightgcn_reg: float = field(
        default=1e-4, metadata={"description": "LightGCN: L2 weight on the batch's ego embeddings."}
    )
    lightgcn_epochs: int = field(
        default=20,
        metadata={"description": "LightGCN: most training epochs (early stopping may end sooner)."},
    )
    lightgcn_eval_every: int = field(
        default=5,
        metadata={
            "description": "LightGCN: epochs between validation checks (at most 2,048 users'"
            " targets, a seeded sample beyond: `trained.VALIDATION_USERS`)."
        },
    )
    lightgcn_patience: int = field(
        default=2,
        metadata={"description": "LightGCN: validation checks without improvement before stopping."},
    )
    llmrank_history_items: int = field(
        default=50,
        metadata={"description": "llmrank_*: most recent history items shown (the paper's 50; 0: all)."},
    )
