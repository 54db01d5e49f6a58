"""AgentRecBench's release layout: one task folder per scenario, environment data per scenario.

The benchmark's public release (its dataset card) holds
    task/classic/, task/user_cold_start/, task/item_cold_start/, task/long_term/, task/short_term/
each with the task and ground-truth files world/loaders/agentsociety_tasks.py reads (`tasks/` +
`groundtruth/`, or flat), directly or in one subfolder per domain (`amazon/`, `goodreads/`, `yelp/`),
and the environment data the agent acts in: `output_data_all/` (item.json, review.json, user.json)
for classic and the cold-start tasks, `output_data_long/` and `output_data_short/` for the
evolving-interest ones (their reviews cut to the benchmark's windows). `item.json` + `review.json`
at the root stand in for `output_data_all/`.

A run of one scenario on such a folder (`scenario_spec`) loads the scenario's own view,
`<root>#task:<scenario>[:<domain>]`: the scenario's environment data with that scenario's task
folder fixing the split and the candidates. Its cases are the task files, and nothing more is hidden
on top (`Dataset.cases_from` says so; world.environment.Environment.history then shows the whole
history the view holds): the benchmark built the scenario into its data. Folders without this
layout run under recgraph's scenario rules (world/scenarios.py).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from world.data import Dataset
from world.errors import DatasetNotFoundError, ProtocolError

TASK_MARK = "#task:"
"""Separates a layout root from the scenario view it names (`<root>#task:<scenario>[:<domain>]`)."""
DOMAIN_MARK = "#domain:"
"""Picks one domain of a release whose task folders hold several (`<root>#domain:amazon`)."""
SCENARIO_FOLDERS = {
    "classic": "classic",
    "cold_user": "user_cold_start",
    "cold_item": "item_cold_start",
    "evolving_long": "long_term",
    "evolving_short": "short_term",
}
"""recgraph's scenario -> AgentRecBench's task folder."""
ENVIRONMENT_FOLDERS = {"evolving_long": "output_data_long", "evolving_short": "output_data_short"}
"""The scenarios with environment data of their own; the others use `ALL_FOLDER`."""
ALL_FOLDER = "output_data_all"
CORPUS = "corpus"
"""The view a planner's training corpus is drawn from (`<root>#task:corpus`, one per release, shared
by its domains): `ALL_FOLDER`'s data without any task and without any interaction of a user some
task folder evaluates (their ground truth, and the older history an evolving scenario's data hides
from them), so its users are the training users (`task_users` names the others)."""


def is_layout(root: Path) -> bool:
    """Whether `root` holds AgentRecBench's per-scenario task folders."""
    task = root / "task"
    return task.is_dir() and any((task / name).is_dir() for name in SCENARIO_FOLDERS.values())


def split_domain(spec: str) -> tuple[str, str]:
    """(`spec` without its `#domain:` mark, the domain or "")."""
    root, mark, domain = spec.partition(DOMAIN_MARK)
    return (root, domain) if mark else (spec, "")


def scenario_spec(spec: str, scenario: str) -> str:
    """The dataset spec `scenario` runs on: the scenario's view when `spec` (a folder, optionally
    `#domain:<name>`) has the layout, else `spec` unchanged (recgraph's scenario rules)."""
    root, domain = split_domain(spec)
    if TASK_MARK in root or not is_layout(Path(root).expanduser()):
        if domain:
            raise DatasetNotFoundError(f"{root!r} has no AgentRecBench task/ folders to pick {domain!r} from")
        return spec
    if scenario not in SCENARIO_FOLDERS:
        known = ", ".join(SCENARIO_FOLDERS)
        raise ProtocolError(f"AgentRecBench's layout at {root} has no task folder for {scenario!r} ({known})")
    return f"{root}{TASK_MARK}{scenario}" + (f":{domain}" if domain else "")


@lru_cache(maxsize=64)
def corpus_spec(spec: str) -> str | None:
    """The training-corpus view (`CORPUS`) of the release a view spec (or a layout root, optionally
    `#domain:<name>`) names, the same for every scenario and domain of it; None for other specs."""
    if TASK_MARK in spec:
        root = spec.partition(TASK_MARK)[0]
    else:
        root = split_domain(spec)[0]
        if "#" in root or not is_layout(Path(root).expanduser()):
            return None
    return f"{root}{TASK_MARK}{CORPUS}"


def parse_view(spec: str) -> tuple[Path, str, str]:
    """(root, scenario or `CORPUS`, domain) of a view spec made by `scenario_spec` / `corpus_spec`."""
    root, _, rest = spec.partition(TASK_MARK)
    scenario, _, domain = rest.partition(":")
    if scenario not in (*SCENARIO_FOLDERS, CORPUS):
        raise DatasetNotFoundError(f"{spec!r}: {scenario!r} is not an AgentRecBench scenario")
    return Path(root).expanduser(), scenario, domain


def task_folder(root: Path, scenario: str, domain: str = "") -> Path:
    """The folder holding `scenario`'s task files (the domain's when the folder has several)."""
    from world.loaders.agentsociety_tasks import find_tasks

    folder = root / "task" / SCENARIO_FOLDERS[scenario]
    if not folder.is_dir():
        raise DatasetNotFoundError(f"{root}: AgentRecBench layout without task/{SCENARIO_FOLDERS[scenario]}/")
    if domain:
        chosen = folder / domain
        if not find_tasks(chosen):
            raise DatasetNotFoundError(f"{folder}: no task files for domain {domain!r}")
        return chosen
    if find_tasks(folder):
        return folder
    domains = sorted(p.name for p in folder.iterdir() if p.is_dir() and find_tasks(p))
    if len(domains) == 1:
        return folder / domains[0]
    if not domains:
        raise DatasetNotFoundError(f"{folder}: no task_<n>.json files (in tasks/ or a domain folder)")
    raise DatasetNotFoundError(
        f"{folder} holds several domains ({', '.join(domains)}): pass {root}{DOMAIN_MARK}<one of them>"
    )


def environment_folder(root: Path, scenario: str) -> Path:
    """The environment data `scenario`'s tasks are posed in."""
    name = ENVIRONMENT_FOLDERS.get(scenario, ALL_FOLDER)
    for folder in (root / name, *((root,) if name == ALL_FOLDER else ())):
        if (folder / "item.json").is_file() and (folder / "review.json").is_file():
            return folder
    raise DatasetNotFoundError(
        f"{root}: AgentRecBench layout without {name}/item.json and review.json ({scenario}'s environment)"
    )


def load_view(spec: str) -> Dataset:
    """The dataset one scenario's view names: its environment data, split and candidates by its
    task folder, named `<root>-<task folder>[-<domain>]` with `cases_from` saying where the cases
    come from."""
    from world.loaders.agentsociety import load_agentsociety

    root, scenario, domain = parse_view(spec)
    if scenario == CORPUS:
        return load_corpus(root)
    tasks = task_folder(root, scenario, domain)
    data = load_agentsociety(environment_folder(root, scenario), tasks_from=tasks)
    label = f"task/{SCENARIO_FOLDERS[scenario]}" + (f"/{tasks.name}" if tasks.parent.name != "task" else "")
    count = len(data.presplit or {})
    name = f"{root.name}-{SCENARIO_FOLDERS[scenario]}" + (f"-{domain}" if domain else "")
    return replace(
        data, name=name, source=f"{root}{TASK_MARK}{scenario}:{domain}",
        cases_from=f"AgentRecBench {label} ({count} tasks)",
    )  # fmt: skip


def task_folders(root: Path) -> list[Path]:
    """Every folder of task files in the release: each scenario's, or each of its domain folders."""
    from world.loaders.agentsociety_tasks import find_tasks

    folders = []
    for name in SCENARIO_FOLDERS.values():
        folder = root / "task" / name
        if folder.is_dir():
            inside = sorted(p for p in folder.iterdir() if p.is_dir() and find_tasks(p))
            folders += [folder] if find_tasks(folder) else inside
    return folders


def task_targets(root: Path) -> dict[str, set[str]]:
    """user -> the ground-truth items some task folder of the release (any scenario, any domain)
    evaluates them on."""
    from world.loaders.agentsociety_json import read_object
    from world.loaders.agentsociety_tasks import find_tasks

    targets: dict[str, set[str]] = {}
    for folder in task_folders(root):
        for task_path, truth_path in find_tasks(folder):
            user = read_object(task_path)[0].get("user_id")
            truth = read_object(truth_path)[0].get("ground truth") if truth_path.is_file() else None
            if user is not None:
                targets.setdefault(str(user), set()).update(() if truth is None else (str(truth),))
    return targets


def task_users(root: Path) -> frozenset[str]:
    """Every user some task folder of the release evaluates, in any scenario and any domain (the
    users a training corpus leaves out)."""
    return frozenset(task_targets(root))


def load_corpus(root: Path) -> Dataset:
    """The `CORPUS` view: `ALL_FOLDER`'s data without tasks and without any interaction of a task user
    (nothing any scenario of any domain evaluates, or hides from the user it evaluates, is trained
    on). One corpus per release: its domains share it, as the paper's one planner serves all cells."""
    from world.loaders.agentsociety import load_agentsociety

    # a folder with no task files: the corpus poses no benchmark task (its tasks are drawn by rule)
    data = load_agentsociety(environment_folder(root, "classic"), tasks_from=root / "task" / "none")
    evaluated = task_users(root)
    kept = [e for e in data.interactions if e.user_id not in evaluated]
    return replace(data, name=f"{root.name}-{CORPUS}", source=f"{root}{TASK_MARK}{CORPUS}", interactions=kept)
