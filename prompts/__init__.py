"""Prompt templates, one module per method plus common pieces (`prompts.common`). Item and
user text enters prompts only through the quoting helpers there.

May import: `state`, `world`.
"""
