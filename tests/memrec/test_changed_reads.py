"""Memories Stage W changed are embedded only when curation reads them: the same neighbours, order,
scores and features as reading every changed memory first (what ranking did before), and nothing
embedded that curation did not read."""

from pathlib import Path

import numpy as np
import pytest

from agents.memrec.curation import curate, select_top
from agents.memrec.feature_index import FeatureIndex
from agents.memrec.features import neighbour_features, read_user_similarity
from agents.memrec.rule_files import load_rule_set
from agents.memrec.rule_scoring import score_neighbours
from agents.memrec.similarity_reads import SIMILARITY, read_needed
from tools.memrec.graph import MemoryGraph
from tools.memrec.jobs import NodeUpdate, PropagationJob
from tools.memrec.writer import MemoryWriter
from world.environment import Environment, get_environment
from world.synth import SynthSpec, generate
from world.synth_write import write_synth

K, MIN_USERS, MIN_ITEMS = 6, 2, 2


@pytest.fixture(scope="module")
def changed_memory(tmp_path_factory: pytest.TempPathFactory) -> tuple[Environment, str]:
    """A 200-user dataset whose memory had a third of its users and a fifth of its items rewritten."""
    folder: Path = tmp_path_factory.mktemp("changed") / "data"
    write_synth(generate(SynthSpec(users=200, items=120, interactions=2400, seed=5)), folder)
    env = get_environment(str(folder))
    memory = str(folder.parent / "memory.sqlite")
    graph = MemoryGraph.open(env, memory)
    updates = [
        NodeUpdate(f"u:{u}", f"Enjoys {u}'s favourite things, {n % 7} of them.")
        for n, u in enumerate(env.user_ids[::3])
    ]
    updates += [NodeUpdate(f"i:{i}", f"A cult pick, liked by group {n % 5}.") for n, i in
                enumerate(env.item_ids[::5])]  # fmt: skip
    MemoryWriter(graph, synchronous=True).submit(PropagationJob("w", tuple(updates)))
    return env, memory


def _fresh(env: Environment, memory: str) -> FeatureIndex:
    """An index with nothing embedded yet (what a new process builds)."""
    return FeatureIndex(env, MemoryGraph.open(env, memory))


def _read_first(index: FeatureIndex, rule_set_name: str, user: str, cap: int | None) -> tuple:
    """Curation as it ran when every changed memory was embedded before ranking: the changed user
    neighbours' scores known before the reads start."""
    rule_set = load_rule_set(rule_set_name)
    found = neighbour_features(index, user, [], user_similarity=False)
    read_user_similarity(index, found, np.flatnonzero(found.changed))
    unread = read_needed(index, rule_set, found, K, cap)
    found.matrix[unread, SIMILARITY] = 0.0
    scores = score_neighbours(rule_set, found.matrix, found.is_item)
    scores[unread] = -np.inf
    keep = select_top(scores, found.is_item, K, MIN_USERS, MIN_ITEMS)
    return found.node_ids[keep].tolist(), scores[keep], found.matrix[keep]


@pytest.mark.parametrize("rules", ["generic", "movietv"])
@pytest.mark.parametrize("cap", [None, 12])
def test_reading_changed_memories_lazily_keeps_every_curation(
    changed_memory: tuple[Environment, str], rules: str, cap: int | None
) -> None:
    env, memory = changed_memory
    eager, lazy = _fresh(env, memory), _fresh(env, memory)
    per_kept = None if cap is None else cap // K
    for user in env.user_ids[:60]:
        ids, scores, features = _read_first(eager, rules, user, cap)
        got = curate(lazy, load_rule_set(rules), user, [], K, MIN_USERS, MIN_ITEMS, reads_per_kept=per_kept)
        assert got.node_ids == ids
        assert np.array_equal(got.scores, scores)
        assert np.array_equal(got.features, features)
    few_eager, few_lazy = _fresh(env, memory), _fresh(env, memory)
    for user in env.user_ids[:5]:
        _read_first(few_eager, rules, user, cap)
        curate(few_lazy, load_rule_set(rules), user, [], K, MIN_USERS, MIN_ITEMS, reads_per_kept=per_kept)
    assert 0 < few_lazy.changed_read < few_eager.changed_read  # bounded: fewer changed memories embedded


def test_only_the_changed_memories_curation_reads_are_embedded(
    changed_memory: tuple[Environment, str],
) -> None:
    env, memory = changed_memory
    index = _fresh(env, memory)
    rule_set = load_rule_set("generic")
    changed = index.graph.changed_rows()
    texts = dict(changed)
    read: set[str] = set()
    for user in env.user_ids[:40]:
        found = neighbour_features(index, user, [], user_similarity=False)
        unread = read_needed(index, rule_set, found, K, 4 * K)
        rows = [row for row in range(len(found.node_ids)) if found.node_ids[row] in texts]
        read.update(texts[found.node_ids[row]] for row in rows if found.is_item[row] or not unread[row])
        if f"u:{user}" in texts:
            read.add(texts[f"u:{user}"])
    assert index.changed_read == len(read) < len({text for _, text in changed})


def test_a_changed_memorys_vector_depends_on_its_text_alone(changed_memory: tuple[Environment, str]) -> None:
    """Read alone or with every other changed memory, in this index or a new one: the same bits."""
    env, memory = changed_memory
    one, every = _fresh(env, memory).updated_vectors(), _fresh(env, memory).updated_vectors()
    nodes = list(every)
    together = every.read(nodes)
    for node in nodes[:5]:
        assert np.array_equal(one[node], together[nodes.index(node)])
