"""The `recgraph` command line (thin wrappers over `bench` and `graphs`) and its settings.

May import everything.
"""
