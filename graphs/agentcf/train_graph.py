"""AgentCF training as a LangGraph state machine: one invocation = one replayed interaction.

    START -> interaction -> user_agent -(route_after_choice)-> user_reflection | finish
    user_reflection -> item_reflection -(route_after_reflection)-> user_agent | finish
    finish -> END

- interaction: the user's training interaction at `position` (the real item) and its sampled
  negative (agents/agentcf/plan.py), and the memories it starts from: those given in the input (the
  training driver passes them), else the `agentcf_memory` file's, else the initial ones;
- user_agent (role "rec"): picks one of the two items and explains why;
- user_reflection (role "mem"): after a wrong pick, or after a right first pick when
  `agentcf_reflect_on_success`, the user agent rewrites its self-description;
- item_reflection (role "mem"): the two item agents rewrite their descriptions, reading it;
- back to user_agent while the pick was wrong and rounds remain (`agentcf_rounds`);
- finish: the memories after the interaction. Nothing is written: the graph proposes, the training
  driver (graphs/agentcf/training.py) commits. At most 3 LLM calls per round.
Invoke with `{"user_id": ..., "position": ...}`.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents.agentcf.choose import choice_task, shown_order
from agents.agentcf.plan import Interaction, interaction
from agents.agentcf.recall import item_memories, user_memory
from agents.agentcf.reflect import item_reflection_task, user_reflection_task
from agents.base import AgentResult
from graphs.common import service_input
from graphs.nodes import AgentCall, agent_node, step_node
from graphs.run_context import compile_method, current_context
from state.agentcf.context import AgentCFContext
from state.agentcf.state import InteractionInput, InteractionOutput, InteractionState
from state.blackboard import post
from tools.agentcf.store import loaded, read_only
from world.environment import Environment, environment_loaded, get_environment


def step_of(state: InteractionState) -> Interaction:
    """The replayed interaction the state is about."""
    first = state["order"][0] == state["positive"]
    return Interaction(state["user_id"], state["position"], state["positive"], state["negative"], first)


def current(state: InteractionState) -> tuple[str, dict[str, str]]:
    """The user's and the two items' memories as they stand now in this interaction."""
    before = state["memory_before"]
    return state.get("reflected_user") or before["user"], state.get("reflected_items") or before["items"]


def start(state: InteractionState, config: RunnableConfig) -> dict[str, Any]:
    """`interaction`: check the input, draw the negative, gather the memories it starts from."""
    request = service_input(InteractionInput, state, "interaction")
    ctx = current_context()
    assert isinstance(ctx, AgentCFContext)
    env = get_environment(ctx.dataset)
    env.require_user(request.user_id)
    step = interaction(env, request.user_id, request.position, ctx.seed)
    stored = read_only(ctx.agentcf_memory)
    order = shown_order(step)
    items = item_memories(env, stored, order)
    items.update({k: v for k, v in (request.item_memories or {}).items() if k in items})
    memory = request.user_memory if request.user_memory is not None else user_memory(stored, step.user_id)
    note = f"user {step.user_id}, position {step.position}: real [{step.positive}], sampled [{step.negative}]"
    return {
        "user_id": step.user_id,
        "position": step.position,
        "positive": step.positive,
        "negative": step.negative,
        "order": order,
        "memory_before": {"user": memory, "items": items},
        "trace": [post("interaction", note)],
    }


def start_blocks(state: InteractionState) -> bool:
    """The first interaction loads the dataset; without memories in the input the file is read."""
    ctx = current_context()
    given = state.get("user_memory") is not None
    return not environment_loaded(ctx.dataset) or not (given or loaded(getattr(ctx, "agentcf_memory", "")))


def prepare_choice(state: InteractionState, ctx: Any, env: Environment) -> AgentCall:
    """`user_agent`: the choice between the two items, with the memories as they stand."""
    memory, items = current(state)
    step = step_of(state)
    round_number = len(state.get("choices") or []) + 1

    def finish(result: AgentResult) -> dict[str, Any]:
        picked = result.output.choice
        correct = picked == step.positive
        entry = {
            "round": round_number,
            "choice": picked,
            "correct": correct,
            "explanation": result.output.explanation,
            "reflect": not correct or (round_number == 1 and ctx.agentcf_reflect_on_success),
            "again": not correct and round_number < ctx.agentcf_rounds,
        }
        verdict = "right" if correct else "wrong"
        note = f"[{result.usage.source}] round {round_number}: picked [{picked}] ({verdict})"
        return {"choices": [entry], "usage": [result.usage.as_dict()], "trace": [post("user_agent", note)]}

    return AgentCall(choice_task(env, ctx, memory, items, step), finish)


def prepare_user_reflection(state: InteractionState, ctx: Any, env: Environment) -> AgentCall:
    """`user_reflection`: the user agent rewrites its self-description."""
    memory, items = current(state)
    last = state["choices"][-1]
    task = user_reflection_task(env, ctx, memory, items, step_of(state), last["choice"], last["explanation"])

    def finish(result: AgentResult) -> dict[str, Any]:
        text = result.output.self_description
        return {
            "reflected_user": text,
            "usage": [result.usage.as_dict()],
            "trace": [post("user_reflection", f"[{result.usage.source}] {text}")],
        }

    return AgentCall(task, finish)


def prepare_item_reflection(state: InteractionState, ctx: Any, env: Environment) -> AgentCall:
    """`item_reflection`: the two item agents rewrite their descriptions (the rejected one's is kept
    unless `agentcf_update_negative`)."""
    memory, items = current(state)
    last, step = state["choices"][-1], step_of(state)
    task = item_reflection_task(env, ctx, memory, items, step, last["choice"], last["explanation"])

    def finish(result: AgentResult) -> dict[str, Any]:
        answer = result.output
        rejected = answer.rejected_description if ctx.agentcf_update_negative else items[step.negative]
        updated = {step.positive: answer.chosen_description, step.negative: rejected}
        note = f"[{result.usage.source}] [{step.positive}] {answer.chosen_description}"
        return {
            "reflected_items": updated,
            "usage": [result.usage.as_dict()],
            "trace": [post("item_reflection", note)],
        }

    return AgentCall(task, finish)


def route_after_choice(state: InteractionState) -> Literal["user_reflection", "finish"]:
    """Reflect after a wrong pick (and after a right first pick, when the context says so)."""
    return "user_reflection" if state["choices"][-1]["reflect"] else "finish"


def route_after_reflection(state: InteractionState) -> Literal["user_agent", "finish"]:
    """Choose again while the pick was wrong and rounds remain."""
    return "user_agent" if state["choices"][-1]["again"] else "finish"


def finish(state: InteractionState, config: RunnableConfig) -> dict[str, Any]:
    """`finish`: the memories the interaction proposes."""
    memory, items = current(state)
    rounds = state.get("choices") or []
    first = "right" if rounds and rounds[0]["correct"] else "wrong"
    note = f"{len(rounds)} round(s), first pick {first}; memories proposed for the training driver"
    return {"user_memory_after": memory, "item_memories_after": dict(items), "trace": [post("finish", note)]}


def build() -> StateGraph:
    """The uncompiled training graph."""
    builder = StateGraph(
        InteractionState,
        input_schema=InteractionInput,
        output_schema=InteractionOutput,
        context_schema=AgentCFContext,
    )
    agents = {
        "user_agent": prepare_choice,
        "user_reflection": prepare_user_reflection,
        "item_reflection": prepare_item_reflection,
    }
    first = step_node("interaction", start, blocking=start_blocks, item_vectors=False)
    builder.add_node("interaction", first)
    for name, prepare in agents.items():
        builder.add_node(name, agent_node(name, prepare, item_vectors=False))
    builder.add_node("finish", step_node("finish", finish, item_vectors=False))
    builder.add_edge(START, "interaction")
    builder.add_edge("interaction", "user_agent")
    builder.add_conditional_edges("user_agent", route_after_choice, ["user_reflection", "finish"])
    builder.add_edge("user_reflection", "item_reflection")
    builder.add_conditional_edges("item_reflection", route_after_reflection, ["user_agent", "finish"])
    builder.add_edge("finish", END)
    return builder


builder = build()
"""The training graph, uncompiled."""
graph = compile_method(builder, "agentcf_train")
