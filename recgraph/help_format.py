"""Help texts that show every option's default and, for `bench`, the registered methods."""

from __future__ import annotations

import argparse


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Appends "(default: X)" to an option's help unless the help already names its default or there
    is none to show (None, False, an empty string); keeps the line breaks of multi-line texts (the
    method list) and wraps the others."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        nothing = default is None or default is False or default == "" or default is argparse.SUPPRESS
        if nothing or "default" in text or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def methods_epilog(usage: str = "--methods a,b,... or all") -> str:
    """The registered methods, one per line with their kind and summary (for `bench --help` and
    `recommend --help`; `usage` says how the command names them)."""
    from graphs.registry import METHODS

    width = max(map(len, METHODS))
    lines = [f"  {name:<{width}}  {spec.kind:<7}  {spec.summary}" for name, spec in METHODS.items()]
    return f"methods ({usage}):\n" + "\n".join(lines)
