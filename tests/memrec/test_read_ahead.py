"""MemRec's read-ahead: the prepare step embeds what the evaluated users' curations will read, so a
ranking process (another FeatureIndex, nothing in memory) embeds nothing and curates the same."""

from dataclasses import replace
from pathlib import Path

import pytest

import world.vector_memo as vector_memo
from agents.memrec.curation import curate, resolve_rule_set, rule_set_name
from agents.memrec.feature_index import FeatureIndex
from agents.memrec.read_ahead import read_ahead
from state.memrec.context import MemRecContext
from tools.memrec.graph import MemoryGraph
from tools.memrec.jobs import NodeUpdate, PropagationJob
from tools.memrec.writer import MemoryWriter
from world.environment import Environment, get_environment
from world.synth import SynthSpec, generate
from world.synth_write import write_synth


@pytest.fixture
def changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Environment, MemRecContext]:
    """A 120-user catalog (its own cache folder) whose memory had a third of its users and a fifth of
    its items rewritten, and a context pointing at that memory."""
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    vector_memo.forget_memo()
    folder = tmp_path / "data"
    write_synth(generate(SynthSpec(users=120, items=90, interactions=1500, seed=8)), folder)
    env = get_environment(str(folder))
    memory = str(tmp_path / "memory.sqlite")
    graph = MemoryGraph.open(env, memory)
    updates = [
        NodeUpdate(f"u:{u}", f"Likes what {u} likes, {n % 5} ways.") for n, u in enumerate(env.user_ids[::3])
    ]
    updates += [NodeUpdate(f"i:{i}", f"A pick of circle {n % 4}.") for n, i in enumerate(env.item_ids[::5])]
    MemoryWriter(graph, synchronous=True).submit(PropagationJob("w", tuple(updates)))
    return env, MemRecContext(dataset=str(folder), memrec_memory=memory, memrec_k=8)


def _curations(env: Environment, ctx: MemRecContext, users: list[str]) -> list[tuple]:
    """Each user's curation as a ranking process would run it (a fresh index over the memory)."""
    index = FeatureIndex(env, MemoryGraph.open(env, ctx.memrec_memory))
    rule_set = resolve_rule_set(ctx, env, rule_set_name(ctx, env))
    found = []
    for user in users:
        visible = env.history(user, "classic")
        reads = ctx.memrec_similarity_reads or None
        kept = curate(index, rule_set, user, [], ctx.memrec_k, ctx.memrec_min_users, ctx.memrec_min_items,
                      visible, reads_per_kept=reads)  # fmt: skip
        found.append((kept.node_ids, kept.scores.tolist()))
    return found


def test_after_reading_ahead_the_rankings_embed_nothing_and_curate_the_same(
    changed: tuple[Environment, MemRecContext], monkeypatch: pytest.MonkeyPatch
) -> None:
    env, ctx = changed
    users = env.user_ids[:30]
    expected = _curations(env, ctx, users)  # read lazily (embedding as it goes)
    embedded: list[str] = []
    alone = vector_memo.embed_alone
    monkeypatch.setattr(vector_memo, "embed_alone", lambda texts: embedded.extend(texts) or alone(texts))
    monkeypatch.setenv("RECGRAPH_HOME", str(Path(ctx.memrec_memory).parent / "other-home"))  # nothing stored
    vector_memo.forget_memo()
    figures = read_ahead(env, ctx, users, "classic")
    assert figures["users"] == 30 and figures["changed_texts"] > 0 and embedded
    # a ranking process: nothing in its memory, the vectors in the store the read-ahead filled
    embedded.clear()
    vector_memo.forget_memo()
    assert _curations(env, ctx, users) == expected
    assert embedded == []
    # the router's variants run the hook again on the same memory and users: nothing is redone
    assert read_ahead(env, ctx, users, "classic") == {"users": 30, "done_before": True}
    assert read_ahead(env, ctx, users[:10], "classic")["changed_texts"] == 0  # other users: read again


def test_candidate_aware_curation_and_no_read_are_not_read_ahead(
    changed: tuple[Environment, MemRecContext],
) -> None:
    env, ctx = changed
    users = env.user_ids[:5]
    assert read_ahead(env, replace(ctx, memrec_curation="candidates"), users, "classic") == {}
    assert read_ahead(env, replace(ctx, memrec_use_read=False), users, "classic") == {}
    assert not Path(f"{ctx.memrec_memory}.read-ahead").exists()
