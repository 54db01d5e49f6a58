"""`recgraph reproduce PAPER`: a paper's protocol run through the bench machinery, its main tables
written with the published numbers beside ours.

- `papers`: the published numbers and protocol of each paper (`graphs/<paper>/published.json`);
- `plan`: which bench runs a paper needs (scenarios, methods, candidates, users);
- `table`: the paper's tables with our metrics and intervals beside the published ones.

The driver that runs the bench command per scenario is `recgraph/reproduce_run.py` (the CLI layer).
"""
