"""Methods' lifecycle hooks, called generically by the harness through the registry:
`prepare` (training or warm-up before ranking), `perf_extras` (method-specific perf figures) and
helpers behind the methods' CLI subcommands. The hook types are in `graphs.lifecycle.hooks`.

May import: `graphs`, `agents`, `tools`, `state`, `world`. Never `bench` or `recgraph`.
"""
