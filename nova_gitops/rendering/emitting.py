"""YAML text for Kubernetes data, fast enough for the bulk render path.

First version: delegates to PyYAML's C dumper so the renderer can call ``dump`` and ``scalar`` now; a
specialised emitter replaces the body without changing the API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml


def dump(obj: Mapping[str, Any]) -> str:
    """One YAML document (no ``---``), block style, source key order, ending with a newline."""
    return yaml.dump(
        dict(obj),
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=2**31 - 1,
    )


def scalar(value: str | int | float | bool | None) -> str:
    """The YAML text of one scalar exactly as ``dump`` writes it as a mapping value."""
    text = yaml.dump(
        {"k": value},
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=2**31 - 1,
    )
    return text[len("k: ") :].rstrip("\n")
