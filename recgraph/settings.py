"""Process-wide settings applied before anything heavy is imported."""

from __future__ import annotations

import os

OFFLINE_DEFAULTS = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
    "ANONYMIZED_TELEMETRY": "False",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
}


def apply_offline_defaults() -> None:
    """Never reach for a model hub or telemetry unless the user set otherwise."""
    for key, value in OFFLINE_DEFAULTS.items():
        os.environ.setdefault(key, value)
