"""`nbcli serve`'s supervisor: a worker that dies is replaced, and the
daemon keeps answering; spamc, when installed, talks to it."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest
from spamd_client import child_pids

from conftest import SAMPLES, debian_tool, run

MESSAGE = (SAMPLES / "mail" / "test" / "spam" / "0001.eml").read_bytes()


def _check(path: str) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(MESSAGE) + MESSAGE)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


@pytest.fixture()
def daemon(tmp_path):
    model = tmp_path / "m.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    folder = tempfile.mkdtemp(dir="/tmp", prefix="nbs")
    path = os.path.join(folder, "s.sock")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbcli", "serve", model, "--socket", path, "--workers", "2"],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline()
    assert line.startswith("nbcli: serving "), line
    yield proc, path
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert not os.path.exists(path)  # the socket is removed on the way out
    shutil.rmtree(folder, ignore_errors=True)


def test_a_killed_worker_is_replaced_and_the_daemon_keeps_answering(daemon):
    proc, path = daemon
    assert _check(path).startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: True ; ")
    before = child_pids(proc.pid)
    assert len(before) == 2
    os.kill(before[0], signal.SIGKILL)
    for _ in range(100):
        after = child_pids(proc.pid)
        if len(after) == 2 and before[0] not in after:
            break
        time.sleep(0.05)
    assert len(after) == 2 and before[0] not in after
    for _ in range(6):  # every request is answered, whichever worker takes it
        assert _check(path).startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: True ; ")


@pytest.fixture(scope="module")
def spamc():
    return debian_tool("spamc", "spamc")[0]


def test_spamc_checks_and_processes_through_the_daemon(daemon, spamc):
    _, path = daemon
    checked = subprocess.run([spamc, "-U", path, "-c"], input=MESSAGE, capture_output=True, timeout=30)
    assert checked.returncode == 1 and checked.stdout.strip().endswith(b"/3.9")  # spam: exit 1, S/T (T for 0.98)
    processed = subprocess.run([spamc, "-U", path], input=MESSAGE, capture_output=True, timeout=30)
    assert processed.returncode == 0
    assert processed.stdout.startswith(b"X-Spam-Flag: YES\nX-Spam-Status: Yes, score=")
    added = processed.stdout.split(b"\n", 3)
    assert added[3] == MESSAGE  # the three added lines, then the message byte for byte


def test_spamc_passes_mail_through_when_the_daemon_is_down(spamc):
    path = os.path.join(tempfile.mkdtemp(dir="/tmp", prefix="nbs"), "none.sock")
    out = subprocess.run([spamc, "-U", path], input=MESSAGE, capture_output=True, timeout=30)
    assert out.stdout == MESSAGE  # spamc's safe fallback: nothing lost


def test_a_bad_socket_place_or_a_model_that_cannot_classify_is_one_line(tmp_path):
    model = tmp_path / "m.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    bad = subprocess.run(
        [sys.executable, "-m", "nbcli", "serve", model, "--socket", "/proc/no/such/s.sock"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 1 and bad.stderr.startswith("nbcli: error: cannot listen on /proc/no/such/s.sock")
    assert len(bad.stderr.splitlines()) == 1
    young = tmp_path / "young.nb"  # has learned spam only
    assert run(["learn", "--create", young, "--spam", SAMPLES / "mail" / "test" / "spam" / "0001.eml"]).exit_code == 0
    refused = subprocess.run(
        [sys.executable, "-m", "nbcli", "serve", young, "--socket", str(tmp_path / "y.sock")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 1 and "no documents of class ham yet" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
