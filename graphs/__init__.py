"""The methods as LangGraph graphs, and the registry that names them.

Shared: `registry` (collects every room's `spec.py`; `python -m graphs.registry` prints
langgraph.json), `method_spec` (`MethodSpec` and `ServiceGraph`, with hook references checked when a
spec is made), `hooks` (the lifecycle hook types and `CallPlan`), `run_context` (`MethodGraph` and
`compile_method`: overrides applied in `runtime.context`; `current_context`), `nodes` (the one node
factory: `step_node`, `agent_node`), `common` (`validate_input`, every graph's first node),
`concurrency` (`run_concurrently`), `tracing` (LangSmith run names, tags and metadata) and `served`
(what `langgraph dev` serves).

One room per method family, each with its graph modules, `spec.py` (its registry entries and call
plans), its lifecycle hooks and a README.md:

- `graphs.baselines`: `classic` and `llm`, one `validate_input -> <name>_ranker` graph per baseline;
- `graphs.arag`: `graph` (ARAG and its two ablation graphs);
- `graphs.memrec`: `graph` (Stage R and ReRank), `write` (Stage W, the `memrec_write` service graph)
  and the benchmark warm-up, preload, overlap, perf and whole-run hooks;
- `graphs.amem4rec`: `graph` (ranking), `train_graph` (the `amem4rec_train` service graph),
  `training` (the round driver) and `hooks`;
- `graphs.chainrec`: `graph` (the planner loop), `builder` (the planner graph over a tool library),
  `learned` (the learned planner's training hook) and `reward`;
- `graphs.router`: `graph` (ChainRec's planner loop over ChainRec's tools plus other methods' agents
  as tools), `prepare` (the method tools' prerequisites) and `reward`;
- `graphs.agentcf`: `graph` (ranking), `train_graph` (the `agentcf_train` service graph), `training`
  (the step driver) and `hooks`.

May import: `agents`, `prompts`, `tools`, `state`, `world`. Never `bench` or `recgraph`.
"""
