"""`nbcli serve`'s network side (issue 25): the socket path and its folder,
slow and greedy clients, message size in memory, replies to clients that do
not read, and SIGTERM. Servers are real processes on loopback and Unix
sockets (tests/spam/test_serve.py's `Server`), with small limits so each test
takes a second or two."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from spamd_client import (
    build_request,
    child_pids,
    connect,
    exchange,
    parse_reply,
    read_all,
    request,
    rss_kb,
    wait_closed,
)
from test_serve import ERROR_LINE, SPAM_FILE, T_DEFAULT, TRAIN, Server, nbcli, ping

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Unix sockets, signals and /proc")


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("net") / "mail.nb"
    nbcli("train", TRAIN, "-o", path, "-q")
    return path


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def many(address, n: int) -> list[socket.socket]:
    """n connections, waiting when the listen backlog is full."""
    out = []
    while len(out) < n:
        try:
            out.append(connect(address))
        except BlockingIOError:  # a full backlog, on a Unix socket
            time.sleep(0.01)
    return out


def timed_ping(address, limit: float) -> float:
    """Seconds until a PING is answered (the client gives up after `limit`).
    A Unix socket whose listen backlog is full refuses a connect at once
    (EAGAIN) rather than queueing it: the client tries again until `limit`,
    as `many` does (a loaded machine's worker accepts the tricklers slower)."""
    start = time.monotonic()
    while True:
        try:
            raw = exchange(address, b"PING SPAMC/1.5\r\n\r\n", timeout=limit)
            break
        except BlockingIOError:
            if time.monotonic() - start > limit:
                raise
            time.sleep(0.01)
    assert raw.startswith(b"SPAMD/1.5 0 PONG"), raw
    return time.monotonic() - start


# --- 1. --socket PATH removes only a dead socket ------------------------------------------


def test_serving_a_model_on_its_own_path_keeps_the_model(model, tmp_path):
    copy = tmp_path / "mail.nb"
    copy.write_bytes(model.read_bytes())
    out = subprocess.run(
        [sys.executable, "-m", "nbcli", "serve", str(copy), "--socket", str(copy)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 1 and len(out.stderr.splitlines()) == 1, out.stderr
    assert f"{copy} exists and is not a socket" in out.stderr
    assert copy.read_bytes() == model.read_bytes()


def test_a_file_put_in_the_sockets_place_survives_the_stop(model):
    srv = Server(model)
    os.unlink(srv.unix)
    Path(srv.unix).write_text("not the daemon's\n")
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(timeout=15) == 0
    assert Path(srv.unix).read_text() == "not the daemon's\n"
    srv.stop()


# --- 2. the default socket folder must be this user's and private ---------------------------


def test_the_cli_refuses_a_foreign_default_folder_in_one_line(model, tmp_path):
    (tmp_path / "theirs").mkdir()
    (tmp_path / "nbcli").symlink_to(tmp_path / "theirs")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "nbcli", "serve", str(model)], capture_output=True, text=True, timeout=30, env=env
    )
    assert out.returncode == 1 and len(out.stderr.splitlines()) == 1, out.stderr
    assert "refusing the socket folder" in out.stderr and "it is a link" in out.stderr
    assert list((tmp_path / "theirs").iterdir()) == []


# --- 3. slow and greedy clients ----------------------------------------------------------------


def test_idle_connections_do_not_shut_out_a_client_nor_spin_the_worker(model):
    """More idle connections than a worker holds: until the idlest may be
    dropped (1 s) the full worker waits instead of spinning on its
    listening socket; a new client is answered then, not after --timeout
    (10 s)."""
    srv = Server(model, "--workers", "1", "--timeout", "10")
    pid = child_pids(srv.proc.pid)[0]
    idle = []
    try:
        idle = many(srv.unix, 300)
        time.sleep(0.1)
        cpu, wall = cpu_seconds(pid), time.monotonic()
        time.sleep(0.6)  # full, none idle for 1 s yet: nothing to do
        assert cpu_seconds(pid) - cpu < 0.1 * (time.monotonic() - wall)
        assert timed_ping(srv.unix, 8) < 4
        assert timed_ping(srv.tcp, 8) < 4
    finally:
        for sock in idle:
            sock.close()
        assert srv.stop() == 0, "".join(srv.stderr)


def test_trickling_clients_hit_the_request_deadline(model):
    """Clients sending a byte every 0.3 s never finish a request and are
    never idle for long: each has --timeout in all (not per read)."""
    srv = Server(model, "--workers", "1", "--timeout", "2")
    slow: list[socket.socket] = []
    stop = threading.Event()

    def trickle():
        while not stop.is_set():
            for sock in slow:
                try:
                    sock.send(b"C")
                except OSError:
                    pass
            time.sleep(0.3)

    thread = threading.Thread(target=trickle, daemon=True)
    try:
        slow += many(srv.unix, 300)
        thread.start()
        assert timed_ping(srv.unix, 8) < 5  # the tricklers ran out of time at 2 s
        closed, _ = wait_closed(slow[0], 3)
        assert closed == b"" or ERROR_LINE.fullmatch(closed), closed
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()
        for sock in slow:
            sock.close()
        assert srv.stop() == 0, "".join(srv.stderr)


def test_one_tcp_address_holds_at_most_max_per_client(model):
    srv = Server(model, "--workers", "1", "--max-per-client", "3", "--timeout", "10")
    try:
        held = [connect(srv.tcp) for _ in range(6)]
        time.sleep(0.3)
        dropped = [wait_closed(sock, 0.5)[0] for sock in held]
        assert all(d == b"" or ERROR_LINE.fullmatch(d) for d in dropped[:3]), dropped
        assert dropped[3:] == [b"<still open>"] * 3  # the oldest idle went first
        assert timed_ping(srv.tcp, 5) < 2  # a new one still gets in (the oldest held is dropped)
        assert timed_ping(srv.unix, 5) < 2  # the Unix socket is not that address
        for sock in held:
            sock.close()
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


def test_max_connections_per_worker(model):
    srv = Server(model, "--workers", "1", "--max-connections", "4", "--timeout", "10")
    try:
        held = [connect(srv.unix) for _ in range(4)]
        time.sleep(0.2)
        assert timed_ping(srv.unix, 5) < 3  # replaces the idlest, once it has been idle 1 s
        states = [wait_closed(sock, 0.3)[0] for sock in held]
        assert states.count(b"<still open>") == 3, states
        for sock in held:
            sock.close()
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


# --- 4. a message larger than --max-size is not held in memory --------------------------------


def test_a_huge_body_is_counted_not_held(model):
    srv = Server(model, "--workers", "1", "--max-size", "100000", "--timeout", "20")
    pid = child_pids(srv.proc.pid)[0]
    try:
        ping(srv.unix)
        before = rss_kb(pid)
        size = 40 << 20
        chunk = b"x" * (1 << 20)
        sockets = []
        for verb in ("CHECK", "PROCESS"):
            sock = connect(srv.unix, timeout=20)
            sock.sendall(b"%s SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % (verb.encode(), size))
            for _ in range(size // len(chunk)):
                sock.sendall(chunk)
            sockets.append(sock)
        grown = rss_kb(pid) - before
        replies = [read_all(sock) for sock in sockets]
        assert grown < 16 << 10, f"the worker grew by {grown} KB for two 40 MB messages"
        assert parse_reply(replies[0]).headers["spam"] == f"False ; 0.0 / {T_DEFAULT}"  # CHECK: not scored
        assert ERROR_LINE.fullmatch(replies[1]) and b" 65 EX_DATAERR " in replies[1], replies[1]
        srv.assert_alive()
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


# --- 6. a client that does not read its reply ----------------------------------------------------


def test_clients_that_do_not_read_their_replies_do_not_block_the_workers(model):
    srv = Server(model, "--workers", "2", "--max-size", "3M", "--timeout", "15")
    message = SPAM_FILE.read_bytes() + b"\n" + b"word " * 400_000  # a 2 MB reply: more than a socket buffer
    stuck = []
    try:
        for _ in range(2):
            sock = connect(srv.unix, timeout=20)
            sock.sendall(build_request("PROCESS", message))
            stuck.append(sock)
        time.sleep(1.0)  # scored; the replies wait on clients that do not read
        assert timed_ping(srv.unix, 12) < 3
        assert request(srv.tcp, "CHECK", SPAM_FILE.read_bytes()).spam()[0] is True
    finally:
        for sock in stuck:
            sock.close()
        assert srv.stop() == 0, "".join(srv.stderr)


# --- 5 and 10. SIGTERM ----------------------------------------------------------------------------


@pytest.mark.parametrize("trial", range(3))
def test_sigterm_right_after_a_worker_died_stops_the_daemon(model, trial):
    srv = Server(model)
    os.kill(child_pids(srv.proc.pid)[0], signal.SIGKILL)
    while True:  # the supervisor says so, then waits 0.1 s before starting another
        line = srv.lines.get(timeout=10)
        if "starting another" in line:
            break
    srv.proc.send_signal(signal.SIGTERM)
    try:
        assert srv.proc.wait(timeout=10) == 0
    finally:
        srv.stop()


def test_new_connections_are_refused_while_draining(model):
    srv = Server(model, "--timeout", "3")
    with connect(srv.tcp) as idle:  # keeps the drain going for up to 3 s
        idle.sendall(b"CHECK SPAMC/1.5\r\n")
        time.sleep(0.3)  # taken by a worker
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert srv.proc.poll() is None  # still draining
        with pytest.raises((ConnectionRefusedError, FileNotFoundError)):
            connect(srv.unix, timeout=2)
        with pytest.raises(ConnectionRefusedError):
            connect(srv.tcp, timeout=2)
    assert srv.stop() == 0, "".join(srv.stderr)


def test_an_empty_listen_address_is_refused(model):
    out = subprocess.run(
        [sys.executable, "-m", "nbcli", "serve", str(model), "--port", "0", "--listen", ""],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "--listen" in out.stderr and "every interface" in out.stderr, out.stderr
