"""What a run will cost before its first call: model prices (`prices`), the usage read from a run's
metrics (`measured`), what the cost probe measured per method (`probed`; the probe runs the bench
under the loopback simulator, so it is `bench.run.cost_probe`), and the plan printed per method and in
total (`planned_calls`, `planned_training`). See README.md."""
