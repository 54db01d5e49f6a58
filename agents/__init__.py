"""The agents: prompt + typed answer + validation/repair + deterministic fallback.

Shared LLM machinery at the top: `base` (the agent pattern: one call with retries, repair and the
fallback), `backends` (a chat model per `--llm` backend), `local_llm` (the bundled SmolLM2 through
llama.cpp), `validation` and `ranking` (answer checks; rankings become permutations of exactly the
candidates), `usage` (calls, tokens, cost per agent) and `breaker` (the endpoint's circuit breaker).

One room per method family:

- `agents.baselines`: the classic rankers' scoring rules (`classic`) and the single-call LLM rankers
  (`llm`);
- `agents.arag`: ARAG's user understanding, NLI, context summary and item ranker agents, their
  deterministic signals and extractive fallbacks;
- `agents.memrec`: MemRec's curation (features, rule language, shipped rule sets, domain
  statistics), Stage R synthesis, ReRank, Stage W writes, the LM_Mem rule writer and initial memories;
- `agents.amem4rec`: AMEM4Rec's windows, extractor, similarity validator with Eq. 7's policy,
  semantic validator, evolver, retrieval and ranker;
- `agents.chainrec`: ChainRec in three parts: `online` (the Tool Agent Library, the feasibility mask,
  the planners, CandidateRank), `offline` (training tasks, trajectories, reward, SFT/DPO policy
  training, the TRL export) and `mining` (tool construction from chain-of-thought traces);
- `agents.router`: the router's `method_tools` (MemRec's, AMEM4Rec's, ARAG's and item-kNN's evidence
  as library tools), its catalog (ChainRec's tools plus the method tools, with planned costs) and its
  rule planner;
- `agents.agentcf`: AgentCF's user agent (choice, reflection, ranking) and item agents (reflection),
  the training plan and the deterministic term-level memories of its fallbacks.

May import: `prompts`, `tools`, `state`, `world`.
"""
