"""What a person at a terminal sees beyond the plain output: rich progress on stderr and rich tables.

When that is (a terminal, no ``NO_COLOR``, no ``--quiet``; ``NOVA_GITOPS_FORCE_TERMINAL=1`` for tests) is
the rule of ``clients.terminals``, shared with nova-agent; ``-o json|yaml`` never gets decoration (the
commands decide that). Anything else prints exactly what it printed before.

Progress goes to stderr, so ``nova-gitops diff … > comment.md`` keeps a clean file while the terminal shows
the phases (``nova_gitops.api.progress``: load, plan, render, write, git). rich is imported only here and
only when a terminal is decorated, so ``--help`` and piped runs never pay for it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from nova_gitops.api import progress as phases
from nova_gitops.api import texts
from nova_gitops.cli import guarding
from nova_gitops.clients import terminals

if TYPE_CHECKING:
    from rich.console import Console

DRAWN_AROUND = 16  # columns a progress line takes besides the phase's name and detail


def console(*, stderr: bool, width: int | None = None) -> Console:
    """A rich console on the process's current stdout or stderr, under their guard (``cli.guarding``): rich
    styles what it prints, so whatever comes from data is made ``visible`` before it reaches rich, and
    given as ``Text``, never as markup. ``width``: at least that wide, whatever the terminal's width."""
    from rich.console import Console

    stream = guarding.raw(sys.stderr if stderr else sys.stdout)
    forced = True if terminals.forced() else None
    made = Console(file=stream, force_terminal=forced, highlight=False, markup=False, emoji=False)
    if width is not None and width > made.width:
        made.width = width
    return made


class RichProgress:
    """``api.progress.Progress`` as rich shows it: one line per phase, a spinner while it runs, a tick and
    its time when it is over."""

    def __init__(self, shown_on: Console) -> None:
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.display = Progress(
            SpinnerColumn(finished_text="[green]✓[/]"),
            TextColumn("[bold]{task.fields[phase]:<6}[/] {task.description}"),
            TimeElapsedColumn(),
            console=shown_on,
        )
        self._current: Any = None

    def phase(self, name: str, detail: str = "") -> None:
        from rich.markup import escape

        self._end_current()
        name, detail = texts.one_line(name), texts.one_line(detail)  # a git remote's message, a path
        room = max(10, self.display.console.width - len(name) - DRAWN_AROUND)
        if len(detail) > room:  # rich would squeeze out the tick and the time instead: keep the end
            detail = "…" + detail[-(room - 1) :]
        self._current = self.display.add_task(escape(detail), total=1, phase=escape(name))

    def _end_current(self) -> None:
        if self._current is not None:
            self.display.update(self._current, completed=1)
            self._current = None

    def __enter__(self) -> RichProgress:
        self.display.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._end_current()
        self.display.stop()


@contextmanager
def progress(*, quiet: bool = False) -> Iterator[phases.Progress]:
    """Rich progress on stderr when stderr is a decorated terminal, else ``NO_PROGRESS``; for the block."""
    if not terminals.decorated(sys.stderr, quiet=quiet):
        yield phases.NO_PROGRESS
        return
    started = time.monotonic()
    with RichProgress(console(stderr=True)) as shown:
        yield shown
    shown.display.console.print(f"done in {time.monotonic() - started:.1f}s", style="dim")


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, title: str | None = None, quiet: bool = False
) -> bool:
    """A rich table on stdout when stdout is a decorated terminal; False (nothing printed) otherwise, and
    the caller prints its plain table."""
    if not terminals.decorated(sys.stdout, quiet=quiet):
        return False
    from rich import box
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    table = Table(*headers, title=title, box=box.SIMPLE_HEAD, header_style="bold", title_justify="left")
    for row in rows:
        table.add_row(*(Text(texts.one_line(str(cell))) for cell in row))  # data: shown, never markup
    out = console(stderr=False)
    # never squeeze columns to "wl…": a table wider than the terminal is as wide as it needs, as kubectl's
    needed = Measurement.get(out, out.options.update_width(10_000), table).maximum
    console(stderr=False, width=needed).print(table)
    return True
