"""Problems found in user input, each pointing at a file and line.

Validation never stops at the first problem: every check appends to a list of ``Problem`` and the caller
raises ``errors.InputError`` with all of them, before anything is written.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, replace
from enum import Enum


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class SourceLocation:
    """Where a document starts: a file name relative to the source root and a 1-based line."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the input. ``field`` is a dotted path inside the document, when known;
    ``subject`` names the object (``SchedulePolicy bad-split``) when the document is one of Nova's kinds, so
    a message read away from its file still says which object it is about.

    Problems sort by file, line, message, field and severity (``sort_key``): a generated ordering would
    compare a missing field with a present one, or two severities, and raise on a full tie."""

    location: SourceLocation
    message: str
    field: str | None = None
    severity: Severity = Severity.ERROR
    subject: str | None = None
    # Where the loader knows it (a YAML mark, a field's key): the 1-based column and the line's text, which
    # ``pointed`` shows with a caret. Not compared: they add to the location, they make no other problem.
    column: int | None = dataclasses.field(default=None, compare=False)
    quoted: str | None = dataclasses.field(default=None, compare=False)

    def sort_key(self) -> tuple[SourceLocation, str, str, str]:
        return (self.location, self.message, self.field or "", self.severity.value)

    def __lt__(self, other: Problem) -> bool:
        return self.sort_key() < other.sort_key()

    def __str__(self) -> str:
        where = f"{self.location}: "
        what = f"{shortened(self.field)}: " if self.field else ""  # a field path can hold a huge unknown key
        tag = "warning: " if self.severity is Severity.WARNING else ""
        about = f"{shortened(self.subject)}: " if self.subject else ""
        return f"{where}{tag}{about}{what}{self.message}"

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def pointed(self) -> str:
        """The problem as a compiler shows it, where its column is known: ``file:line:column:`` (the
        ``file:line`` that ``str`` starts with, the column after it), then the offending line and a caret.
        ``str`` stays one ``file:line: message`` line, for warnings, logs and messages read by programs.

        Example (``app.yaml:7:5:`` then the line ``    replicas: three`` then ``    ^`` under its ``r``)."""
        if not self.column:
            return str(self)
        text = f"{self.location}:{self.column}: {str(self).removeprefix(f'{self.location}: ')}"
        if self.quoted is None:
            return text
        under = "".join("\t" if char == "\t" else " " for char in self.quoted[: self.column - 1])
        return f"{text}\n    {self.quoted}\n    {under}^"


QUOTED_LINE_CHARS = 200
"""A longer line is not quoted under its problem (its caret would point past what a terminal shows)."""
_SECRET_KIND = re.compile(r"^[ \t-]*kind:\s*[\"']?Secret[\"']?\s*(?:#.*)?$", re.MULTILINE)


def quotable_lines(text: str) -> list[str] | None:
    """The lines of a file's ``text``, to quote under its problems (``quoted_line``); None when the file
    holds a Secret: a Secret's values are never printed (docs/design.md §9), and a line of its file could be
    one. Split once per file: a file can have many problems."""
    return None if _SECRET_KIND.search(text) else text.splitlines()


def quoted_line(lines: list[str] | None, line: int) -> str | None:
    """Line ``line`` (1-based) of ``quotable_lines``' result; None when there is none to quote or it is too
    long to show."""
    if lines is None or not 1 <= line <= len(lines) or len(lines[line - 1]) > QUOTED_LINE_CHARS:
        return None
    return lines[line - 1]


UNKNOWN_FIELD_REJECTED = (
    "unknown field (kubectl apply's strict field validation rejects it against Nova's CRD)"
)
"""An unknown field of a SchedulePolicy (an error there), before its "did you mean" hint."""


def name_subject(problems: list[Problem], since: int, kind: str, raw_name: object) -> None:
    """Name the object in every problem found about it (``problems[since:]``) that names none yet:
    ``Deployment web``, or the kind alone when the document has no usable name."""
    subject = f"{kind} {raw_name}" if isinstance(raw_name, str) and raw_name else kind
    problems[since:] = [
        problem if problem.subject else replace(problem, subject=subject) for problem in problems[since:]
    ]


def errors(problems: list[Problem]) -> list[Problem]:
    """The problems that block a render (warnings do not)."""
    return [problem for problem in problems if problem.is_error]


# How a value YAML did not read as expected is named in messages (names and selectors alike).


EXCERPT_CHARS = 80
"""At most this many characters of any input value are quoted in a message (see ``excerpt``)."""


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``value`` quoted as ``repr`` does, cut to its first ``limit`` characters with an ellipsis: problems
    quote input, and an input can be a whole file (a bare-string document, a symlinked ``/etc/passwd``) or
    a key of a megabyte. Not for Secret values, which are never quoted at all."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + "…"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    shown = repr(value)
    return shown if len(shown) <= limit + 2 else shown[: limit + 2] + "…"


def shortened(text: str, limit: int = 2 * EXCERPT_CHARS) -> str:
    """``text`` (a field path, an object's key) cut to ``limit`` characters with an ellipsis, unquoted."""
    return text if len(text) <= limit else text[:limit] + "…"


def described(value: object) -> str:
    """A value as a message shows it: ``null``, ``the number 5``, ``the boolean true``, ``a list``...;
    text is quoted by ``excerpt``, so at most a short start of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {excerpt(value)}"
    if isinstance(value, str):
        return excerpt(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def quote_hint(value: object) -> str:
    """``'; quote it: "1.22"'`` for a scalar YAML did not read as text, else ``""``."""
    if isinstance(value, bool | int | float):
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        return f'; quote it: "{shown}"'
    return ""
