"""Durations as people type them on a command line: ``30s``, ``2m``, ``1h30m``, ``250ms``, ``1.5h``.

One syntax for every time flag of ``nova-gitops`` and ``nova-agent`` (``--interval``, ``--debounce``,
``--git-timeout``, ``--pending-timeout`` …), so a value that works for one works for all of them. It is Go's
``time.ParseDuration`` (what kubectl and Nova's own flags take) without the sign and without ``us``/``ns``:
one or more ``<number><unit>`` with units ``h``, ``m``, ``s`` and ``ms``, numbers whole or decimal. A plain
number is seconds, because every one of these flags took plain seconds before it took units.

A RolloutStrategy's ``bakeTime``/``healthTimeout`` (``api.rollouts``) accept the stricter subset of whole
``h``/``m``/``s``: a value reviewed in a pull request should not need decimals. Both print with
``format_duration``.

The click parameter types that use this live next to each CLI (``nova_gitops.cli.options.Duration``,
``nova_agent.cli.Duration``): this module is pure and knows nothing of click.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Final

UNIT_SECONDS: Final = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_PART: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|h|m|s)")
_PLAIN: Final = re.compile(r"\d+(?:\.\d*)?|\.\d+")
MAX_SECONDS: Final = 366 * 24 * 3600.0
"""A year: anything longer is a typo (``--interval 30000000``), and ``timedelta`` has its own limits."""
EXAMPLES: Final = "30s, 2m, 1h30m or 500ms (or plain seconds)"


class DurationError(ValueError):
    """``text`` is not a duration; the message quotes it and shows what one looks like."""


def parse_seconds(text: str) -> float:
    """The number of seconds ``text`` stands for. Raises ``DurationError``.

    >>> parse_seconds("1h30m"), parse_seconds("2m"), parse_seconds("0.3"), parse_seconds("250ms")
    (5400.0, 120.0, 0.3, 0.25)
    """
    stripped = text.strip()
    if _PLAIN.fullmatch(stripped):
        seconds = float(stripped)
    else:
        seconds, position = 0.0, 0
        for match in _PART.finditer(stripped):
            if match.start() != position:
                break
            seconds += float(match.group(1)) * UNIT_SECONDS[match.group(2)]
            position = match.end()
        if not stripped or position != len(stripped):
            raise DurationError(f"{text!r} is not a duration: write it like {EXAMPLES}")
    if seconds > MAX_SECONDS:
        raise DurationError(f"{text!r} is longer than a year: write it like {EXAMPLES}")
    return seconds


def parse_duration(text: str) -> timedelta:
    """``parse_seconds`` as a ``timedelta``. Raises ``DurationError``."""
    return timedelta(seconds=parse_seconds(text))


def format_seconds(seconds: float) -> str:
    """The shortest text ``parse_seconds`` reads back as ``seconds`` (to the millisecond): ``1h30m``,
    ``2m``, ``0s``, ``300ms``, ``1m0.5s``; what ``--help`` shows as a default."""
    millis = round(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    whole, millis = divmod(millis, 1000)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    if millis and not whole and not text:
        return f"{millis}ms"
    if millis:
        text += f"{whole}.{millis:03d}".rstrip("0") + "s"
    elif whole:
        text += f"{whole}s"
    return text or "0s"
