"""`nbcli serve --metrics ADDR:PORT`: the daemon's figures in Prometheus's
text exposition format (version 0.0.4), summed over its pre-forked workers.

Why by hand and not `prometheus_client`: its multi-process mode keeps one
memory-mapped file per process and metric in a folder the administrator
must create, empty at every start and clean after dead workers; nbcli's
workers are forked by one supervisor, so one anonymous shared mapping,
made before the first fork, does the same with nothing on disk and no new
dependency. The mapping holds a row of float64 cells per worker slot (and
one for the supervisor): a worker only ever adds to its own row, a worker
restarted in the same slot goes on from its predecessor's figures (counters
never go back), and the exporter, a process of its own forked by the
supervisor (no thread in a process that forks), sums the rows when
scraped. An aligned 8-byte store is atomic on the machines nbcli runs on,
so a scrape reads each cell whole.

Figures: requests by verb and verdict (the request log's verdicts; an
error is counted under verdict "error" and by its EX_ name in
`nbcli_errors_total`), latency and message-size histograms, TELLs learned
by class and forgotten, reloads, worker restarts, open connections, and
the served model's id and documents as each worker has it loaded.
"""

from __future__ import annotations

import mmap
import os
import time

import numpy as np

VERBS = ("CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS", "HEADERS", "TELL", "-")
VERDICTS = ("spam", "ham", "unsure", "unscored", "learned-spam", "learned-ham", "forgot", "unchanged", "error")
ERRORS = (
    "EX_USAGE",
    "EX_DATAERR",
    "EX_NOINPUT",
    "EX_NOUSER",
    "EX_UNAVAILABLE",
    "EX_SOFTWARE",
    "EX_CANTCREAT",
    "EX_IOERR",
    "EX_TEMPFAIL",
    "EX_PROTOCOL",
    "EX_NOPERM",
    "EX_CONFIG",
    "EX_TIMEOUT",
)
SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BYTES = (1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216)


def _layout():
    cells, at = {}, 0
    for name, size in (
        ("requests", len(VERBS) * len(VERDICTS)),
        ("errors", len(ERRORS)),
        ("seconds", len(SECONDS) + 2),  # buckets (not cumulative here), +Inf, sum
        ("bytes", len(BYTES) + 2),
        ("tells", 3),  # learned spam, learned ham, forgotten
        ("reloads", 1),
        ("restarts", 1),
        ("open", 1),
        ("documents", 1),
    ):
        cells[name] = slice(at, at + size)
        at += size
    return cells, at


CELLS, ROW = _layout()
ID_BYTES = 32  # the served model's id, ASCII, per row


class SharedFigures:
    """The shared rows: `rows` workers and the supervisor's (the last)."""

    def __init__(self, workers: int):
        self.rows = workers + 1
        self.row_bytes = ROW * 8 + ID_BYTES
        self.memory = mmap.mmap(-1, self.rows * self.row_bytes)
        self.slot = workers  # the supervisor's row until `use_slot`

    def use_slot(self, slot: int) -> None:
        """In a worker: add to row `slot` from now on."""
        self.slot = slot

    def _row(self, slot: int) -> np.ndarray:
        return np.frombuffer(self.memory, dtype=np.float64, count=ROW, offset=slot * self.row_bytes)

    def add(self, name: str, index: int = 0, amount: float = 1.0) -> None:
        row = self._row(self.slot)
        row[CELLS[name].start + index] += amount

    def set(self, name: str, value: float) -> None:
        self._row(self.slot)[CELLS[name].start] = value

    def request(self, verb: str, verdict: str, error: str | None, seconds: float | None, size: int) -> None:
        """Count one request (its verdict as the request log names it)."""
        v = VERBS.index(verb) if verb in VERBS else VERBS.index("-")
        d = VERDICTS.index("error" if error else verdict if verdict in VERDICTS else "error")
        self.add("requests", v * len(VERDICTS) + d)
        if error:
            self.add("errors", ERRORS.index(error) if error in ERRORS else ERRORS.index("EX_SOFTWARE"))
        if seconds is not None:
            self._observe("seconds", SECONDS, seconds)
        self._observe("bytes", BYTES, float(size))
        if verdict in ("learned-spam", "learned-ham", "forgot") and not error:
            self.add("tells", ("learned-spam", "learned-ham", "forgot").index(verdict))

    def _observe(self, name: str, bounds, value: float) -> None:
        i = next((i for i, bound in enumerate(bounds) if value <= bound), len(bounds))
        self.add(name, i)
        self.add(name, len(bounds) + 1, value)

    def model(self, model_id: str, documents: float) -> None:
        """The served model this row's worker has loaded."""
        start = self.slot * self.row_bytes + ROW * 8
        self.memory[start : start + ID_BYTES] = model_id.encode("ascii", "replace")[:ID_BYTES].ljust(ID_BYTES, b"\0")
        self.set("documents", documents)

    def _model_of(self, slot: int) -> str:
        start = slot * self.row_bytes + ROW * 8
        return bytes(self.memory[start : start + ID_BYTES]).rstrip(b"\0").decode("ascii", "replace")

    def exposition(self) -> str:
        """The figures summed over every row, in Prometheus's text format."""
        rows = np.array([self._row(slot).copy() for slot in range(self.rows)])
        total = rows.sum(axis=0)
        out: list[str] = []

        def family(name, kind, text):
            out.append(f"# HELP {name} {text}")
            out.append(f"# TYPE {name} {kind}")

        family("nbcli_requests_total", "counter", "Requests answered, by verb and verdict.")
        cells = total[CELLS["requests"]].reshape(len(VERBS), len(VERDICTS))
        for v, verb in enumerate(VERBS):
            for d, verdict in enumerate(VERDICTS):
                if cells[v, d] or (verb == "CHECK" and verdict in ("spam", "ham")):
                    out.append(f'nbcli_requests_total{{verb="{verb}",verdict="{verdict}"}} {_number(cells[v, d])}')
        family("nbcli_errors_total", "counter", "Requests answered with an error, by its spamd EX_ name.")
        for i, kind in enumerate(ERRORS):
            out.append(f'nbcli_errors_total{{kind="{kind}"}} {_number(total[CELLS["errors"]][i])}')
        for name, bounds, unit in (
            ("nbcli_request_seconds", SECONDS, "Seconds from a complete request to its reply."),
            ("nbcli_message_bytes", BYTES, "Size of the messages in requests, in bytes."),
        ):
            family(name, "histogram", unit)
            cells = total[CELLS["seconds" if "seconds" in name else "bytes"]]
            running = 0.0
            for i, bound in enumerate(bounds):
                running += cells[i]
                out.append(f'{name}_bucket{{le="{_number(bound)}"}} {_number(running)}')
            running += cells[len(bounds)]
            out.append(f'{name}_bucket{{le="+Inf"}} {_number(running)}')
            out.append(f"{name}_sum {repr(float(cells[len(bounds) + 1]))}")
            out.append(f"{name}_count {_number(running)}")
        family("nbcli_tells_total", "counter", "TELLs that changed a model: learned by class, or forgotten.")
        tells = total[CELLS["tells"]]
        out.append(f'nbcli_tells_total{{action="learn",class="spam"}} {_number(tells[0])}')
        out.append(f'nbcli_tells_total{{action="learn",class="ham"}} {_number(tells[1])}')
        out.append(f'nbcli_tells_total{{action="forget",class=""}} {_number(tells[2])}')
        family("nbcli_reloads_total", "counter", "SIGHUPs: the workers read their models again.")
        out.append(f"nbcli_reloads_total {_number(total[CELLS['reloads']][0])}")
        family("nbcli_worker_restarts_total", "counter", "Workers that ended and were started again.")
        out.append(f"nbcli_worker_restarts_total {_number(total[CELLS['restarts']][0])}")
        family("nbcli_open_connections", "gauge", "Client connections the workers hold now.")
        out.append(f"nbcli_open_connections {_number(total[CELLS['open']][0])}")
        served: dict[str, tuple[int, float]] = {}
        for slot in range(self.rows - 1):
            model_id = self._model_of(slot)
            if model_id:
                workers, _ = served.get(model_id, (0, 0.0))
                served[model_id] = (workers + 1, float(rows[slot][CELLS["documents"]][0]))
        family("nbcli_model_workers", "gauge", "Workers that have the served model loaded, by its model id.")
        for model_id, (workers, _) in sorted(served.items()):
            out.append(f'nbcli_model_workers{{model_id="{model_id}"}} {workers}')
        family("nbcli_model_documents", "gauge", "Documents the served model has learned, by its model id.")
        for model_id, (_, documents) in sorted(served.items()):
            out.append(f'nbcli_model_documents{{model_id="{model_id}"}} {_number(documents)}')
        return "\n".join(out) + "\n"


def _number(value: float) -> str:
    value = float(value)
    return str(int(value)) if value == int(value) else repr(value)


SCRAPE_SECONDS = 5.0  # a scrape's request head must arrive within this, in all


def serve_exposition(figures: SharedFigures, sock) -> None:
    """The exporter process: answer GET /metrics on the bound, listening
    socket `sock` until SIGTERM (one request at a time: a scrape is small,
    and a client gets SCRAPE_SECONDS in all to send its request, so one
    that trickles bytes cannot hold the exporter from the next scrape)."""
    import signal

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})  # blocked at fork
    try:  # the exporter dies with the supervisor (Linux), as the workers do
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
    sock.setblocking(True)
    while True:
        try:
            conn, _ = sock.accept()
        except InterruptedError:
            continue
        except OSError:
            os._exit(0)
        with conn:
            deadline = time.monotonic() + SCRAPE_SECONDS  # in all: a client trickling a byte at a time is cut off
            try:
                head = b""
                while b"\r\n\r\n" not in head and len(head) < 8192:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError
                    conn.settimeout(left)
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    head += chunk
                line = head.split(b"\r\n", 1)[0].split()
                if len(line) >= 2 and line[0] == b"GET" and line[1].split(b"?")[0] in (b"/metrics", b"/"):
                    body = figures.exposition().encode()
                    status, kind = b"200 OK", b"text/plain; version=0.0.4; charset=utf-8"
                else:
                    body, status, kind = b"GET /metrics\n", b"404 Not Found", b"text/plain"
                conn.sendall(
                    b"HTTP/1.0 "
                    + status
                    + b"\r\nContent-Type: "
                    + kind
                    + b"\r\nContent-Length: "
                    + str(len(body)).encode()
                    + b"\r\nConnection: close\r\n\r\n"
                    + body
                )
            except OSError:
                pass


def parse_address(value: str) -> tuple[str, int]:
    """'ADDR:PORT' (ADDR a host or [IPv6], empty: 127.0.0.1) as (host, port);
    anything else is a ParameterError naming `metrics`."""
    from nbcli.errors import ParameterError

    host, colon, port = value.rpartition(":")
    if not colon or not port.isdigit() or int(port) > 65535:
        raise ParameterError(
            "metrics",
            "{metrics} {value!r} is not ADDR:PORT with a port from 0 to 65535",
            hint="e.g. {metrics} 127.0.0.1:9783 (port 0: any free port)",
            value=value,
        )
    return host.strip("[]") or "127.0.0.1", int(port)
