"""`nbcli imap --idle` as a process against a real Dovecot: mail that comes
while it idles is filed, a message the user moves into Junk is learned, it
reconnects after the server went away, a login refused then ends it with one
line, and SIGTERM ends it with exit 0."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading

import pytest
from imap_helpers import append, folder, imap_args, samples

from conftest import SAMPLES, run


class Process:
    """`python -m nbcli imap ... --idle`, its stdout and stderr read line by
    line as they come."""

    def __init__(self, args):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "nbcli", *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out, self.err = queue.Queue(), queue.Queue()
        self.readers = [
            threading.Thread(target=lambda s=stream, q=lines: [q.put(line) for line in s], daemon=True)
            for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err))
        ]
        for reader in self.readers:
            reader.start()

    def rest(self, lines: queue.Queue) -> list[str]:
        """What is left to read of a stream, once the process has ended."""
        for reader in self.readers:
            reader.join(10)
        return [lines.get() for _ in range(lines.qsize())]

    def line(self, lines: queue.Queue, seconds=20.0) -> str:
        try:
            return lines.get(timeout=seconds)
        except queue.Empty:
            self.process.kill()
            pytest.fail(f"nothing said in {seconds} s")

    def summary(self, seconds=20.0) -> dict:
        line = self.line(self.out, seconds)
        assert line.startswith("imap: "), line
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}

    def stop(self, signum=signal.SIGTERM) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=20)


@pytest.fixture
def spam_message(sample_mail_model):
    """A sample spam message `nbcli filter` calls spam."""
    for path in sorted((SAMPLES / "mail" / "test" / "spam").iterdir()):
        if b"X-NB-Class: spam;" in run(["filter", sample_mail_model, path]).stdout_bytes:
            return path.read_bytes()
    pytest.fail("no sample spam is called spam")


@pytest.fixture
def watching(dovecot, mail_model_copy, tmp_path):
    started = []

    def start(*more):
        args = imap_args(dovecot, mail_model_copy, tmp_path / "state.json", "--idle", *more, tls=False)
        started.append(Process(args))
        return started[-1]

    yield start
    for p in started:
        if p.process.poll() is None:
            p.process.kill()
            p.process.wait()


def test_mail_that_comes_while_idling_is_filed_and_sigterm_exits_0(dovecot, watching, spam_message):
    watch = watching("--poll-seconds", 1)
    assert watch.summary()["classified"] == 0  # the pass at start: an empty inbox
    append(dovecot, "INBOX", [spam_message])
    said = watch.summary()
    assert (said["classified"], said["spam"], said["filed"]) == (1, 1, 1)
    junk = folder(dovecot, "Junk")
    assert [("$junk" in flags, data.replace(b"\r\n", b"\n")) for flags, data in junk.values()] == [
        (True, spam_message.replace(b"\r\n", b"\n"))
    ]
    # the user moves a message nbcli left in the inbox into Junk: learned as spam at the next Junk check
    (ham,) = samples("ham", 1)
    append(dovecot, "INBOX", [ham])
    said = watch.summary()
    while said["classified"] == 0:  # the extra pass its own filing may cause
        said = watch.summary()
    with dovecot.client() as imap:
        imap.select("INBOX")
        uid = imap.uid("SEARCH", "ALL")[1][0].split()[-1]
        assert imap.uid("MOVE", uid, "Junk")[0] == "OK"
    said = watch.summary()
    while said["learned_spam"] == 0:
        said = watch.summary()
    assert said["learned_spam"] == 1
    assert watch.stop() == 0
    assert watch.err.empty()


def test_json_lines_and_sigint_exits_0_too(dovecot, watching, spam_message):
    watch = watching("--json")
    first = json.loads(watch.line(watch.out))
    assert (first["host"], first["classified"]) == ("127.0.0.1", 0)
    append(dovecot, "INBOX", [spam_message])
    second = json.loads(watch.line(watch.out))  # one JSON object per pass, a line each
    assert (second["classified"], second["filed"]) == (1, 1)
    assert watch.stop(signal.SIGINT) == 0


def test_it_reconnects_after_the_server_went_away(dovecot, watching, spam_message):
    watch = watching()
    watch.summary()
    dovecot.stop()
    line = watch.line(watch.err)
    assert line.startswith("nbcli: imap: connection lost ("), line
    dovecot.start()
    watch.summary(seconds=30)  # the pass after the reconnect
    append(dovecot, "INBOX", [spam_message])
    assert watch.summary()["filed"] == 1
    assert watch.stop() == 0
    for line in watch.rest(watch.err):  # one line per attempt, nothing else
        assert line.startswith("nbcli: imap: connection lost ("), line


def test_a_login_refused_on_reconnect_is_one_line_and_exit_1(dovecot, watching):
    watch = watching()
    watch.summary()
    dovecot.stop()
    (dovecot.root / "users").write_text(f"{dovecot.user}:{{PLAIN}}another password\n")
    dovecot.start()
    assert watch.process.wait(timeout=30) == 1
    lines = watch.rest(watch.err)
    assert lines[-1].startswith("nbcli: error: 127.0.0.1:") and "refused the login" in lines[-1], lines
    assert all(line.startswith("nbcli: imap: connection lost (") for line in lines[:-1]), lines
    assert dovecot.password not in "".join(lines)


def test_once_and_idle_together_are_refused(dovecot, mail_model_copy, tmp_path):
    args = imap_args(dovecot, mail_model_copy, tmp_path / "state.json", "--idle", "--once", tls=False)
    result = run(args)
    assert result.exit_code == 2
    assert "--once and --idle contradict each other" in result.stderr


def test_poll_seconds_without_idle_is_refused(dovecot, mail_model_copy, tmp_path):
    result = run(imap_args(dovecot, mail_model_copy, tmp_path / "state.json", "--poll-seconds", 5, tls=False))
    assert result.exit_code == 2
    assert "--poll-seconds is for --idle" in result.stderr


def test_a_closed_stdout_ends_it_with_141_not_reconnects(dovecot, mail_model_copy, tmp_path):
    args = imap_args(dovecot, mail_model_copy, tmp_path / "state.json", "--idle", tls=False)
    process = subprocess.Popen([sys.executable, "-m", "nbcli", *map(str, args)], stdout=subprocess.PIPE)
    try:
        assert process.stdout.readline().startswith(b"imap: ")
        process.stdout.close()  # as `| head -1` would
        (ham,) = samples("ham", 1)
        append(dovecot, "INBOX", [ham])  # the next pass's summary has nowhere to go
        assert process.wait(timeout=30) == 141
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_pass_that_holds_the_state_makes_idle_wait_not_end(dovecot, watching, spam_message, tmp_path):
    """A one-off pass (cron, or --learn-folder from a shell) holding the state file when mail comes: the
    --idle process waits for it and then files the mail, where it used to end with 'another pass is using'."""
    import fcntl
    import os
    import time

    watch = watching("--poll-seconds", 1)
    assert watch.summary()["classified"] == 0
    fd = os.open(tmp_path / ".state.json.lock", os.O_RDWR)  # what a pass in progress holds
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        append(dovecot, "INBOX", [spam_message])
        time.sleep(2)
        assert watch.process.poll() is None and watch.out.empty()  # waiting, not gone, not done
    finally:
        os.close(fd)
    said = watch.summary()
    while said["classified"] == 0:
        said = watch.summary()
    assert (said["spam"], said["filed"]) == (1, 1)
    assert watch.stop() == 0
    assert watch.err.empty()
