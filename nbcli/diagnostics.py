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
        """A callable advance(n) that moves a progress bar (or does nothing)."""
        if not self.show_progress:
            yield lambda n: None
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
                yield lambda n: bar.advance(task, n)
            finally:
                self._console = None
