"""The machinery that runs methods: the batch runner, one method's ranking (`invoke`), local worker
processes, remote replicas, checkpoints, crash handling, preloads, tracing, `bench perf` and the
cost probe. See README.md."""
