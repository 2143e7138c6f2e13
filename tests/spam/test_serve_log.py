"""`nbcli serve`'s log (issue 28, section 3): one line per request, in text or
JSON, to standard error or syslog, and the daemon's own events; never the
message beyond its Message-ID. Servers are real processes (test_serve's
`Server`); syslog is a datagram socket the test binds in place of /dev/log."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sys
import time

import pytest
from spamd_client import child_pids, exchange, request
from test_serve import HAM_FILE, SPAM_FILE, TRAIN, Server, nbcli

from nbcli.spam.requestlog import RequestLog, clean, message_id

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and signals")

REQUEST_LINE = re.compile(r"^nbcli: request (\S+) (\S+)(.*)$")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("log") / "mail.nb"
    nbcli("train", TRAIN, "-o", path, "-q")
    return path


def _wait_for(lines: list, count: int, pattern, timeout: float = 10.0) -> list:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [line for line in list(lines) if pattern(line)]
        if len(found) >= count:
            return found
        time.sleep(0.05)
    return [line for line in list(lines) if pattern(line)]


def _traffic(srv) -> dict:
    """Spam, ham, an oversize message, a malformed request and a TELL: {what: the raw reply}."""
    spam, ham = SPAM_FILE.read_bytes(), HAM_FILE.read_bytes()
    tell = [("Message-class", "ham"), ("Set", "local"), ("User", "alice")]
    return {
        "spam": request(srv.unix, "CHECK", spam, [("User", "bob")]).raw,
        "ham": request(srv.unix, "SYMBOLS", ham).raw,
        "oversize": request(srv.unix, "CHECK", b"Subject: big\n\n" + b"x" * 13000).raw,
        "malformed": exchange(srv.unix, b"CHECK SPAMC/1.5\r\nContent-length: many\r\n\r\n"),
        "tell": request(srv.unix, "TELL", spam, tell).raw,
    }


def test_every_request_is_one_text_line_and_no_message_content(model, tmp_path):
    served = tmp_path / "mail.nb"
    served.write_bytes(model.read_bytes())
    srv = Server(served, "--allow-tell", "--max-size", "12000", "--workers", "1")
    try:
        replies = _traffic(srv)
        lines = _wait_for(srv.stderr, 5, lambda line: line.startswith("nbcli: request "))
        pid = child_pids(srv.proc.pid)[0]
    finally:
        assert srv.stop() == 0
    assert len(lines) == 5, srv.stderr
    parsed = []
    for line in lines:
        m = REQUEST_LINE.match(line.rstrip("\n"))
        assert m, line
        parsed.append((m[1], m[2], dict(word.split("=", 1) for word in m[3].split())))
    by_verb = {(verb, fields.get("user")): (verdict, fields) for verb, verdict, fields in parsed}
    verdict, fields = by_verb[("CHECK", "bob")]
    assert verdict == "spam" and b"Spam: True ; " + fields["score"].encode() + b" / 3.9" in replies["spam"]
    assert fields["required"] == "3.9" and fields["worker"] == str(pid)
    assert fields["mid"] == message_id(SPAM_FILE.read_bytes()) and fields["mid"].startswith("<")
    assert int(fields["size"]) == len(SPAM_FILE.read_bytes()) and float(fields["seconds"]) < 5
    assert by_verb[("SYMBOLS", None)][0] == "ham"
    assert by_verb[("TELL", "alice")][0] == "learned-ham"
    verdicts = sorted(v for _, v, _ in parsed)
    assert "unscored" in verdicts and "EX_PROTOCOL" in verdicts, verdicts
    log = "".join(srv.stderr)
    body_words = [w for w in re.findall(rb"[a-z]{6,}", SPAM_FILE.read_bytes().split(b"\n\n", 1)[1])][:20]
    assert body_words and not any(w.decode() in log for w in body_words)  # nothing of the message itself
    assert "Subject" not in log


def test_json_lines_add_up_to_what_was_sent(model, tmp_path):
    srv = Server(model, "--log-format", "json", "--max-size", "2000", "--workers", "2")
    try:
        sent = {True: 0, False: 0}
        for i in range(30):
            path = SPAM_FILE if i % 3 else HAM_FILE
            reply = request(srv.unix, "CHECK", path.read_bytes(), [("User", f"u{i % 4}")])
            sent[b"Spam: True" in reply.raw] += 1
        os.kill(srv.proc.pid, signal.SIGHUP)
        lines = _wait_for(srv.stderr, 30, lambda line: line.startswith('{"event": "request"'))
        events = _wait_for(srv.stderr, 1, lambda line: line.startswith('{"event": "reload"'))
    finally:
        assert srv.stop() == 0
    records = [json.loads(line) for line in lines]
    assert len(records) == 30
    got = {flag: sum((r["verdict"] == "spam") == flag for r in records) for flag in (True, False)}
    assert got == sent and sent[True] and sent[False]
    assert all(
        set(r) == {"event", "verb", "verdict", "score", "required", "user", "size", "seconds", "mid", "worker"}
        for r in records
    )
    assert {r["user"] for r in records} == {"u0", "u1", "u2", "u3"}
    assert len(events) == 1 and json.loads(events[0])["workers"] == 2
    assert any(json.loads(line)["event"] == "start" for line in srv.stderr if line.startswith("{"))
    assert any(json.loads(line)["event"] == "stop" for line in srv.stderr if line.startswith("{"))


def test_syslog_gets_the_lines_and_the_worker_restarts(model, tmp_path):
    path = str(tmp_path / "log.sock")
    sink = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sink.bind(path)
    sink.settimeout(10)
    srv = Server(model, "--syslog", "mail", "--syslog-socket", path, "--workers", "1")
    try:
        request(srv.unix, "CHECK", SPAM_FILE.read_bytes())
        worker = child_pids(srv.proc.pid)[0]
        os.kill(worker, signal.SIGKILL)
        got = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(b"worker-exit" in g for g in got):
            got.append(sink.recv(65536))
    finally:
        assert srv.stop() == 0
        sink.close()
    text = [g.decode() for g in got]
    start = [t for t in text if " start " in t]
    assert start and start[0].startswith(f"<22>nbcli[{srv.proc.pid}]: start ")  # mail.info = 2 * 8 + 6
    req = [t for t in text if ": request CHECK spam " in t]
    assert req and req[0].startswith(f"<22>nbcli[{worker}]: request CHECK spam score=")
    died = [t for t in text if "worker-exit" in t]
    assert died and died[0].startswith("<20>") and f"worker={worker}" in died[0]  # mail.warning
    assert not any("request" in line for line in srv.stderr)  # syslog instead of standard error


def test_quiet_logs_no_requests(model):
    srv = Server(model, "-q", "--workers", "1")
    try:
        request(srv.unix, "CHECK", SPAM_FILE.read_bytes())
        time.sleep(0.3)
    finally:
        assert srv.stop() == 0
    assert not any("request" in line for line in srv.stderr)


def test_client_values_stay_one_word_and_short():
    assert clean("alice bob\r\nX-Evil: 1") == "alice_bob__X-Evil:_1"
    assert len(clean("x" * 5000)) == 200
    assert message_id(b"Subject: a\nMessage-ID:\n <a@b>\n\nbody") == "<a@b>"
    assert message_id(b"Subject: a\n\nMessage-ID: <in@body>\n") is None
    assert message_id(b"") is None
    line = RequestLog("text").line("request", {"verb": "CHECK", "verdict": "ham", "score": -2.0, "user": None})
    assert line == "request CHECK ham score=-2.0"
