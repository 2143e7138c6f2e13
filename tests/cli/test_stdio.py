"""Standard streams for unattended runs (cli/stdio.py): JSON that stays
valid in any output encoding, and a closed stdin or stdout that is a
one-line error when used. (Whole commands under closed and broken streams:
tests/cli/test_cli_hardening.py.)"""

import io
import json
import subprocess
import sys

import pytest

from nbcli.cli import stdio
from nbcli.errors import NbcliError


def _stdout(monkeypatch, encoding):
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    monkeypatch.setattr(sys, "stdout", out)
    return out


def test_json_escapes_non_ascii_unless_stdout_is_utf8(monkeypatch):
    out = _stdout(monkeypatch, "ascii")
    assert not stdio.stdout_is_utf8()
    stdio.write_json({"id": "café"})
    out.flush()
    text = out.buffer.getvalue().decode("ascii")
    assert text == '{"id": "caf\\u00e9"}\n' and json.loads(text) == {"id": "café"}
    out = _stdout(monkeypatch, "utf-8")
    assert stdio.stdout_is_utf8()
    stdio.write_json({"id": "café"})
    out.flush()
    assert out.buffer.getvalue().decode("utf-8") == '{"id": "café"}\n'


def test_a_closed_stream_is_an_error_only_when_used():
    closed = stdio._ClosedStream("output")
    closed.flush()  # at exit: nothing to do
    assert closed.fileno() == 1 and not closed.isatty()
    with pytest.raises(NbcliError, match="standard output is closed"):
        closed.write("x")


def test_a_closed_stdout_gets_dev_null_so_no_file_takes_its_number(tmp_path):
    code = (
        "import os, sys; from nbcli.cli.stdio import guard_standard_streams; guard_standard_streams(); "
        "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT); print(fd, type(sys.stdout).__name__, file=sys.stderr)"
    )
    run = [sys.executable, "-c", code]
    open_out = subprocess.run([*run, tmp_path / "f"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert open_out.stderr.split()[1] == "TextIOWrapper"  # an open stdout is left as it is
    closed = subprocess.run(["sh", "-c", '"$@" >&-', "sh", *run, tmp_path / "g"], stderr=subprocess.PIPE, text=True)
    fd, kind = closed.stderr.split()
    assert int(fd) > 2 and kind == "_ClosedStream"
