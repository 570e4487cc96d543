"""When a command may decorate its output for a person: one rule for ``nova-gitops`` and ``nova-agent``.

Decoration (rich progress, rich tables) is on only when the stream it goes to is a terminal, ``NO_COLOR`` is
unset (no-color.org: any value), ``TERM`` is not ``dumb`` and the command was not asked to be quiet. Anything
else prints exactly what it printed before: scripts, pipes and CI logs never see a spinner or a box.
``NOVA_GITOPS_FORCE_TERMINAL=1`` (``nova-gitops``) or ``NOVA_AGENT_FORCE_TERMINAL=1`` (``nova-agent``)
decorates as on a terminal whatever the stream is (tests, screen recordings); ``NO_COLOR`` and quiet still
win. Each program reads only variables of its own prefix (issue 22: ``NOVA_`` alone is Elotl Nova's), so
the program passes its variable in. The drawing itself (rich) stays in each command line's own module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final, TextIO

FORCE_TERMINAL: Final = "NOVA_GITOPS_FORCE_TERMINAL"
"""``nova-gitops``'s variable."""
AGENT_FORCE_TERMINAL: Final = "NOVA_AGENT_FORCE_TERMINAL"
"""``nova-agent``'s variable."""


def forced(environ: Mapping[str, str] | None = None, *, variable: str = FORCE_TERMINAL) -> bool:
    """``variable`` (the program's ``…_FORCE_TERMINAL``) is set (to anything but ``0``)."""
    environ = os.environ if environ is None else environ
    return environ.get(variable, "") not in ("", "0")


def decorated(
    stream: TextIO,
    *,
    quiet: bool = False,
    environ: Mapping[str, str] | None = None,
    variable: str = FORCE_TERMINAL,
) -> bool:
    """Whether output to ``stream`` may be decorated (see the module docstring); ``variable`` is the
    program's ``…_FORCE_TERMINAL``."""
    environ = os.environ if environ is None else environ
    if quiet or environ.get("NO_COLOR") or environ.get("TERM") == "dumb":
        return False
    if forced(environ, variable=variable):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
