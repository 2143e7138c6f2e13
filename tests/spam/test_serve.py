"""`nbcli serve`: the spamd protocol end to end, through real sockets.

The client (tests/spamd_client.py) is written from the protocol documents, not
from nbcli/spam/spamd.py. Servers run as real processes on a Unix socket and an
ephemeral loopback TCP port; each is stopped with SIGTERM and must exit 0.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from spamd_client import (
    build_request,
    connect,
    exchange,
    exim_parse,
    parse_reply,
    read_all,
    request,
    wait_closed,
)

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF

from conftest import SAMPLES, run_process
from mailfixtures import MESSAGES, mbox_of

TRAIN = SAMPLES / "mail" / "train"
TEST = SAMPLES / "mail" / "test"
SPAM_FILE = TEST / "spam" / "0001.eml"
HAM_FILE = TEST / "ham" / "0001.eml"
T_VALUE = round(math.log(DEFAULT_SPAM_CUTOFF / (1 - DEFAULT_SPAM_CUTOFF)), 1)  # 3.9 for 0.98
T_DEFAULT = f"{T_VALUE:.1f}"
H_VALUE = round(math.log(DEFAULT_HAM_CUTOFF / (1 - DEFAULT_HAM_CUTOFF)), 1)  # -2.9 for 0.05
READY_TIMEOUT = 30.0
ADDED = (b"X-Spam-Flag: ", b"X-Spam-Status: ", b"X-NB-Class: ")
ERROR_LINE = re.compile(rb"SPAMD/1\.0 (\d+) [^\r\n]+\r\n")
SYMBOL = re.compile(r"NBCLI_MODEL_([0-9a-f]{6})")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and signals")


# --- servers -------------------------------------------------------------------


class Server:
    """A running `nbcli serve` process: its Unix socket path and TCP address."""

    def __init__(self, model: Path, *options: str, workdir: Path | None = None, listen: bool = True):
        self.own_dir = workdir is None
        self.dir = Path(workdir or tempfile.mkdtemp(prefix="nbs", dir="/tmp"))
        self.unix = str(self.dir / "s.sock")
        args = [sys.executable, "-m", "nbcli", "serve", str(model), "--socket", self.unix, "--port", "0"]
        args += ["--listen", "127.0.0.1"] if listen else []
        args += ["--workers", "2", *options]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self.tcp = self._wait_ready()

    def _drain(self):
        for line in self.proc.stderr:
            text = line.decode("utf-8", "replace")
            self.stderr.append(text)
            self.lines.put(text)

    def _wait_ready(self) -> tuple[str, int]:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if line.startswith("nbcli: serving "):
                assert f"unix:{self.unix}" in line, line
                m = re.search(r"tcp:127\.0\.0\.1:(\d+)", line)
                assert m, line
                return ("127.0.0.1", int(m[1]))
        self.proc.kill()
        pytest.fail(f"server not ready: {''.join(self.stderr)}")

    def address(self, transport: str):
        return self.unix if transport == "unix" else self.tcp

    def stop(self) -> int:
        """SIGTERM, then the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("server did not stop on SIGTERM")
        finally:
            if self.own_dir:
                shutil.rmtree(self.dir, ignore_errors=True)

    def assert_alive(self):
        assert self.proc.poll() is None, "".join(self.stderr)
        assert ping(self.unix).message == "PONG"


def ping(address):
    raw = exchange(address, b"PING SPAMC/1.5\r\n\r\n")
    assert raw.startswith(b"SPAMD/1.5 0 PONG\r\n"), raw
    return parse_reply(raw)


def nbcli(*args) -> subprocess.CompletedProcess:
    result = run_process(args)
    assert result.returncode == 0, result.stderr.decode()
    return result


def model_id(model: Path) -> str:
    return json.loads(nbcli("info", "--json", model).stdout)["model_id"]


def served_id(address, message: bytes, user: str | None = None) -> str:
    """The model id a SYMBOLS request reports."""
    headers = [("User", user)] if user is not None else None
    reply = request(address, "SYMBOLS", message, headers)
    assert reply.code == 0, reply.raw
    m = SYMBOL.search(reply.body.decode())
    assert m, reply.body
    return m[1]


@pytest.fixture(scope="module")
def workdir():
    path = Path(tempfile.mkdtemp(prefix="nbt", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def model(workdir) -> Path:
    path = workdir / "mail.nb"
    nbcli("train", TRAIN, "-o", path, "-q")
    return path


@pytest.fixture(scope="module")
def server(model):
    srv = Server(model, "--timeout", "1", "--max-size", "100000")
    yield srv
    assert srv.stop() == 0, "".join(srv.stderr)


@pytest.fixture
def model_copy(model, tmp_path) -> Path:
    path = tmp_path / "copy.nb"
    shutil.copy(model, path)
    return path


@pytest.fixture(params=["unix", "tcp"])
def address(request, server):
    return server.address(request.param)


# --- helpers on messages -----------------------------------------------------------


def split_off_added(output: bytes, original: bytes) -> tuple[list[bytes], bytes]:
    """Take the added header lines out of PROCESS output: (added lines, the rest).

    They sit at the top of the header block, after a leading From_ line if the
    original has one: X-Spam-Flag (spam only), X-Spam-Status, X-NB-Class. Only
    as many lines are taken as were added, so a message that already has such
    headers keeps its own.
    """
    start = 0
    if original.startswith(b"From "):
        start = original.index(b"\n") + 1
        assert output[:start] == original[:start], "the From_ line must stay first"
    count = 3 if output.startswith(b"X-Spam-Flag: ", start) else 2
    pos, added = start, []
    for _ in range(count):
        end = output.index(b"\n", pos) + 1
        added.append(output[pos:end])
        pos = end
    return added, output[:start] + output[pos:]


def line_ending(message: bytes) -> bytes:
    """The ending of the first header line (a From_ line is not a header)."""
    lines = message.split(b"\n", 2)
    first = lines[1] if message.startswith(b"From ") else lines[0]
    return b"\r\n" if first.endswith(b"\r") else b"\n"


def header_block_end(message: bytes) -> int:
    """The offset just past the empty line that ends the header block (or the end)."""
    m = re.search(rb"\r?\n\r?\n", message)
    return m.end() if m else len(message)


def log_odds(prediction: dict) -> float:
    lp = prediction["log_probabilities"]
    return min(999.9, max(-999.9, lp["spam"] - lp["ham"]))


AWKWARD = dict(MESSAGES)
AWKWARD |= {f"mbox-{name}": mbox_of([MESSAGES[name]]) for name in ("crlf", "no-body", "html-only")}
AWKWARD["8bit-raw"] = b"From: x@example.org\nSubject: \xe9t\xe9 \xff\n\nbody \x80\x81 caf\xc3\xa9\n\n\n"
AWKWARD["crlf-no-final"] = b"Subject: a\r\nFrom: b@example.org\r\n\r\nno final newline"
AWKWARD["spam-sample"] = SPAM_FILE.read_bytes()
AWKWARD["no-header-block"] = b"hello world, no headers here\n"
AWKWARD["blank-first-line"] = b"\nbody only\n"
AWKWARD["from-line-only"] = b"From sender@example.org Tue Mar  3 10:00:00 2026\n"


# --- every verb --------------------------------------------------------------------


def test_ping(address):
    reply = ping(address)
    assert reply.version == "1.5" and reply.code == 0 and reply.body == b""


def test_skip_closes_without_reply(address, server):
    assert exchange(address, b"SKIP SPAMC/1.5\r\n\r\n") == b""
    server.assert_alive()


@pytest.mark.parametrize("path", [SPAM_FILE, HAM_FILE], ids=["spam", "ham"])
def test_check(address, path):
    reply = request(address, "CHECK", path.read_bytes())
    assert (reply.version, reply.code, reply.message) == ("1.1", 0, "EX_OK")
    assert list(reply.headers) == ["spam"] and reply.body == b""
    is_spam, score, _, _, t = reply.spam()
    assert t == T_DEFAULT
    assert is_spam == (path == SPAM_FILE)
    assert (score >= 4.6) == is_spam


@pytest.mark.parametrize("path", [SPAM_FILE, HAM_FILE], ids=["spam", "ham"])
def test_symbols(address, path, model):
    reply = request(address, "SYMBOLS", path.read_bytes())
    assert reply.code == 0 and int(reply.headers["content-length"]) == len(reply.body)
    is_spam = reply.spam()[0]
    symbols = reply.body.decode().rstrip("\r\n").split(",")
    assert symbols[0] == ("NBCLI_SPAM" if is_spam else "NBCLI_HAM")
    assert symbols[1] == f"NBCLI_MODEL_{model_id(model)}"
    # then the evidence terms REPORT lists, as symbol names
    report = request(address, "REPORT", path.read_bytes()).body.decode()
    terms = re.findall(r"(?m)^ +[+-]\d+\.\d\d  (.+?)\r?$", report)
    assert len(symbols) == 2 + len(terms) >= 3
    assert symbols[2:] == ["NB_" + re.sub(r"[^A-Za-z0-9_.:@-]", "_", t)[:64] for t in terms]


@pytest.mark.parametrize("path", [SPAM_FILE, HAM_FILE], ids=["spam", "ham"])
def test_report(address, path):
    reply = request(address, "REPORT", path.read_bytes())
    assert reply.code == 0 and set(reply.headers) == {"spam", "content-length"}
    is_spam, score, *_ = reply.spam()
    text = reply.body.decode()
    assert len(text) > 20
    assert ("spam" if is_spam else "ham") in text.lower()


def test_report_ifspam(address):
    spam = request(address, "REPORT_IFSPAM", SPAM_FILE.read_bytes())
    assert spam.spam()[0] and len(spam.body) > 20 and "content-length" in spam.headers
    ham = request(address, "REPORT_IFSPAM", HAM_FILE.read_bytes())
    assert not ham.spam()[0]
    assert ham.body == b"" and list(ham.headers) == ["spam"], ham.raw


@pytest.mark.parametrize("verb", ["REPORT", "REPORT_IFSPAM", "SYMBOLS"])
@pytest.mark.parametrize("path", [SPAM_FILE, HAM_FILE], ids=["spam", "ham"])
def test_old_layout_as_exim_reads_it(address, verb, path):
    """SPAMC/1.2 (Exim): `SPAMD/1.1 0 EX_OK`, Content-length, blank line, `S/T`, then the report."""
    message = path.read_bytes()
    raw = exchange(address, build_request(verb, message, [("User", "exim")], version="1.2"))
    if verb == "REPORT_IFSPAM" and path == HAM_FILE:  # no report: answered like CHECK (Exim never asks this)
        assert list(parse_reply(raw).headers) == ["spam"], raw
        return
    parsed = exim_parse(raw)
    assert parsed is not None, raw[:200]
    version, score, threshold, _ = parsed
    reply = parse_reply(raw)  # Content-length matches the body
    assert version == "1.1" and "spam" not in reply.headers
    assert reply.body.startswith(f"{score:.1f}/{threshold:.1f}\r\n".encode()), reply.body[:40]
    check = request(address, "CHECK", message).spam()
    assert (score, threshold) == (check[1], check[2])


def test_exim_request_exactly(address):
    """Exim writes User before Content-length, then shuts its sending side."""
    message = SPAM_FILE.read_bytes()
    data = b"REPORT SPAMC/1.2\r\nUser: mail\r\nContent-length: %d\r\n\r\n" % len(message) + message
    parsed = exim_parse(exchange(address, data, half_close=True))
    assert parsed is not None and parsed[1] >= parsed[2] == T_VALUE and parsed[3]


def test_new_layout_is_not_the_old_one(address):
    raw = exchange(address, build_request("REPORT", SPAM_FILE.read_bytes()))
    assert exim_parse(raw) is None  # 1.5 carries a Spam header instead


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_process_adds_headers_and_keeps_every_byte(server, name):
    message = AWKWARD[name]
    reply = request(server.unix, "PROCESS", message)
    assert reply.code == 0 and "spam" in reply.headers
    added, rest = split_off_added(reply.body, message)
    assert rest == message
    is_spam, score, threshold, s, t = reply.spam()
    names = [line.split(b":", 1)[0] for line in added]
    assert names == ([b"X-Spam-Flag"] if is_spam else []) + [b"X-Spam-Status", b"X-NB-Class"]
    eol = line_ending(message)
    assert all(line.endswith(eol) and not line[: -len(eol)].endswith(b"\r") for line in added)
    status = added[-2].decode().rstrip("\r\n")
    assert status.startswith(f"X-Spam-Status: {'Yes' if is_spam else 'No'}, score={s} required={t} tests=NBCLI_")
    m = re.fullmatch(r"X-NB-Class: (\w+); p=([0-9.e-]+); model=([0-9a-f]{6})", added[-1].decode().rstrip("\r\n"))
    assert m, added[-1]
    assert 0.0 <= float(m[2]) <= 1.0
    verdict = "spam" if is_spam else "ham" if score <= H_VALUE else "unsure"  # the ham cut-off's log-odds
    if min(abs(score - H_VALUE), abs(score - T_VALUE)) > 0.1:  # off the rounding edge
        assert m[1] == verdict, added[-1]
        assert f"tests=NBCLI_{verdict.upper()}" in status


def test_process_twice_replaces_the_earlier_x_nb_class(server):
    """A processed message processed again: new X-Spam-* lines on top, the old ones kept, and the one
    X-NB-Class replaced where it stands (as `nbcli filter` does), so a forged one cannot survive."""
    once = request(server.unix, "PROCESS", MESSAGES["crlf"]).body
    twice = request(server.unix, "PROCESS", once).body
    head = twice[: header_block_end(twice)]
    assert len(re.findall(rb"^X-NB-Class: ", head, re.M)) == 1
    assert len(re.findall(rb"^X-Spam-Status: ", head, re.M)) == 2
    strip = re.compile(rb"^X-NB-Class: [^\r\n]*\r?\n", re.M)
    assert strip.sub(b"", twice.split(b"\r\n", 1)[1], count=1) == strip.sub(b"", once, count=1)


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_headers_is_the_header_block_of_process(server, name):
    message = AWKWARD[name]
    processed = request(server.unix, "PROCESS", message).body
    reply = request(server.unix, "HEADERS", message)
    assert reply.code == 0 and "spam" in reply.headers
    expected = processed[: header_block_end(processed)]
    if message.startswith(b"From ") and not reply.body.startswith(b"From "):
        expected = expected[expected.index(b"\n") + 1 :]  # a From_ line is not a header: either way
    assert reply.body == expected


def test_process_and_headers_over_tcp(server):
    message = MESSAGES["crlf"]
    reply = request(server.tcp, "PROCESS", message)
    assert split_off_added(reply.body, message)[1] == message
    headers = request(server.tcp, "HEADERS", message)
    assert headers.body == reply.body[: header_block_end(reply.body)]


def test_check_agrees_with_predict(server, model):
    """Spam iff P(spam) >= the spam cut-off, S = round(log-odds, 1), on every test message."""
    files = sorted(TEST.rglob("*.eml"))
    result = nbcli("predict", "--json", model, *files)
    predictions = {p["id"]: p for p in map(json.loads, result.stdout.decode().splitlines())}
    assert len(predictions) == len(files)
    spams = 0
    for i, path in enumerate(files):
        p = predictions[str(path)]
        address = server.unix if i % 2 else server.tcp
        is_spam, score, threshold, _, t = request(address, "CHECK", path.read_bytes()).spam()
        assert t == T_DEFAULT
        assert is_spam == (p["probabilities"]["spam"] >= DEFAULT_SPAM_CUTOFF), path
        assert abs(score - log_odds(p)) <= 0.05 + 1e-6, (path, score, log_odds(p))
        spams += is_spam
    assert 0 < spams < len(files)


def test_concurrent_clients(server):
    """Many clients at once all get their own answer."""
    messages = [p.read_bytes() for p in sorted(TEST.rglob("*.eml"))[:40]]
    expected = [request(server.unix, "CHECK", m).headers["spam"] for m in messages]
    results: list[str | None] = [None] * len(messages)

    def work(i):
        address = server.unix if i % 2 else server.tcp
        results[i] = request(address, "CHECK", messages[i]).headers["spam"]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(messages))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert results == expected


# --- limits and malformed requests ---------------------------------------------------


def test_oversize_message_is_not_scored(address):
    spam = SPAM_FILE.read_bytes()
    big = spam + b"\n"
    while len(big) <= 150_000:
        big += spam.split(b"\n\n", 1)[1]
    assert len(big) > 100_000
    assert request(address, "CHECK", big).headers["spam"] == f"False ; 0.0 / {T_DEFAULT}"
    assert request(address, "PROCESS", big).body == big


def test_max_size_boundary(server):
    """A message of exactly --max-size bytes is scored; one byte more is not."""
    message = SPAM_FILE.read_bytes() + b"\n"
    while len(message) < 100_000:
        message += b"x" * 60 + b"\n"
    message = message[:100_000]
    assert request(server.unix, "CHECK", message).spam()[0] is True
    assert request(server.unix, "CHECK", message + b"y").headers["spam"] == f"False ; 0.0 / {T_DEFAULT}"


BAD_REQUESTS = {
    "no-version": (b"CHECK\r\n\r\n", {76}),
    "garbage-line": (b"HELLO THERE\r\n\r\n", {76}),
    "bad-protocol": (b"CHECK HTTP/1.1\r\nContent-length: 2\r\n\r\nhi", {76}),
    "unknown-verb": (b"FROB SPAMC/1.5\r\nContent-length: 2\r\n\r\nhi", {76}),
    "lowercase-verb": (b"check SPAMC/1.5\r\nContent-length: 2\r\n\r\nhi", {76}),
    "header-no-colon": (b"CHECK SPAMC/1.5\r\nContent-length 2\r\n\r\nhi", {76}),
    "bad-length": (b"CHECK SPAMC/1.5\r\nContent-length: two\r\n\r\nhi", {64, 65, 76}),
    "negative-length": (b"CHECK SPAMC/1.5\r\nContent-length: -2\r\n\r\nhi", {64, 65, 76}),
    "missing-length": (b"CHECK SPAMC/1.5\r\n\r\nhi", {64, 65, 76}),
    "short-body": (b"CHECK SPAMC/1.5\r\nContent-length: 100\r\n\r\nonly a little", {64, 65, 76}),
    "many-headers": (b"CHECK SPAMC/1.5\r\n" + b"X-A: b\r\n" * 5000 + b"Content-length: 2\r\n\r\nhi", {64, 65, 76}),
    "huge-header": (b"CHECK SPAMC/1.5\r\nX-Big: " + b"a" * 1_000_000 + b"\r\nContent-length: 2\r\n\r\nhi", {65, 76}),
}


@pytest.mark.parametrize("name", sorted(BAD_REQUESTS))
def test_malformed_request_gets_one_error_line(server, name):
    data, codes = BAD_REQUESTS[name]
    raw = exchange(server.unix, data, half_close=True)
    m = ERROR_LINE.fullmatch(raw)
    assert m, raw[:200]
    assert int(m[1]) in codes
    server.assert_alive()


@pytest.mark.parametrize("name", ["garbage-line", "unknown-verb", "short-body", "huge-header"])
def test_malformed_request_over_tcp(server, name):
    data, codes = BAD_REQUESTS[name]
    raw = exchange(server.tcp, data, half_close=True)
    if name != "huge-header" or raw:  # the server may close before reading a megabyte: a reset can eat the answer
        m = ERROR_LINE.fullmatch(raw)
        assert m and int(m[1]) in codes, raw[:200]
    server.assert_alive()


PARTIAL = [b"", b"CHECK SPAMC/1.5\r\nContent-le", b"CHECK SPAMC/1.5\r\nContent-length: 9\r\n\r\nabc"]


@pytest.mark.parametrize("partial", PARTIAL, ids=["nothing", "half-head", "half-body"])
def test_silent_client_times_out_while_others_are_served(server, partial):
    with connect(server.unix) as slow:
        slow.sendall(partial)
        start = time.monotonic()
        for _ in range(3):  # others are served meanwhile
            assert request(server.tcp, "CHECK", HAM_FILE.read_bytes()).code == 0
        assert time.monotonic() - start < 0.9
        data, _ = wait_closed(slow, 6.0)
        waited = time.monotonic() - start
    assert data == b"" or ERROR_LINE.fullmatch(data), data
    assert 0.5 <= waited <= 5.0
    server.assert_alive()


def test_more_silent_clients_than_workers(server):
    """Connections that send nothing hold a slot each, not a worker: with
    more of them than workers, another client is still answered at once."""
    idle = [connect(server.unix) for _ in range(4)]  # the fixture's server runs 2 workers
    try:
        start = time.monotonic()
        ping(server.tcp)
        assert time.monotonic() - start < 0.5
    finally:
        for sock in idle:
            sock.close()


def test_tell_refused_without_allow_tell(server, model):
    before = model.read_bytes()
    headers = [("Message-class", "spam"), ("Set", "local")]
    raw = exchange(server.unix, build_request("TELL", HAM_FILE.read_bytes(), headers))
    assert re.fullmatch(rb"SPAMD/1\.0 69 EX_UNAVAILABLE[^\r\n]*\r\n", raw), raw
    assert model.read_bytes() == before


# --- TELL, reload, users ---------------------------------------------------------------


def test_tell_is_exactly_learn_and_forget(model, model_copy, tmp_path):
    """TELL Set/Remove == `nbcli learn`/`nbcli forget` on a copy; the file is written before the reply."""
    twin = tmp_path / "twin.nb"
    shutil.copy(model, twin)
    original = model_id(model)
    message = HAM_FILE.read_bytes()
    srv = Server(model_copy, "--allow-tell")
    try:
        assert served_id(srv.tcp, message) == original
        reply = request(srv.unix, "TELL", message, [("Message-class", "spam"), ("Set", "local")])
        assert (reply.code, reply.headers.get("didset")) == (0, "local"), reply.raw
        learned = model_id(model_copy)  # read right after the reply: already on disk
        nbcli("learn", twin, "--spam", HAM_FILE, "-q")
        assert learned == model_id(twin) != original
        assert served_id(srv.tcp, message) == learned

        reply = request(srv.tcp, "TELL", message, [("Message-class", "spam"), ("Remove", "local")])
        assert (reply.code, reply.headers.get("didremove")) == (0, "local"), reply.raw
        forgotten = model_id(model_copy)
        nbcli("forget", twin, "--spam", HAM_FILE, "-q")
        assert forgotten == model_id(twin) != learned
        assert served_id(srv.unix, message) == forgotten
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


def test_concurrent_tells_lose_nothing(model_copy, tmp_path, model):
    """TELLs spread over the workers at once: every one lands in the file, as one `nbcli learn` of them all."""
    files = sorted((TEST / "ham").glob("*.eml"))[:12]
    srv = Server(model_copy, "--allow-tell")
    try:
        replies = [None] * len(files)

        def tell(i):
            headers = [("Message-class", "spam"), ("Set", "local")]
            replies[i] = request(srv.address("unix" if i % 2 else "tcp"), "TELL", files[i].read_bytes(), headers)

        threads = [threading.Thread(target=tell, args=(i,)) for i in range(len(files))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert all(r is not None and r.headers.get("didset") == "local" for r in replies), replies
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)
    info = json.loads(nbcli("info", "--json", model_copy).stdout)
    assert info["record"]["per_class"]["spam"] == 210 + len(files)
    twin = tmp_path / "twin.nb"
    shutil.copy(model, twin)
    nbcli("learn", twin, "--spam", *files, "-q")
    assert info["documents"] == json.loads(nbcli("info", "--json", twin).stdout)["documents"]
    stamp = re.compile(rb'"updated": "[^"]*"')
    assert stamp.sub(b"", nbcli("dump", model_copy).stdout) == stamp.sub(b"", nbcli("dump", twin).stdout)


BAD_TELLS = {
    "no-class": [("Set", "local")],
    "bad-class": [("Message-class", "eggs"), ("Set", "local")],
    "set-and-remove": [("Message-class", "spam"), ("Set", "local"), ("Remove", "local")],
    "neither": [("Message-class", "spam")],
}


def test_bad_tell_changes_nothing(model_copy):
    before = model_copy.read_bytes()
    srv = Server(model_copy, "--allow-tell")
    try:
        for name, headers in BAD_TELLS.items():
            raw = exchange(srv.unix, build_request("TELL", HAM_FILE.read_bytes(), headers))
            m = ERROR_LINE.fullmatch(raw)
            assert m and int(m[1]) in (64, 65, 76), (name, raw)
        # Removing what was never learned: nothing removed, nothing claimed.
        reply = request(srv.unix, "TELL", HAM_FILE.read_bytes(), [("Message-class", "spam"), ("Remove", "local")])
        assert "didremove" not in reply.headers, reply.raw
        assert model_copy.read_bytes() == before
        srv.assert_alive()
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


def test_tell_ham_of_a_spam(model_copy, tmp_path, model):
    twin = tmp_path / "twin.nb"
    shutil.copy(model, twin)
    srv = Server(model_copy, "--allow-tell")
    try:
        reply = request(srv.unix, "TELL", SPAM_FILE.read_bytes(), [("Message-class", "ham"), ("Set", "local")])
        assert reply.headers.get("didset") == "local", reply.raw
        nbcli("learn", twin, "--ham", SPAM_FILE, "-q")
        assert model_id(model_copy) == model_id(twin)
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


def test_reload_when_the_model_file_is_replaced(model_copy, tmp_path):
    message = SPAM_FILE.read_bytes()
    srv = Server(model_copy)
    try:
        first = served_id(srv.unix, message)
        assert first == model_id(model_copy)
        nbcli("learn", model_copy, "--ham", SPAM_FILE, "-q")  # replaced by a rename
        second = model_id(model_copy)
        assert second != first
        assert served_id(srv.unix, message) == second
        assert served_id(srv.tcp, message) == second
        nbcli("train", TRAIN, "--alpha", "0.5", "-o", model_copy, "-q")  # trained again over it
        third = model_id(model_copy)
        assert third not in (first, second)
        ids = {served_id(srv.address(t), message) for t in ("unix", "tcp") for _ in range(3)}
        assert ids == {third}
        reply = request(srv.unix, "PROCESS", message)
        assert f"model={third}".encode() in reply.body[: header_block_end(reply.body)]
        srv.proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        srv.assert_alive()
        assert served_id(srv.tcp, message) == third
        # a SIGHUP while the file is damaged keeps the last good model serving (it dropped it: every request failed)
        good = model_copy.read_bytes()
        model_copy.write_bytes(os.urandom(1000))
        srv.proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)
        assert served_id(srv.tcp, message) == third
        assert served_id(srv.unix, message) == third
        model_copy.write_bytes(good)
        assert served_id(srv.tcp, message) == third
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


@pytest.fixture(scope="module")
def users(model, workdir):
    """DIR/alice.nb, plus decoy models outside the rules: each with its own model id."""
    root = workdir / "users"
    (root / "sub").mkdir(parents=True)
    decoys = {
        "alice": root / "alice.nb",
        "secret": workdir / "secret.nb",  # DIR/../secret.nb
        "hidden": root / ".hidden.nb",
        "sub": root / "sub" / "bob.nb",
        "long": root / ("x" * 65 + ".nb"),
    }
    ham_files = sorted((TEST / "ham").glob("*.eml"))
    for i, path in enumerate(decoys.values()):
        shutil.copy(model, path)
        nbcli("learn", path, "--spam", ham_files[i], "-q")
    ids = {name: model_id(path) for name, path in decoys.items()}
    assert len(set(ids.values()) | {model_id(model)}) == len(ids) + 1
    srv = Server(model, "--models-dir", str(root), "--spam-cutoff", "0.9")
    yield srv, ids, model_id(model)
    assert srv.stop() == 0, "".join(srv.stderr)


def test_models_dir_picks_the_user_model(users):
    srv, ids, default = users
    message = HAM_FILE.read_bytes()
    assert served_id(srv.unix, message, "alice") == ids["alice"]
    assert served_id(srv.tcp, message, "alice") == ids["alice"]
    assert served_id(srv.unix, message, "nobody") == default
    assert served_id(srv.unix, message) == default
    assert request(srv.unix, "CHECK", message, [("User", "alice")]).spam()[4] == "2.2"  # ln(0.9 / 0.1)


@pytest.mark.parametrize(
    "user", ["../secret", "..", ".hidden", "sub/bob", "x" * 65, "alice\x00", "/etc/passwd", "./alice"]
)
def test_models_dir_refuses_bad_user_names(users, user):
    srv, ids, default = users
    data = build_request("SYMBOLS", HAM_FILE.read_bytes(), [("User", user)])
    raw = exchange(srv.unix, data)
    if raw.startswith(b"SPAMD/1.0 "):
        assert re.fullmatch(rb"SPAMD/1\.0 67 [^\r\n]+\r\n", raw), raw
    else:
        reply = parse_reply(raw)
        m = SYMBOL.search(reply.body.decode())
        assert m and m[1] == default, (user, reply.body)
    srv.assert_alive()


def test_ready_line_by_default_and_quiet(model):
    """Without --listen, --port 0 is loopback; -q keeps the one ready line."""
    srv = Server(model, "-q", listen=False)
    try:
        ping(srv.tcp)
        ready = [line for line in srv.stderr if line.startswith("nbcli: serving ")]
        assert len(ready) == 1
        assert set(re.findall(r"tcp:(\S+?):\d+", ready[0])) <= {"127.0.0.1", "[::1]"}
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)


# --- SIGTERM ------------------------------------------------------------------------------


def test_sigterm_drains_requests_in_flight(model):
    srv = Server(model)
    message = SPAM_FILE.read_bytes()
    data = build_request("CHECK", message)
    half = len(data) - len(message) // 2
    expected = request(srv.unix, "CHECK", message).headers["spam"]
    with connect(srv.unix) as a, connect(srv.tcp) as b:
        a.sendall(data[:half])
        b.sendall(data[:half])
        time.sleep(0.3)
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        a.sendall(data[half:])
        b.sendall(data[half:])
        replies = [parse_reply(read_all(s)) for s in (a, b)]
    assert [r.headers.get("spam") for r in replies] == [expected, expected]
    assert srv.stop() == 0, "".join(srv.stderr)


def test_sigterm_with_an_idle_client(model):
    """A connected client that sends nothing does not keep a stopping server alive past --timeout."""
    srv = Server(model, "--timeout", "1")
    with connect(srv.tcp) as idle:
        assert ping(srv.unix).code == 0
        start = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.stop() == 0, "".join(srv.stderr)
        assert time.monotonic() - start < 5
        data, _ = wait_closed(idle, 2.0)
        assert data == b"" or ERROR_LINE.fullmatch(data), data


# --- aiospamc, a third-party client ----------------------------------------------------------


def test_aiospamc(server):
    aiospamc = pytest.importorskip("aiospamc", reason="aiospamc is not installed (pip install aiospamc)")
    spam, ham = SPAM_FILE.read_bytes(), HAM_FILE.read_bytes()
    host, port = server.tcp

    async def main():
        tcp = {"host": host, "port": port}
        unix = {"socket_path": Path(server.unix)}
        pong = await aiospamc.ping(**tcp)
        assert pong.status_code == 0 and pong.message == "PONG"
        for where in (tcp, unix):
            checked = await aiospamc.check(spam, **where)
            assert checked.headers.spam.value is True
            assert checked.headers.spam.threshold == pytest.approx(T_VALUE)
            assert (await aiospamc.check(ham, **where)).headers.spam.value is False
            processed = await aiospamc.process(ham, **where)
            assert split_off_added(processed.body, ham)[1] == ham
            headers = await aiospamc.headers(ham, **where)
            assert b"X-NB-Class: " in headers.body
            report = await aiospamc.report(spam, **where)
            assert report.body and report.headers.spam.value is True
            symbols = await aiospamc.symbols(spam, **where)
            assert symbols.body.startswith(b"NBCLI_SPAM,")
            assert (await aiospamc.report_if_spam(ham, **where)).body == b""
        with pytest.raises(aiospamc.responses.UnavailableException):
            await aiospamc.tell(ham, "spam", set_action="local", **tcp)

    asyncio.run(main())


def test_a_repeated_content_length_is_refused(server):
    raw = exchange(server.unix, b"CHECK SPAMC/1.5\r\nContent-length: 5\r\nContent-length: 7\r\n\r\nhello")
    assert raw.startswith(b"SPAMD/1.0 76 EX_PROTOCOL") and raw.count(b"\r\n") == 1


def test_a_zlib_compressed_message_is_scored_as_the_plain_one(server):
    import zlib

    plain = request(server.unix, "CHECK", SPAM_FILE.read_bytes())
    packed = zlib.compress(SPAM_FILE.read_bytes())
    compressed = request(server.unix, "CHECK", packed, [("Compress", "zlib")])
    assert compressed.code == 0 and compressed.headers["spam"] == plain.headers["spam"]
    bad = exchange(server.unix, b"CHECK SPAMC/1.5\r\nCompress: zlib\r\nContent-length: 3\r\n\r\nabc")
    assert bad.startswith(b"SPAMD/1.0 65 EX_DATAERR")


def test_a_zlib_body_inflates_to_no_more_than_max_size_allows(server):
    """A zlib bomb costs no more memory than a plain message may: 8 MB of
    zeros (8 KB packed) is refused past --max-size and its margin."""
    import zlib

    bomb = zlib.compress(b"Subject: x\n\n" + b"0" * (8 << 20), 9)
    reply = request(server.unix, "CHECK", bomb, [("Compress", "zlib")])
    assert reply.code == 65 and b"--max-size" in reply.raw


def test_a_damaged_replacement_keeps_the_last_good_model_serving(model_copy):
    srv = Server(model_copy, "--timeout", "1")
    try:
        before = request(srv.unix, "CHECK", SPAM_FILE.read_bytes())
        broken = model_copy.with_name("broken.nb")
        broken.write_bytes(model_copy.read_bytes()[:1000])
        os.replace(broken, model_copy)  # replaced (as every nbcli writer does: a new file) by something broken
        after = request(srv.unix, "CHECK", SPAM_FILE.read_bytes())
        assert after.code == 0 and after.headers["spam"] == before.headers["spam"]
    finally:
        assert srv.stop() == 0
