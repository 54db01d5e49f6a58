"""A loopback OpenAI-compatible LLM server with fault injection, for the tests, `--llm sim` and the
cost probe: no request leaves the machine. See README.md.

May import: nothing of the project (the standard library only).
"""
