"""`nbcli.imap.watch` against a real Dovecot: a pass at start, another when
mail comes (IDLE, or polling where the server has none) or Junk changes, a
reconnect after the server went away, a login refused on reconnect ends it,
and SIGTERM stops it cleanly (exit 0) after the pass in progress."""

from __future__ import annotations

import errno
import imaplib
import signal
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from nbcli.errors import NbcliError
from nbcli.imap.watch import Backoff, Stop, _dropped, _idle, _unreachable, watch

MESSAGE = b"From: a@example.org\r\nSubject: hello %d\r\n\r\nhello there\r\n"
FAST = Backoff(first=0.1, cap=0.5)


class Recorder:
    """A pass of our own: records the inbox's and Junk's UIDs each time."""

    def __init__(self):
        self.passes: list[tuple[list[bytes], list[bytes]]] = []
        self.lock = threading.Condition()

    def __call__(self, imap: imaplib.IMAP4) -> None:
        seen = []
        for folder in ("INBOX", "Junk"):
            assert imap.select(folder, readonly=True)[0] == "OK"
            seen.append(imap.uid("SEARCH", "ALL")[1][0].split())
        with self.lock:
            self.passes.append(tuple(seen))
            self.lock.notify_all()

    def wait_for(self, test, seconds=10.0):
        """The first pass for which test(inbox_uids, junk_uids) holds."""
        deadline = time.monotonic() + seconds
        with self.lock:
            while True:
                for uids in self.passes:
                    if test(*uids):
                        return uids
                left = deadline - time.monotonic()
                assert left > 0, f"no such pass in {seconds} s: {self.passes}"
                self.lock.wait(left)


class Watching:
    """watch() in a thread, stopped and joined at the end."""

    def __init__(self, server, tls=False, **settings):
        self.server, self.recorder, self.stop, self.lines = server, Recorder(), Stop(), []
        self.result, self.error = None, None
        settings = dict(idle_seconds=600, junk_seconds=600, poll_seconds=600, backoff=FAST) | settings

        def connect():
            if tls:
                imap = imaplib.IMAP4_SSL("localhost", server.tls_port, ssl_context=server.tls_context())
            else:
                imap = imaplib.IMAP4("127.0.0.1", server.port)
            imap.login(server.user, server.password)
            return imap

        def run():
            try:
                self.result = watch(connect, self.recorder, log=self.lines.append, stop=self.stop, **settings)
            except Exception as exc:  # the test looks at it
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def close(self, seconds=10.0):
        self.stop.request()
        self.thread.join(seconds)
        assert not self.thread.is_alive(), "watch did not stop"
        self.stop.close()


@pytest.fixture
def watching():
    started = []

    def start(server, **settings):
        started.append(Watching(server, **settings))
        return started[-1]

    yield start
    for w in started:
        if w.thread.is_alive():
            w.close()


def append(server, n, folder="INBOX"):
    with server.client() as imap:
        assert imap.append(folder, None, None, MESSAGE % n)[0] == "OK"


def test_mail_appended_while_idling_wakes_a_pass(dovecot, watching):
    append(dovecot, 1)
    w = watching(dovecot)  # Junk is checked every 600 s: only IDLE can wake it
    w.recorder.wait_for(lambda inbox, junk: inbox == [b"1"])
    time.sleep(0.3)  # idling by now
    append(dovecot, 2)
    w.recorder.wait_for(lambda inbox, junk: inbox == [b"1", b"2"], seconds=15)
    with dovecot.client() as imap:  # a flag set by the user's mail program wakes it too
        imap.select("INBOX")
        imap.uid("STORE", "1", "+FLAGS", "($Junk)")
    count = len(w.recorder.passes)
    w.recorder.wait_for(lambda inbox, junk: len(w.recorder.passes) > count, seconds=15)
    w.close()
    assert w.error is None and w.result == len(w.recorder.passes) >= 3
    assert w.lines == []  # nothing to say: no reconnect, no polling
    with dovecot.client() as imap:  # the watcher only looked: nothing read
        imap.select("INBOX", readonly=True)
        assert b"\\Seen" not in imap.uid("FETCH", "1:*", "(FLAGS)")[1][0]


def test_idle_over_tls(dovecot, watching):
    w = watching(dovecot, tls=True)
    w.recorder.wait_for(lambda inbox, junk: inbox == [])
    for n in (1, 2):
        time.sleep(0.3)
        append(dovecot, n)
        w.recorder.wait_for(lambda inbox, junk, n=n: len(inbox) == n, seconds=15)
    w.close()
    assert w.error is None and w.lines == []


def test_without_idle_it_polls(make_dovecot, watching):
    server = make_dovecot(capabilities="IMAP4rev1 LITERAL+ UIDPLUS")
    w = watching(server, poll_seconds=0.3)
    w.recorder.wait_for(lambda inbox, junk: inbox == [])
    append(server, 1)
    w.recorder.wait_for(lambda inbox, junk: inbox == [b"1"], seconds=15)
    w.close()
    assert w.error is None
    assert w.lines == ["nbcli: imap: the server has no IDLE; checking INBOX every 0.3 s"]


def test_a_change_in_junk_wakes_a_pass(dovecot, watching):
    w = watching(dovecot, junk_seconds=0.3)
    w.recorder.wait_for(lambda inbox, junk: junk == [])
    append(dovecot, 1, folder="Junk")  # the user moved a message into Junk
    w.recorder.wait_for(lambda inbox, junk: junk == [b"1"], seconds=15)
    w.close()
    assert w.error is None and w.lines == []


def test_it_reconnects_after_the_server_went_away(dovecot, watching):
    w = watching(dovecot)
    w.recorder.wait_for(lambda inbox, junk: inbox == [])
    time.sleep(0.3)
    dovecot.stop()  # the connection drops
    time.sleep(1.0)  # reconnects are refused meanwhile
    dovecot.start()
    append(dovecot, 1)
    w.recorder.wait_for(lambda inbox, junk: inbox == [b"1"], seconds=10)
    w.close()
    assert w.error is None
    assert len(w.lines) >= 1 and all(line.startswith("nbcli: imap: connection lost (") for line in w.lines)
    assert "reconnecting in" in w.lines[0] and w.lines[0].endswith("(attempt 1)")


def test_a_pass_cut_short_by_a_lost_connection_runs_again_after_the_reconnect(dovecot):
    passes, lines, stop = [], [], Stop()
    restarted = threading.Event()

    def restart():
        dovecot.start()
        restarted.set()

    def one_pass(imap):
        passes.append("started")
        if len(passes) == 1:  # the first pass loses its connection half way
            dovecot.stop()
            threading.Timer(0.5, restart).start()
            imap.select("INBOX")
        passes.append("finished")
        stop.request()

    def connect():
        imap = imaplib.IMAP4("127.0.0.1", dovecot.port)
        imap.login(dovecot.user, dovecot.password)
        return imap

    assert watch(connect, one_pass, log=lines.append, stop=stop, backoff=FAST) == 1
    assert restarted.wait(10)
    assert passes == ["started", "started", "finished"]
    assert len(lines) >= 1 and all(line.startswith("nbcli: imap: connection lost (") for line in lines)
    stop.close()


def test_a_login_refused_on_reconnect_ends_it(dovecot, watching):
    w = watching(dovecot)
    w.recorder.wait_for(lambda inbox, junk: inbox == [])
    dovecot.stop()
    (dovecot.root / "users").write_text(f"{dovecot.user}:{{PLAIN}}another password\n")
    dovecot.start()
    w.thread.join(10)
    assert not w.thread.is_alive()
    assert isinstance(w.error, imaplib.IMAP4.error) and "AUTHENTICATIONFAILED" in str(w.error)
    w.stop.close()


def test_the_first_connection_is_not_retried():
    def connect():
        raise ConnectionRefusedError(111, "Connection refused")

    with pytest.raises(ConnectionRefusedError):
        watch(connect, lambda imap: None, stop=Stop())


def test_backoff_doubles_up_to_the_cap_with_jitter():
    backoff = Backoff(first=1.0, cap=10.0)
    assert [backoff.delay(n, draw=lambda: 1.0) for n in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert [backoff.delay(n, draw=lambda: 0.0) for n in range(1, 7)] == [0.5, 1, 2, 4, 5, 5]
    assert backoff.delay(10_000) <= 10.0


def _raised_while_handling(error, cause):
    try:
        try:
            raise cause
        except Exception:
            raise error from None
    except Exception as exc:
        return exc


def test_what_counts_as_a_lost_connection():
    lost = [
        imaplib.IMAP4.abort("socket error: EOF"),
        ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
        ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
        OSError(errno.ENETUNREACH, "Network is unreachable"),
        TimeoutError("timed out"),
        socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
        imaplib.IMAP4.error("b'[UNAVAILABLE] Try again later'"),
    ]
    not_lost = [
        OSError(errno.ENOSPC, "No space left on device"),
        PermissionError(errno.EACCES, "Permission denied"),
        imaplib.IMAP4.error("b'[AUTHENTICATIONFAILED] Authentication failed.'"),
        ssl.SSLCertVerificationError(1, "certificate verify failed"),
        NbcliError("no such model"),
        BrokenPipeError(errno.EPIPE, "Broken pipe"),  # stdout closed: imaplib says a socket's as abort
    ]
    assert [_dropped(e) for e in lost] == [True] * len(lost)
    assert [_dropped(e) for e in not_lost] == [False] * len(not_lost)
    # connect() may say a refused connection in a line of its own: still worth a reconnect
    refused = _raised_while_handling(NbcliError("cannot connect to h:1: connection refused"), lost[2])
    login = _raised_while_handling(NbcliError("h:1 refused the login"), not_lost[2])
    assert (_unreachable(refused), _dropped(refused), _unreachable(login)) == (True, False, False)


SCRIPT = """
import imaplib, sys, time
from nbcli.imap.watch import watch

port, user, password, slow = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
passes = []

def connect():
    imap = imaplib.IMAP4("127.0.0.1", port)
    imap.login(user, password)
    return imap

def one_pass(imap):
    passes.append(1)
    print("pass", len(passes), flush=True)
    time.sleep(slow if len(passes) == 1 else 0)
    imap.select("INBOX")
    print("done", len(passes), flush=True)

print("stopped after", watch(connect, one_pass), "passes", flush=True)
"""


def _watch_process(tmp_path, server, slow):
    script = tmp_path / "watch_script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    process = subprocess.Popen(
        [sys.executable, str(script), str(server.port), server.user, server.password, str(slow)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline() == "pass 1\n"
    return process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_while_idling_exits_0(tmp_path, dovecot, signum):
    process = _watch_process(tmp_path, dovecot, slow=0)
    assert process.stdout.readline() == "done 1\n"
    time.sleep(0.5)  # idling
    process.send_signal(signum)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert (out, err) == ("stopped after 1 passes\n", "")
    assert "Logged out" in dovecot.log()  # LOGOUT, not a dropped connection


def test_sigterm_during_a_pass_lets_it_finish(tmp_path, dovecot):
    process = _watch_process(tmp_path, dovecot, slow=1.5)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert (out, err) == ("done 1\nstopped after 1 passes\n", "")


def test_a_second_sigterm_ends_it_at_once(tmp_path, dovecot):
    process = _watch_process(tmp_path, dovecot, slow=30)
    process.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGTERM


def _scripted_server(on_idle: bytes):
    """A minimal IMAP peer on a loopback port that answers IDLE with
    `on_idle` (all in one segment), then DONE with OK; (port, listener)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as lines:
            conn.sendall(b"* OK ready\r\n")
            while line := lines.readline():
                tag, command = line.split()[:2]
                if command.upper() == b"CAPABILITY":
                    conn.sendall(b"* CAPABILITY IMAP4rev1 IDLE\r\n%s OK done\r\n" % tag)
                elif command.upper() == b"IDLE":
                    conn.sendall(on_idle.replace(b"TAG", tag))
                    if b"+ idling" in on_idle:
                        assert lines.readline() == b"DONE\r\n"
                        conn.sendall(b"%s OK idle done\r\n" % tag)
                else:
                    conn.sendall(b"%s OK done\r\n" % tag)

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], listener


@pytest.mark.parametrize(
    "on_idle, answer",
    [
        # "+ idling" and "* 4 EXISTS" in one segment: imaplib's buffered file holds the
        # EXISTS when select() is asked, so it must be looked for there
        (b"+ idling\r\n* 4 EXISTS\r\n", True),
        (b"* 4 EXISTS\r\n+ idling\r\n", True),  # news before the continuation count too
        (b"TAG BAD not now\r\n", None),  # refused although announced: the caller polls
    ],
)
def test_idle_sees_what_came_with_its_continuation(on_idle, answer):
    port, listener = _scripted_server(on_idle)
    imap = imaplib.IMAP4("127.0.0.1", port)
    stop, answers = Stop(), []
    waiting = threading.Thread(target=lambda: answers.append(_idle(imap, stop, 600)), daemon=True)
    waiting.start()
    waiting.join(30)  # IDLE for 600 s unless the EXISTS is seen
    assert answers == [answer]
    assert imap.noop()[0] == "OK"  # the session goes on
    stop.close()
    listener.close()


def test_what_a_server_says_while_idling_is_not_kept():
    """A server's keep-alive lines during IDLE ("* OK Still here", Dovecot's
    every 2 minutes) were kept by imaplib for as long as the watch ran
    without a pass: memory that grew with the time idle."""
    port, listener = _scripted_server(b"+ idling\r\n" + b"* OK Still here\r\n" * 3000)
    imap = imaplib.IMAP4("127.0.0.1", port)
    stop = Stop()
    assert _idle(imap, stop, 1.5) is False  # nothing changed
    assert sum(len(kept) for kept in imap.untagged_responses.values()) < 5
    assert imap.noop()[0] == "OK"
    stop.close()
    listener.close()
