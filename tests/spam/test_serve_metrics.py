"""`nbcli serve --metrics` (issue 28, section 3): Prometheus figures summed
over the workers, checked against what was sent and against the request
log; the exposition passes the real `promtool check metrics`, and a real
Prometheus server, started by the test, scrapes it. Both come from Debian's
`prometheus` package, installed by the fixture when missing (skipped, with
the reason, only where it cannot be had)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter

import pytest
from spamd_client import child_pids, exchange, request
from test_serve import HAM_FILE, SPAM_FILE, TRAIN, Server, nbcli

from nbcli.spam.metrics import SharedFigures

from conftest import debian_tool

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and signals")

SAMPLE = re.compile(r"^(\w+)(?:\{(.*)\})? (\S+)$")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("metrics") / "mail.nb"
    nbcli("train", TRAIN, "-o", path, "-q")
    return path


@pytest.fixture(scope="module")
def prometheus_tools():
    """Paths of promtool and prometheus (Debian's package, installed here if missing)."""
    return debian_tool("prometheus", "promtool", "prometheus")


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        assert reply.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return reply.read().decode()


def samples(text: str) -> dict:
    """{(name, frozenset of labels): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        assert m, line
        labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m[2] or ""))
        out[(m[1], labels)] = float(m[3])
    return out


def start_metrics(model, *options):
    srv = Server(model, "--metrics", "127.0.0.1:0", *options)
    line = next(line for line in srv.stderr if "metrics on " in line)
    return srv, re.search(r"(http://\S+/metrics)", line)[1]


def test_200_requests_add_up_in_the_metrics_the_log_and_promtool(model, tmp_path, prometheus_tools):
    promtool, _ = prometheus_tools
    served = tmp_path / "mail.nb"
    shutil.copy(model, served)
    srv, url = start_metrics(served, "--allow-tell", "--max-size", "12000", "--workers", "3")
    spam, ham = SPAM_FILE.read_bytes(), HAM_FILE.read_bytes()
    try:
        sent = Counter()
        for i in range(200):
            kind = i % 8
            if kind in (0, 1):
                request(srv.unix, "CHECK", spam)
            elif kind == 2:
                request(srv.unix, "CHECK", ham)
            elif kind == 3:
                request(srv.unix, "SYMBOLS", ham)
            elif kind == 4:
                request(srv.unix, "CHECK", b"Subject: big\n\n" + b"x" * 13000)
            elif kind == 5:
                exchange(srv.unix, b"CHECK SPAMC/1.5\r\nContent-length: many\r\n\r\n")
            elif kind == 6:
                body = b"Subject: learn %d\n\nwords number %d here\n" % (i, i)
                request(srv.unix, "TELL", body, [("Message-class", "spam"), ("Set", "local")])
            else:
                request(srv.unix, "PROCESS", spam, [("User", "bob")])
            sent[kind] += 1
        log = [line for line in _wait_lines(srv, 200)]
        text = scrape(url)
    finally:
        assert srv.stop() == 0
    assert len(log) == 200
    logged = Counter((m[1], m[2]) for m in (re.match(r"nbcli: request (\S+) (\S+)", line) for line in log))
    figures = samples(text)
    counted = {
        (dict(labels)["verb"], dict(labels)["verdict"]): value
        for (name, labels), value in figures.items()
        if name == "nbcli_requests_total" and value
    }
    expected = {(verb, "error" if verdict.startswith("EX_") else verdict): n for (verb, verdict), n in logged.items()}
    assert counted == expected
    assert sum(counted.values()) == 200
    assert counted[("-", "error")] == sent[5] == 25
    assert figures[("nbcli_errors_total", frozenset({("kind", "EX_PROTOCOL")}))] == 25
    assert counted[("CHECK", "unscored")] == sent[4] and counted[("TELL", "learned-spam")] == sent[6]
    assert figures[("nbcli_tells_total", frozenset({("action", "learn"), ("class", "spam")}))] == sent[6]
    assert figures[("nbcli_request_seconds_count", frozenset())] == 175  # the malformed requests never timed
    assert figures[("nbcli_message_bytes_count", frozenset())] == 200
    sizes = [int(re.search(r" size=(\d+)", line)[1]) for line in log]
    assert figures[("nbcli_message_bytes_sum", frozenset())] == sum(sizes)
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _wait_lines(srv, count, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [line for line in list(srv.stderr) if line.startswith("nbcli: request ")]
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    return [line for line in list(srv.stderr) if line.startswith("nbcli: request ")]


def test_worker_restarts_and_reloads_are_counted_and_counters_never_go_back(model):
    srv, url = start_metrics(model, "--workers", "2")
    try:
        for _ in range(10):
            request(srv.unix, "CHECK", SPAM_FILE.read_bytes())
        before = samples(scrape(url))
        os.kill(child_pids(srv.proc.pid)[0], signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any("ended (" in line for line in srv.stderr):
            time.sleep(0.05)
        os.kill(srv.proc.pid, signal.SIGHUP)
        time.sleep(0.5)
        after = samples(scrape(url))
    finally:
        srv.stop()
    spam = ("nbcli_requests_total", frozenset({("verb", "CHECK"), ("verdict", "spam")}))
    assert before[spam] == after[spam] == 10  # the dead worker's figures stay in its slot
    assert after[("nbcli_worker_restarts_total", frozenset())] == 1
    assert after[("nbcli_reloads_total", frozenset())] == 1
    served = [v for (name, _), v in after.items() if name == "nbcli_model_workers"]
    assert served and sum(served) >= 1


def test_a_client_trickling_its_request_cannot_hold_the_exporter_from_the_next_scrape(model):
    """The exporter answers one scrape at a time; a client that sends a byte
    a second and never ends its head had a 5-second wait per byte and held
    it for as long as it liked. It gets SCRAPE_SECONDS (5) in all."""
    from nbcli.spam.metrics import SCRAPE_SECONDS

    srv, url = start_metrics(model, "--workers", "1")
    host, port = re.search(r"http://([\d.]+):(\d+)/", url).groups()
    try:
        with socket.create_connection((host, int(port))) as slow:
            slow.sendall(b"G")
            time.sleep(0.3)  # the exporter has taken it
            start = time.monotonic()
            waited = {}

            def trickle():
                for byte in b"ET /metrics HTTP/1.0\r\nX-Slow: " + b"a" * 30:
                    if time.monotonic() - start > 3 * SCRAPE_SECONDS:
                        return
                    try:
                        slow.sendall(bytes([byte]))
                    except OSError:
                        return  # cut off
                    time.sleep(1.0)

            thread = threading.Thread(target=trickle, daemon=True)
            thread.start()
            text = scrape(url)  # queued behind the slow one
            waited["seconds"] = time.monotonic() - start
            thread.join(1)
    finally:
        srv.stop()
    assert "nbcli_requests_total" in text
    assert waited["seconds"] < SCRAPE_SECONDS + 2.5


def test_a_real_prometheus_scrapes_the_sum_over_workers(model, tmp_path, prometheus_tools):
    _, prometheus = prometheus_tools
    srv, url = start_metrics(model, "--workers", "3")
    target = url.split("//", 1)[1].split("/", 1)[0]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: nbcli\n"
        f"    static_configs:\n      - targets: ['{target}']\n"
    )
    prom = subprocess.Popen(
        [
            prometheus,
            f"--config.file={tmp_path / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for i in range(60):
            request(srv.unix, "CHECK", (SPAM_FILE if i % 2 else HAM_FILE).read_bytes())
        query = f"http://127.0.0.1:{port}/api/v1/query?query=sum(nbcli_requests_total)"
        value, deadline = None, time.monotonic() + 60
        while time.monotonic() < deadline and value != 60.0:
            time.sleep(1)
            try:
                with urllib.request.urlopen(query, timeout=5) as reply:
                    result = json.loads(reply.read())["data"]["result"]
                value = float(result[0]["value"][1]) if result else None
            except OSError:
                continue
        assert value == 60.0, value
    finally:
        prom.terminate()
        prom.wait(timeout=30)
        srv.stop()


def test_the_exposition_sums_the_rows():
    figures = SharedFigures(2)
    for slot, verdict in ((0, "spam"), (1, "spam"), (1, "ham")):
        figures.use_slot(slot)
        figures.request("CHECK", verdict, None, 0.002, 3000)
    figures.use_slot(2)
    figures.add("reloads")
    got = samples(figures.exposition())
    assert got[("nbcli_requests_total", frozenset({("verb", "CHECK"), ("verdict", "spam")}))] == 2
    assert got[("nbcli_request_seconds_bucket", frozenset({("le", "0.0025")}))] == 3
    assert got[("nbcli_request_seconds_bucket", frozenset({("le", "0.001")}))] == 0
    assert got[("nbcli_message_bytes_sum", frozenset())] == 9000
    assert got[("nbcli_reloads_total", frozenset())] == 1


@pytest.mark.parametrize("address", ["foo", "127.0.0.1:99999", "[::1]:0x", "9783"])
def test_a_bad_metrics_address_is_one_line(model, address):
    done = nbcli_process("serve", model, "--socket", "/tmp/nbcli-unused.sock", "--metrics", address)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr == (
        f"nbcli: error: --metrics {address!r} is not ADDR:PORT with a port from 0 to 65535; "
        "e.g. --metrics 127.0.0.1:9783 (port 0: any free port)\n"
    )


def nbcli_process(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nbcli", *map(str, args)], capture_output=True, text=True, timeout=60)
