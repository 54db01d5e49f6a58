"""What a run will cost before its first call: model prices (`prices`), the tokens each method's
prompts take, measured on a sample of users against the in-process simulator (`probe`), and the
plan printed per method and in total (`bench.cost.planned_calls`)."""
