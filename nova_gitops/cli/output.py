"""Printing lists the way kubectl users expect: aligned tables, ``-o yaml|json``, ``-o jsonpath=EXPR``."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click
import yaml

from nova_gitops.api import texts
from nova_gitops.cli import guarding
from nova_gitops.errors import UserError


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned columns; a cell is data: on one line, its hidden characters escapes (``api.texts.one_line``),
    so a newline in a reason cannot forge a row."""
    rows = [[texts.one_line(str(cell)) for cell in row] for row in rows]
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


def one_lined(document: Any) -> Any:
    """``document`` with each string in it on one line, hidden characters escaped (``api.texts.one_line``):
    what a table or a headline prints of a report's reason, so a newline in it forges no line."""
    if isinstance(document, str):
        return texts.one_line(document)
    if isinstance(document, dict):
        return {key: one_lined(value) for key, value in document.items()}
    if isinstance(document, list | tuple):
        return [one_lined(value) for value in document]
    return document


def styled(text: str, *, colour: bool, err: bool = False) -> None:
    """Our own styled text (``rendering.diffformats.to_text(colour=True)``: its data already made visible)
    written past the guard (``cli.guarding``), which would show our colour codes as escapes too; click
    strips the colours where ``colour`` is off."""
    stream = guarding.raw(sys.stderr if err else sys.stdout)
    click.echo(text, file=stream, nl=False, color=colour)


def json_text(document: Any, **options: Any) -> str:
    """``document`` as JSON (``json.dumps`` with ``options``), its hidden characters written as JSON's
    own ``\\uXXXX`` escapes: a terminal shows them, a program reads back the very strings."""
    return texts.visible(json.dumps(document, **options), keep="\n")


class _YamlDumper(yaml.CSafeDumper):
    """Double-quotes each string that holds a hidden character: the only style where its escape reads back
    as the character."""


def _represent_text(dumper: yaml.CSafeDumper, data: str) -> yaml.ScalarNode:
    style = '"' if texts.has_hidden(data, keep="\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_YamlDumper.add_representer(str, _represent_text)


def yaml_text(document: Any, *, allow_unicode: bool = False, sort_keys: bool = False) -> str:
    """``document`` as YAML: a string holding a hidden character is double-quoted and the character
    written as its YAML escape, so a terminal shows it and a program reads back the very string."""
    dumped: str = yaml.dump(document, Dumper=_YamlDumper, sort_keys=sort_keys, allow_unicode=allow_unicode)
    return texts.visible(dumped, keep="\n", escape=texts.yaml_escape)


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
        click.echo(json_text(document, indent=2, sort_keys=False))
    elif output == "yaml":
        click.echo(yaml_text(document, allow_unicode=True), nl=False)
    elif output.startswith("jsonpath="):
        click.echo(_jsonpath(output.removeprefix("jsonpath="), document))
    else:
        raise UserError(f"unknown output format {output!r}: use table, yaml, json or jsonpath=EXPR")
