"""Printing lists the way kubectl users expect: aligned tables, ``-o yaml|json``, ``-o jsonpath=EXPR``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from nova_gitops.errors import UserError


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)]
    lines = [
        "   ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip()
        for row in [headers, *rows]
    ]
    return "\n".join(lines)


def show_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, quiet: bool = False) -> None:
    """``table`` on stdout; a rich table instead on a terminal, unless ``quiet`` (``cli.terminal``)."""
    from nova_gitops.cli import terminal

    if not terminal.print_table(headers, rows, quiet=quiet):
        click.echo(table(headers, rows))


def _jsonpath(expression: str, document: dict[str, Any]) -> str:
    from jsonpath_ng.exceptions import JsonPathParserError
    from jsonpath_ng.ext.parser import parse

    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    text = text.removeprefix("$").removeprefix(".")
    try:
        found = [match.value for match in parse(text or "$").find(document)]
    except (JsonPathParserError, Exception) as error:
        raise UserError(f"jsonpath {expression!r} is not valid: {error}") from error
    return " ".join(json.dumps(value) if isinstance(value, dict | list) else str(value) for value in found)


def emit(
    output: str,
    items: list[dict[str, Any]],
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    quiet: bool = False,
) -> None:
    """Print ``items`` in the requested ``output`` format (a table is a rich one on a terminal, unless
    ``quiet``: ``cli.terminal``)."""
    document = {"apiVersion": "v1", "kind": "List", "items": items}
    if output == "table":
        if rows:
            show_table(headers, rows, quiet=quiet)
        else:
            click.echo("No resources found.")
    elif output == "json":
        click.echo(json.dumps(document, indent=2, sort_keys=False))
    elif output == "yaml":
        import yaml

        click.echo(
            yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True), nl=False
        )
    elif output.startswith("jsonpath="):
        click.echo(_jsonpath(output.removeprefix("jsonpath="), document))
    else:
        raise UserError(f"unknown output format {output!r}: use table, yaml, json or jsonpath=EXPR")
