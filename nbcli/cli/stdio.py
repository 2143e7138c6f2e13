"""Standard streams for unattended runs: writing results and errors
whatever state the process was started in.

stdout carries only results and mail; stderr only diagnostics. nbcli may
be started from cron or an MTA with a stream closed, a reader that goes
away, or a locale that cannot encode its output: `guard_standard_streams`
(called once, first thing) makes each of those a defined behaviour, and
the writers here never fail on encoding.
"""

from __future__ import annotations

import os
import sys

from nbcli.errors import NbcliError


def err(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def write(line: str) -> None:
    sys.stdout.write(line + "\n")


def stdout_is_utf8() -> bool:
    import codecs

    try:
        return codecs.lookup(getattr(sys.stdout, "encoding", None) or "utf-8").name == "utf-8"
    except LookupError:
        return False


def write_json(record) -> None:
    """One JSON line on stdout: valid JSON whatever the output encoding
    (non-ASCII escaped unless stdout is UTF-8)."""
    from nbcli.cli.output import json_text

    write(json_text(record, ascii_only=not stdout_is_utf8()))


class _ClosedStream:
    """Stands in for sys.stdin or sys.stdout when the process was started
    with that descriptor closed (`nbcli predict ... <&-`, `>&-`): reading or
    writing is a one-line error that says so, while the descriptor itself
    holds /dev/null, so that no file nbcli opens later can take its number
    (results written to "stdout" would otherwise land in a model file)."""

    def __init__(self, name: str):
        self.name = name
        self.buffer = self
        self.encoding = "utf-8"
        self.errors = "strict"

    def _closed(self, *args, **kw):
        raise NbcliError(f"standard {self.name} is closed", hint=f"run nbcli with its standard {self.name} open")

    read = readline = read1 = readinto = write = _closed

    def __iter__(self):
        self._closed()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return {"input": 0, "output": 1}[self.name]

    def flush(self) -> None:
        pass


def guard_standard_streams() -> None:
    """Give closed standard descriptors /dev/null, and make the text streams
    safe to write whatever the locale: stderr always works (a closed one
    discards), a closed stdin or stdout is an error when used, and text
    that the output encoding cannot show is backslash-escaped instead of
    failing (PYTHONIOENCODING=ascii)."""
    import io

    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, mode)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if fd == 0:
            sys.stdin = _ClosedStream("input")
        elif fd == 1:
            sys.stdout = _ClosedStream("output")
        else:
            sys.stderr = io.TextIOWrapper(open(2, "wb", closefd=False), errors="backslashreplace", line_buffering=True)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
