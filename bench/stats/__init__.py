"""The statistics over per-user metrics: intervals and paired tests (`significance`, `sign_flips`,
`holm`), run-against-run comparisons (`compare`), a method's summary, its fallback checks and the
fault table. See README.md."""
