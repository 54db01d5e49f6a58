"""The parts of the learned router's planner step that read nothing another step writes
(`MethodSpec.ahead_parts`): under `recgraph bench --workers N` each is a step of its own, in a fresh
process beside other work, and the planner's step (graphs/router/learned.py `train_ahead`) then finds
what it made on disk instead of doing it in its own process.

- The training world's SASRec, GRU4Rec and LightGCN that SequentialSignal and GraphSignal read
  (`train_world_model`): single-threaded trainings, saved in the training world's own cache.
- The memory vectors MemoryNeighbourhood's curations read in the training world
  (`read_world_memories`): the training tasks' curations run once, as the trajectories will run
  them, so the memories they read are embedded here and kept in the shared vector store; the
  planner's step finds them instead of embedding them (4,912 on the ML-1M-sized catalog, about two
  minutes of its CPU). Its peak is the training's own (policy_train.py gives the encoder back).

A part changes no result: the weights are the same bits whoever trains them, and each memory text is
embedded on its own (`world.vector_memo.embed_each`), so a found vector is the one a lazy read embeds.
"""

from __future__ import annotations

from functools import partial

from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import training_tasks
from agents.memrec.read_ahead import PROGRESS_LABEL as READ_AHEAD
from agents.memrec.read_ahead import read_ahead, reads_ahead
from agents.router.catalog import router_catalog
from agents.router.method_tools import memory_neighbourhood
from agents.router.method_tools.support import knobs
from agents.router.method_tools.trained_models import missing_models, train_models
from graphs.hooks import AheadPart, PrepareRequest
from graphs.router.learned import training_context, training_world_model_names, trajectory_config
from state.memrec.context import MemRecContext
from state.router.context import RouterContext
from world.environment import get_environment
from world.progress import report

WORLD_MODEL_COSTS = {"sasrec": 70.0, "gru4rec": 30.0, "lightgcn": 45.0}
"""About the CPU seconds of each training-world model in `make bench`'s run (`AheadPart.cost`)."""
WORLD_MEMORIES = "training-world memories"
"""The memory part's name (its step: `<method> (training-world memories)`)."""
WORLD_MEMORIES_COST = 25.0
"""About the CPU seconds of the memory part in `make bench`'s run (924 memory texts embedded)."""


def train_world_model(request: PrepareRequest, model: str) -> None:
    """One part: the training world's `model`, trained into the training world's cache (nothing
    when it is there already) for the step that trains the planner."""
    ctx = training_context(request.context)  # type: ignore[arg-type]
    train_env = training_environment(get_environment(ctx.dataset))
    if missing_models(train_env, ctx, [model]):
        train_models(train_env, ctx, [model])


def reads_world_memories(context: RouterContext) -> bool:
    """Whether the planner's trajectories read MemRec memories that a part can read ahead:
    MemoryNeighbourhood in the run's catalog, and curation reads that `reads_ahead` allows."""
    ctx = training_context(context)
    names = {spec.name for spec in router_catalog(ctx)}
    return memory_neighbourhood.NAME in names and reads_ahead(knobs(ctx, MemRecContext))


def read_world_memories(request: PrepareRequest) -> dict[str, int]:
    """One part: the training tasks' curations in the training world, on its own MemRec graph
    (`training_context`: `memrec_memory=""`), scenario by scenario as the tasks are posed; returns the
    memory texts read per scenario. Progress as `read ahead` (users done)."""
    context: RouterContext = request.context  # type: ignore[assignment]
    ctx = training_context(context)
    config = trajectory_config(context, dict(request.protocol), request.scenario)
    full = get_environment(config.dataset)  # as `generate` poses them (the planner's dataset)
    train_env = training_environment(full)
    tasks = training_tasks(train_env, full, config)
    memrec = knobs(ctx, MemRecContext)
    done_before = 0
    read: dict[str, int] = {}

    def progress(done: int, _total: int) -> None:
        report(READ_AHEAD, done_before + done, len(tasks))

    for scenario in dict.fromkeys(task.scenario for task in tasks):
        users = [task.user_id for task in tasks if task.scenario == scenario]
        figures = read_ahead(train_env, memrec, users, scenario, progress)
        read[scenario] = int(figures.get("initial_texts", 0)) + int(figures.get("changed_texts", 0))
        done_before += len(users)
    return read


def ahead_parts(context: RouterContext) -> list[AheadPart]:
    """The parts of the planner's step (see the module docstring): one per training-world model its
    tools read (`training_world_model_names`: none to three), then the training world's memory vectors
    when MemoryNeighbourhood reads them (`reads_world_memories`)."""
    parts = [
        AheadPart(
            f"training-world {model}",
            WORLD_MODEL_COSTS.get(model, 1.0),
            partial(train_world_model, model=model),
        )
        for model in training_world_model_names(training_context(context))
    ]
    if reads_world_memories(context):
        # curation reads item vectors: the part waits for the run's item-vector step
        parts.append(AheadPart(WORLD_MEMORIES, WORLD_MEMORIES_COST, read_world_memories, item_vectors=True))
    return parts
