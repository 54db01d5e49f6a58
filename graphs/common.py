"""What every recommender graph shares: the validating first node and the run's Context."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ValidationError

from graphs.nodes import step_node
from graphs.run_context import current_context
from state.base_state import BaseState
from state.blackboard import post
from state.contract import InvalidRecInput, RecInput
from world.environment import environment_loaded, get_environment

ModelT = TypeVar("ModelT", bound=BaseModel)

VALIDATE_NODE = "validate_input"


def describe_validation_error(error: ValidationError) -> str:
    """One line naming each offending field and value."""
    parts = []
    for issue in error.errors():
        field = ".".join(str(p) for p in issue["loc"]) or "input"
        message = issue["msg"].removeprefix("Value error, ")
        parts.append(f"{field}: {message}")
    return "invalid RecInput: " + "; ".join(parts)


def service_input(model: type[ModelT], state: Mapping[str, Any], label: str) -> ModelT:
    """A service graph's input read back from its state and validated by `model` (its fields that
    are set), or one line naming `label` (InvalidRecInput)."""
    raw = {key: state[key] for key in model.model_fields if state.get(key) is not None}
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise InvalidRecInput(describe_validation_error(error).replace("RecInput", label)) from None


def check_request(state: BaseState, config: RunnableConfig) -> dict[str, Any]:
    """First node of every graph: check the request against `RecInput` and the dataset.

    Raises `InvalidRecInput` naming the offending value (unknown user or item id,
    empty or duplicate candidates); otherwise writes the visible history.
    """
    raw = {key: state[key] for key in RecInput.model_fields if state.get(key) is not None}
    try:
        request = RecInput.model_validate(raw)
    except ValidationError as error:
        raise InvalidRecInput(describe_validation_error(error)) from None
    env = get_environment(current_context().dataset)
    env.require_user(request.user_id)
    if request.candidates is not None:
        env.require_items(request.candidates)
    history = env.history(request.user_id, request.scenario)
    note = f"user {request.user_id}: {len(history)} visible history items ({request.scenario})"
    return {
        "user_id": request.user_id,
        "candidates": request.candidates,
        "scenario": request.scenario,
        "history": history,
        "retrieve_mode": request.candidates is None,
        "trace": [post(VALIDATE_NODE, note)],
    }


def dataset_not_loaded(state: BaseState) -> bool:
    """True while the run's dataset is not loaded yet: the first request reads and splits it."""
    return not environment_loaded(current_context().dataset)


validate_input = step_node(VALIDATE_NODE, check_request, blocking=dataset_not_loaded, item_vectors=False)
"""The shared first node of every graph: on the loop under `ainvoke` once the dataset is loaded,
in a worker thread for the request that loads it."""
