"""TRL exports of the trajectories, for fine-tuning an LLM planner where a GPU is available.

- SFT (TRL "conversational prompt-completion"): one row per decision of each task's expert chain
  (the supported expert of policy_data.py: among the chains within `epsilon` of the task's best,
  the one with the highest mean reward over the exported tasks):
  `prompt` = the messages the zero-shot LLM planner is sent in that state (LlmPlanner.task, the
  same builder, the recorded memory), `completion` = one assistant message with the answer JSON
  {"action", "reason"}.
- DPO (TRL "conversational preference"): one row per (chosen, rejected) trajectory pair of a task
  whose AvgHR differs by at least `min_gap` (policy_data.gap_pairs: the higher reward chosen), at
  the first decision where they differ: `prompt` =
  the planner's messages in that shared state, `chosen` / `rejected` = the two answers.
Identical rows are written once. `README_SNIPPET` gives the paper's fine-tuning recipe.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.messages import BaseMessage

from agents.chainrec.offline.chains import chain_actions
from agents.chainrec.offline.policy_data import best_chain, chain_support, gap_pairs
from agents.chainrec.offline.rollout import row_view
from agents.chainrec.offline.train_config import TrainConfig
from agents.chainrec.online.planners import LlmPlanner

ROLES = {"system": "system", "human": "user", "ai": "assistant"}

README_SNIPPET = """\
## Fine-tuning an LLM planner on these exports (the ChainRec paper's recipe, Sec. 5.1)

The paper post-trains Qwen/Qwen3-8B as the planner with QLoRA: 4-bit NF4 base weights, bf16 compute,
gradient checkpointing, optimiser `paged_adamw_8bit`.

| stage | data | max length | epochs | learning rate | per-device batch | grad. accumulation | other |
|---|---|---|---|---|---|---|---|
| SFT | `sft.jsonl` (prompt / completion) | 512 | 3 | 2e-5 | 4 | 8 | |
| DPO | `dpo.jsonl` (prompt / chosen / rejected) | 2048 | 1 | 1e-5 | 2 | 16 | beta 0.1, warm-up 50 steps |

DPO continues from the SFT QLoRA adapter (the reference model is the SFT model).

The paper names no LoRA rank/alpha/dropout and no SFT warm-up; pick them yourself and say so.

With TRL (field names as in TRL's configs):
`SFTTrainer(model, train_dataset=load_dataset("json", data_files="sft.jsonl")["train"],
args=SFTConfig(max_length=512, num_train_epochs=3, learning_rate=2e-5, per_device_train_batch_size=4,
gradient_accumulation_steps=8, optim="paged_adamw_8bit", bf16=True, gradient_checkpointing=True),
peft_config=LoraConfig(...))`, then `DPOTrainer(sft_model, args=DPOConfig(max_length=2048,
num_train_epochs=1, learning_rate=1e-5, beta=0.1, per_device_train_batch_size=2,
gradient_accumulation_steps=16, warmup_steps=50, optim="paged_adamw_8bit", bf16=True,
gradient_checkpointing=True), train_dataset=load_dataset("json", data_files="dpo.jsonl")["train"],
peft_config=...)`, loading the base model with `BitsAndBytesConfig(load_in_4bit=True,
bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)`. The prompts are exactly what
`chainrec_llm_planner` sends, so the tuned model serves as its planner (`--planner-model
openai:<name>` behind an OpenAI-compatible server).
"""


def messages_json(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """LangChain messages as TRL's {"role", "content"} dicts."""
    return [{"role": ROLES[m.type], "content": str(m.content)} for m in messages]


def answer(action: str, reason: str) -> list[dict[str, str]]:
    """One assistant message holding the planner's JSON answer."""
    return [{"role": "assistant", "content": json.dumps({"action": action, "reason": reason})}]


def planner_prompt(row: dict[str, Any], used: Sequence[str], max_steps: int) -> list[dict[str, str]]:
    """The LLM planner's messages in this task's state after `used` ran."""
    return messages_json(LlmPlanner().task(row_view(row, used, max_steps)).messages)


def _reason(action: str, value: float, preferred: bool) -> str:
    what = "stop and rank now" if action == "CandidateRank" else f"call {action} next"
    verdict = "the better-scored" if preferred else "a worse-scored"
    return f"To {what}: {verdict} plan from this state (trajectory reward {value:.3f})."


def sft_rows(
    rows: Sequence[dict[str, Any]], max_steps: int, epsilon: float = TrainConfig.expert_epsilon
) -> Iterator[dict[str, Any]]:
    """SFT rows: every decision of each task's supported expert chain."""
    support = chain_support(rows)
    for row in rows:
        code, value = best_chain(row, support, epsilon)
        actions = chain_actions(row["tools"], code)
        for step, action in enumerate(actions):
            yield {
                "prompt": planner_prompt(row, actions[:step], max_steps),
                "completion": answer(action, _reason(action, value, True)),
            }


def dpo_rows(
    rows: Sequence[dict[str, Any]],
    max_steps: int,
    per_task: int,
    seed: int,
    min_gap: float = TrainConfig.min_gap,
) -> Iterator[dict[str, Any]]:
    """DPO rows: each (chosen, rejected) pair with a real AvgHR gap, at its first differing decision."""
    rng = np.random.default_rng(seed)
    for row in rows:
        rewards = {code: value for code, _, value in row["chains"]}
        for chosen, rejected, _ in gap_pairs(row, per_task, rng, min_gap):
            a, b = chain_actions(row["tools"], chosen), chain_actions(row["tools"], rejected)
            split = next(i for i in range(min(len(a), len(b))) if a[i] != b[i])
            yield {
                "prompt": planner_prompt(row, a[:split], max_steps),
                "chosen": answer(a[split], _reason(a[split], rewards[chosen], True)),
                "rejected": answer(b[split], _reason(b[split], rewards[rejected], False)),
            }


def write_jsonl(path: Path, records: Iterator[dict[str, Any]]) -> int:
    """Write distinct records, one JSON object a line (built beside, then moved); returns the count."""
    seen: set[str] = set()
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for record in records:
            line = json.dumps(record, ensure_ascii=False)
            if line not in seen:
                seen.add(line)
                handle.write(line + "\n")
    partial.replace(path)
    return len(seen)
