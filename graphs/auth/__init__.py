"""Who may call a served graph, and with what: the LangGraph server's custom auth.

`credentials` (API keys and JWTs -> a `Caller`: `user` as one user id, or the `service`), `policy`
(what each role may run, read and write), `limits` (bounded inputs, 422 naming the field) and
`server` (the `langgraph_sdk.Auth` instance langgraph.json names, read once at server start).
docs/deployment.md ("Security") has the threat model, the two modes and key rotation.
"""
