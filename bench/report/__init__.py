"""A run's outputs: metrics.json, report.md, report.png, the console table and the sections they
hold (planned calls, quality against cost, router headroom, fairness, library checks). See README.md."""
