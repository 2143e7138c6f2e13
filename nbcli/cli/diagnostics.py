"""What nbcli tells people on stderr: warnings and progress bars.

stdout carries results only. Progress bars appear only when stderr is a
terminal and --quiet is not given; rich is imported only then. Warnings go
to stderr as `nbcli: warning: ...` lines (at most `MAX_WARNINGS`, then a
count), and --quiet silences them too.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

MAX_WARNINGS = 20


class Diagnostics:
    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.warnings = 0
        self._console = None  # rich console while a progress bar is live

    def _write(self, line: str) -> None:
        if self._console is not None:
            self._console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self.stream, flush=True)

    def warn(self, message: str) -> None:
        self.warnings += 1
        if self.quiet or self.warnings > MAX_WARNINGS:
            return
        self._write(f"nbcli: warning: {message}")

    def info(self, message: str) -> None:
        if not self.quiet:
            self._write(f"nbcli: {message}")

    def finish(self) -> None:
        """Say how many warnings were not shown."""
        hidden = self.warnings - MAX_WARNINGS
        if hidden > 0 and not self.quiet:
            self._write(f"nbcli: warning: {hidden} more warning(s) not shown")

    @property
    def show_progress(self) -> bool:
        return not self.quiet and hasattr(self.stream, "isatty") and self.stream.isatty()

    @contextmanager
    def progress(self, description: str, total: int | None = None):
        """A callable advance(n) that moves a progress bar (or does nothing);
        advance.phase(description, total) relabels the same bar for the next
        phase of the work and starts it from 0 (see `Advance`)."""
        if not self.show_progress:
            yield Advance()
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream)
        columns = [
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        ]
        with Progress(*columns, console=console, transient=True, redirect_stdout=False, redirect_stderr=False) as bar:
            task = bar.add_task(description, total=total)
            self._console = console
            try:
                yield Advance(bar, task)
            finally:
                self._console = None


class Advance:
    """A progress bar's handle: advance(n) moves it by n; phase(description,
    total) names the next phase of the work (training's calibration after
    its counting pass) and restarts the count, so the bar never sits full
    and unlabelled while work goes on. Without a bar both do nothing."""

    def __init__(self, bar=None, task=None):
        self._bar = bar
        self._task = task

    def __call__(self, n) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, n)

    def phase(self, description: str, total: int | None = None) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=description, total=total, completed=0)


def em_log(diagnostics, what: str):
    """A callback printing EM's objective per iteration on stderr."""

    def log(iteration: int, objective: float) -> None:
        diagnostics.info(f"{what}: iteration {iteration}, objective {objective:.6f}")

    return log
