"""Every section of the design a module or a test cites exists in docs/design.md.

Code cites the design as ``DESIGN §N`` (the form before the design lived in the repository) or
``docs/design.md §N``, sometimes ``§N–§M`` for a range, and sometimes names a part of the section after it in
quotes (``DESIGN §3 "Capacity and fit"``). Each number must be a ``## §N`` heading of docs/design.md, and
each quoted name must be found in that section, so a reader who follows a citation finds what it promised.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"
CITING = ("nova_gitops", "nova_agent", "tests")
CITATION = re.compile(r"(?:DESIGN|docs/design\.md) §(\d+)(?:[–-]§(\d+))?(?: \"([^\"]+)\")?")
HEADING = re.compile(r"^## §(\d+) ", re.MULTILINE)


def sections() -> dict[str, str]:
    """docs/design.md's sections by number, each with its text up to the next section."""
    text = DESIGN.read_text(encoding="utf-8")
    starts = list(HEADING.finditer(text))
    return {
        match.group(1): text[match.start() : following.start() if following else len(text)]
        for match, following in zip(starts, [*starts[1:], None], strict=True)
    }


def citations() -> list[tuple[str, str, str]]:
    """(where, section number, quoted name or "") for every citation in the packages and the tests."""
    found = []
    for package in CITING:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue
            for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for match in CITATION.finditer(line):
                    where = f"{path.relative_to(ROOT)}:{line_number}"
                    for number in filter(None, match.group(1, 2)):
                        found.append((where, number, ""))
                    if match.group(3):
                        found.append((where, match.group(1), match.group(3)))
    return found


def test_the_design_numbers_its_sections_in_order() -> None:
    assert list(sections()) == [str(number) for number in range(1, len(sections()) + 1)]


def test_the_packages_cite_the_design() -> None:
    """The check below has something to check: the citations are found (a changed form would hide them)."""
    assert len(citations()) >= 20


@pytest.mark.parametrize("citation", citations(), ids=lambda citation: f"{citation[0]} §{citation[1]}")
def test_every_cited_section_exists(citation: tuple[str, str, str]) -> None:
    where, number, name = citation
    known = sections()
    assert number in known, f"{where} cites §{number}, which docs/design.md does not have"
    if name:
        assert name in known[number], f'{where} cites §{number} "{name}", which that section does not say'
