"""The evaluation protocol: what a run evaluates (`spec`), which users and candidates (`plan`,
`eligibility`, `candidates`, `retrieval_candidates`), the `--set` knobs and how a ranking is scored
(`metrics`). See README.md."""
