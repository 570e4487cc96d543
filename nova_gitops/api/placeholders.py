"""Unexpanded ``${VAR}`` variables: a template read as a manifest says so first (issue 22, item 3).

Every manifest of try-nova's ``examples/`` names its clusters as ``${NOVA_WORKLOAD_CLUSTER_1}``, and Nova's
instructions pass each file through ``envsubst`` before ``kubectl apply``. Read as it is, the file holds the
text ``${NOVA_WORKLOAD_CLUSTER_1}`` where a cluster name or a label value belongs, and every such field was
refused with a message about names (``invalid label value '${NOVA_WORKLOAD_CLUSTER_1}'``), true but not what
to do. A problem whose message, or whose line of the file, holds such a variable now starts by saying that
the file holds an unexpanded variable and that Nova's examples pass through ``envsubst`` first; the original
message follows. A variable that leads to no problem (an image tag, an environment value) is left alone: it
may be meant literally.

Pure: ``Problem`` in, ``Problem`` out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from nova_gitops.api.problems import Problem

PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=+?][^}\n]{0,80})?\}")
"""``${NAME}``, and the default forms ``envsubst`` also expands (``${NAME:-default}``)."""
NOTE = "the file holds an unexpanded variable "
"""How a noted problem's message starts."""


def placeholder_in(text: str | None) -> str | None:
    """The first ``${...}`` variable of ``text``; None when it holds none."""
    found = PLACEHOLDER.search(text) if text else None
    return found.group(0) if found else None


def noted(problem: Problem) -> Problem:
    """``problem``, its message first naming the unexpanded variable its message or quoted line holds."""
    variable = placeholder_in(problem.message) or placeholder_in(problem.quoted)
    if variable is None or problem.message.startswith(NOTE):
        return problem
    note = (
        f"{NOTE}{variable}: Nova's examples pass through envsubst first (envsubst < "
        f"{problem.location.file}); as written, "
    )
    return replace(problem, message=note + problem.message)


def noted_all(problems: Iterable[Problem]) -> list[Problem]:
    """``noted`` on each of ``problems``."""
    return [noted(problem) for problem in problems]
