"""ChainRec's offline tool construction (paper Sec. 4.1 and appendix B): step-labelled CoT traces,
the correct-and-concise filter, step-label normalisation, MiniLM + k-means clustering with k chosen
by silhouette, and cluster cards mapping each cluster to a tool of the Tool Agent Library.

`recgraph chainrec mine-tools` (recgraph/chainrec/mine.py) runs the pipeline.
"""
