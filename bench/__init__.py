"""recgraph package."""
