"""The spamd fuzz harness: malformed and mutated requests against a running `nbcli serve`.

Used by tests/spam/test_serve_fuzz.py (a seeded sample of a few hundred requests)
and tools/fuzz_serve.py (`make fuzz-serve`, 20,000). Requests are built from
the sample messages, then broken: heads (request line, versions, header
names and values, line ends, NULs, huge or many headers), Content-length
(missing, short, long, negative, repeated, enormous), compression (zlib
that is good, corrupt, a bomb, an unknown method), verbs (every one, made
up, lower case), users (per-user models, traversal, over-long, 8-bit), and
the bytes themselves (flips, cuts, repeats). Most are sent with the sending
side shut afterwards, as libspamc does; some are left open (the server's
deadline must end them) and some trickle in pieces.

The checks: every reply is a valid spamd reply (an error is one line
`SPAMD/1.0 <code> EX_<name> <text>`) or a closed connection; no reply takes
longer than --timeout (plus slack); after each batch the daemon still
answers a correct CHECK with the right verdict; no worker dies (the
supervisor's "worker ... ended" lines); the model file is unchanged (TELL
is not allowed); the workers' memory is reported before and after.

With tell=True the daemon runs with --allow-tell (--user-tell own, the
default) and keeps a journal at any model size (JOURNAL_LAUNCHER: the
sample model is under the 4 MB from which nbcli keeps one, so TELLs would
rewrite it whole and the journal, its followers and its compactions would
go untested), so the mutated TELLs reach the learning loop: users'
own models are made, taught and compacted while CHECKs are scored from
them. Beside the fuzz, one client sends well-formed TELLs for the user
`oracle` one after another (learn as spam or ham, forget, from a few
messages, so that some are learned again, moved or forgotten; some
compressed), and the checks add: each of those replies says DidSet or
DidRemove exactly when learning the same message in memory, in the same
order, from the shared model (`fit.learning.learn` and `forget`, the
rebuild path, not the journal's) changed the model; oracle.nb read
through its journal has that model's id; every user's model reads
through its journal and compacts to the same model id; the shared model
and the model outside --models-dir are unchanged (a TELL naming no user
or a path is refused).
"""

from __future__ import annotations

import functools
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from spamd_client import build_request, child_pids, parse_reply, read_all, rss_kb

REPO = Path(__file__).resolve().parent.parent
SAMPLE_MAIL = REPO / "sample_corpora" / "mail"
SPAM = (SAMPLE_MAIL / "test" / "spam" / "0001.eml").read_bytes()
ERROR = re.compile(rb"SPAMD/1\.0 (\d+) EX_[A-Z]+ [^\r\n]*\r\n")
VERBS = ["CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS", "HEADERS", "PING", "SKIP", "TELL"]
ODD_VERBS = ["check", "FROB", "CHECKS", "GET", "", "PING PONG", "TELL\x00", "A" * 30, "REPORT_IF_SPAM"]
USERS = ["alice", "nobody", "../secret", "..", ".hidden", "sub/bob", "x" * 70, "al\x00ice", "/etc/passwd", "élan"]
MAX_SIZE = 100_000
ORACLE_USER = "oracle"
# `nbcli` with a journal kept at any model size (tell=True; the workers are forked, so they keep it)
JOURNAL_LAUNCHER = (
    "import sys; from nbcli.store import modelfile; modelfile.JOURNAL_MIN_BYTES = 0; "
    "from nbcli.cli.main import main; sys.argv[0] = 'nbcli'; main()"
)


@functools.cache
def bomb() -> bytes:
    return zlib.compress(b"\0" * (80 << 20), 9)


def sample_messages() -> list[bytes]:
    return [p.read_bytes() for p in sorted(SAMPLE_MAIL.rglob("*.eml"))]


@dataclass
class Case:
    data: bytes
    what: str
    half_close: bool = True  # shut the sending side after the data, as spamc does
    pieces: int = 1  # sent in this many writes, a little apart


def make_case(rng: random.Random, messages: list[bytes]) -> Case:
    """One request, most of them broken in one or more ways."""
    message = rng.choice(messages)
    kind = rng.random()
    if kind < 0.05:
        message = message * rng.randint(60, 200)  # over --max-size: answered unscored (or refused) unread
    elif kind < 0.08:
        message = b""
    verb = rng.choice(VERBS) if rng.random() < 0.9 else rng.choice(ODD_VERBS)
    version = rng.choice(["1.5", "1.5", "1.2", "1.3", "1.0", "9.9", "0.0", "1", "1.5.1", "x"])
    headers: list[tuple[str, str]] = []
    what = [verb or "no-verb"]
    body = message
    if rng.random() < 0.25:
        headers.append(("User", rng.choice(USERS)))
        what.append("user")
    if rng.random() < 0.15:
        what.append("zlib")
        method = rng.random()
        if method < 0.5:
            body = zlib.compress(message)
        elif method < 0.7:
            body = zlib.compress(message)[: rng.randint(0, 40)]  # corrupt
        elif method < 0.85:
            body = bomb()  # 80 MB from ~80 KB
        headers.append(("Compress", "zlib" if method < 0.85 else rng.choice(["gzip", "ZLIB", "", "zlib, br"])))
    if verb == "TELL" or rng.random() < 0.05:
        headers += rng.sample(
            [("Message-class", rng.choice(["spam", "ham", "eggs"])), ("Set", "local"), ("Remove", "local")],
            rng.randint(0, 3),
        )
    data = build_request(verb if verb in VERBS else "CHECK", body, headers, version)
    if verb not in VERBS:
        data = data.replace(b"CHECK", verb.encode("utf-8", "replace"), 1)
    if verb in ("PING", "SKIP") and rng.random() < 0.7:
        data = f"{verb} SPAMC/{version}\r\n\r\n".encode()
    head_end = data.find(b"\r\n\r\n") + 4
    head, rest = data[:head_end], data[head_end:]
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        head, rest, name = mutate(rng, head, rest)
        what.append(name)
    case = Case(head + rest, "+".join(what))
    roll = rng.random()
    if roll < 0.03:
        case.half_close = False  # the server must time it out, or answer a complete one
    elif roll < 0.08:
        case.pieces = rng.randint(2, 6)
    return case


def mutate(rng: random.Random, head: bytes, rest: bytes) -> tuple[bytes, bytes, str]:
    """One change to a request's head or body."""
    choice = rng.randrange(16)
    lines = head.split(b"\r\n")
    if choice == 0:
        return head.replace(b"\r\n", b"\n"), rest, "lf"
    if choice == 1:
        length = len(rest) + rng.choice([-5, -1, 1, 7, 10**6, 10**9, 10**13])
        return re.sub(rb"Content-length: \d+", b"Content-length: %d" % max(length, 0), head), rest, "length"
    if choice == 2:
        value = rng.choice([b"-3", b"two", b"", b"0x10", b" 12", b"1e3", b"99999999999999999"])
        return re.sub(rb"Content-length: \d+", b"Content-length: " + value, head), rest, "bad-length"
    if choice == 3:
        return head.replace(b"Content-length", b"Content-length: 1\r\nContent-length", 1), rest, "two-lengths"
    if choice == 4:
        return re.sub(rb"Content-length: \d+\r\n", b"", head), rest, "no-length"
    if choice == 5:
        pos = rng.randrange(len(head)) if head else 0
        return head[:pos] + bytes([rng.randrange(256)]) + head[pos + 1 :], rest, "flip-head"
    if choice == 6 and rest:
        pos = rng.randrange(len(rest))
        return head, rest[:pos] + bytes([rng.randrange(256)]) + rest[pos + 1 :], "flip-body"
    if choice == 7:
        return head, rest[: rng.randrange(len(rest) + 1)], "short-body"
    if choice == 8:
        return head, rest + rng.randbytes(rng.randint(1, 300)), "long-body"
    if choice == 9:
        extra = b"".join(b"X-H%d: v\r\n" % i for i in range(rng.choice([31, 33, 500])))
        return lines[0] + b"\r\n" + extra + b"\r\n".join(lines[1:]), rest, "many-headers"
    if choice == 10:
        big = b"X-Big: " + b"a" * rng.choice([100, 16_000, 20_000, 300_000]) + b"\r\n"
        return lines[0] + b"\r\n" + big + b"\r\n".join(lines[1:]), rest, "big-header"
    if choice == 11:
        bad = rng.choice([b"NoColon", b": empty-name", b"Sp ace: x", b"X-\x00: y", b"\xff\xfe: z", b"X: \x01\x02"])
        return lines[0] + b"\r\n" + bad + b"\r\n" + b"\r\n".join(lines[1:]), rest, "bad-header"
    if choice == 12:
        cut = rng.randrange(len(head) + 1)
        return head[:cut], b"", "cut-head"
    if choice == 13:
        return head.replace(b"\r\n\r\n", b"\r\n", 1), rest, "no-blank-line"
    if choice == 14:
        return b"\r\n" * rng.randint(1, 3) + head, rest, "leading-blank"
    return head + head, rest, "two-heads"


def valid_reply(raw: bytes) -> str | None:
    """None when `raw` is a valid spamd reply or nothing (closed); else what is wrong."""
    if raw == b"":
        return None
    if raw.startswith(b"SPAMD/1.0 "):
        return None if ERROR.fullmatch(raw) else f"bad error line {raw[:120]!r}"
    if raw == b"SPAMD/1.5 0 PONG\r\n":
        return None
    try:
        reply = parse_reply(raw)
    except ValueError as exc:
        return f"unparsable reply: {exc}"
    if (reply.version, reply.code, reply.message) != ("1.1", 0, "EX_OK"):
        return f"bad status line {raw[:60]!r}"
    if "spam" in reply.headers:
        try:
            reply.spam()
        except ValueError as exc:
            return str(exc)
    return None


def send(address, case: Case, timeout: float) -> tuple[bytes, float]:
    """(reply, seconds from the first byte sent to the end of the reply)."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(address)
        start = time.monotonic()
        try:
            step = max(1, len(case.data) // case.pieces)
            for i in range(0, len(case.data), step):
                sock.sendall(case.data[i : i + step])
                if case.pieces > 1:
                    time.sleep(0.02)
            if case.half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered and closed before taking it all
            pass
        try:
            raw = read_all(sock)
        except TimeoutError:
            raw = b"<no reply: client timeout>"
    return raw, time.monotonic() - start


class Daemon:
    """`nbcli serve` on a Unix socket and a loopback port, TELL not allowed
    (or allowed, with a journal at any size: tell=True), --max-size 100 KB,
    per-user models (alice.nb) in a folder beside it."""

    def __init__(self, model: Path, timeout: float, workers: int = 2, tell: bool = False):
        self.dir = Path(tempfile.mkdtemp(prefix="nbf", dir="/tmp"))
        self.model = self.dir / "mail.nb"
        shutil.copy(model, self.model)
        (self.dir / "users").mkdir()
        shutil.copy(model, self.dir / "users" / "alice.nb")
        shutil.copy(model, self.dir / "secret.nb")
        self.before = self.model.read_bytes()
        self.unix = str(self.dir / "s.sock")
        launch = ["-c", JOURNAL_LAUNCHER] if tell else ["-m", "nbcli"]
        args = [sys.executable, *launch, "serve", str(self.model), "--socket", self.unix, "--port", "0"]
        args += ["--listen", "127.0.0.1", "--workers", str(workers), "--timeout", str(timeout)]
        args += ["--max-size", str(MAX_SIZE), "--models-dir", str(self.dir / "users")]
        args += ["--allow-tell"] if tell else []
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        if not line.startswith("nbcli: serving "):
            raise RuntimeError(f"the daemon did not start: {line}{self.proc.stderr.read()}")
        self.tcp = ("127.0.0.1", int(re.search(r"tcp:127\.0\.0\.1:(\d+)", line).group(1)))
        self.log: list[str] = []
        self.reader = threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True)
        self.reader.start()

    def workers(self) -> list[int]:
        return child_pids(self.proc.pid)

    def rss_kb(self) -> int:
        return sum(rss_kb(pid) for pid in self.workers())

    def crashes(self) -> list[str]:
        return [line.strip() for line in self.log if "ended (" in line]

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        finally:
            self.reader.join(5)
            shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class Report:
    requests: int = 0
    closed: int = 0  # answered by closing, with no reply
    errors: int = 0  # one-line SPAMD/1.0 error replies
    ok: int = 0
    max_seconds: float = 0.0
    slowest: str = ""
    failures: list[str] = field(default_factory=list)
    rss_before_kb: int = 0
    rss_warm_kb: int = 0  # after the first batch (models for each user loaded, allocator warmed)
    rss_after_kb: int = 0
    crashes: list[str] = field(default_factory=list)
    tells: int = 0  # tell=True: the oracle's well-formed TELLs ...
    tells_changed: int = 0  # ... that changed its model (DidSet or DidRemove)
    user_models: int = 0  # models in --models-dir at the end, each read and compacted ...
    journals: int = 0  # ... of which this many had a journal

    def summary(self) -> str:
        tells = (
            f"; oracle TELLs: {self.tells} ({self.tells_changed} changed the model); "
            f"user models read and compacted: {self.user_models} ({self.journals} with a journal)"
            if self.tells
            else ""
        )
        return self._summary() + tells

    def _summary(self) -> str:
        return (
            f"requests: {self.requests} ({self.ok} answered EX_OK or PONG, {self.errors} error lines, "
            f"{self.closed} closed without a reply); failures: {len(self.failures)}; worker crashes: "
            f"{len(self.crashes)}; slowest reply: {self.max_seconds:.2f} s ({self.slowest}); worker RSS "
            f"{self.rss_before_kb / 1024:.1f} MB before, {self.rss_warm_kb / 1024:.1f} MB after the first batch, "
            f"{self.rss_after_kb / 1024:.1f} MB after"
        )


@dataclass
class Tell:
    """One of the oracle's TELLs: learn `message` as `kind` (set) or forget
    it (remove; from `kind`, or from whichever class holds it when '')."""

    action: str
    kind: str
    message: bytes
    compress: bool = False
    reply: bytes = b""

    def request(self) -> bytes:
        headers = [("User", ORACLE_USER), ("Set" if self.action == "set" else "Remove", "local")]
        if self.kind:
            headers.append(("Message-class", self.kind))
        body = self.message
        if self.compress:
            body = zlib.compress(body)
            headers.append(("Compress", "zlib"))
        return build_request("TELL", body, headers)


class Teller(threading.Thread):
    """Well-formed TELLs for ORACLE_USER, one after another, until stopped:
    a few messages, so that some are learned again, moved or forgotten."""

    def __init__(self, daemon: Daemon, rng: random.Random, messages: list[bytes], timeout: float):
        super().__init__(daemon=True)
        self.address = [daemon.unix, daemon.tcp]
        self.rng, self.pool, self.timeout = rng, rng.sample(messages, min(12, len(messages))), timeout
        self.tells: list[Tell] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            rng = self.rng
            action = rng.choice(["set", "set", "set", "remove"])
            kind = rng.choice(["spam", "ham"]) if action == "set" or rng.random() < 0.5 else ""
            tell = Tell(action, kind, rng.choice(self.pool), compress=rng.random() < 0.2)
            address = self.address[len(self.tells) % 2]
            tell.reply, _ = send(address, Case(tell.request(), "oracle"), self.timeout + 10)
            self.tells.append(tell)


def check_tells(model: Path, tells: list[Tell], learned: Path) -> tuple[list[str], int]:
    """(what is wrong, how many changed the model): the oracle's `tells`
    replayed in memory from `model` with the rebuild path of learning, each
    reply against what its replay did, and `learned` (the oracle's model
    file, read through its journal) against the replay's model id."""
    from nbcli.errors import NbcliError
    from nbcli.fit import learning
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.store import modelfile
    from nbcli.text.sources import Document

    current = modelfile.load(str(model))
    wrong, changed_count = [], 0
    for n, tell in enumerate(tells):
        docs = analyse_for_learning(current.analyzer, [Document("-", tell.kind or None, tell.message, "mail")])
        refused = False
        try:
            if tell.action == "set":
                updated, _ = learning.learn(current, docs)
                changed = updated is not current
            else:
                updated, outcome = learning.forget(current, docs)
                changed = outcome.forgotten > 0
        except NbcliError as exc:
            updated, changed, refused = current, False, "never learned" not in str(exc)
        said = b"DidSet" in tell.reply if tell.action == "set" else b"DidRemove" in tell.reply
        ok = tell.reply.startswith(b"SPAMD/1.0 ") if refused else tell.reply.startswith(b"SPAMD/1.1 0 EX_OK")
        if not ok or said != changed:
            wrong.append(
                f"oracle TELL #{n} ({tell.action} {tell.kind or 'any'}): replay changed={changed}, "
                f"reply {tell.reply[:90]!r}"
            )
        changed_count += changed
        current = updated
    if tells and not learned.exists():
        wrong.append(f"{learned.name} was never made")
    elif tells and modelfile.model_id(modelfile.load(str(learned))) != modelfile.model_id(current):
        wrong.append(f"{learned.name} read through its journal is not the model its TELLs learn in memory")
    return wrong, changed_count


def check_user_models(folder: Path) -> tuple[list[str], int, int]:
    """(what is wrong, models, journals): every model in --models-dir reads
    through its journal, and compacts (`nbcli compact`'s step) to a model
    with the same id."""
    from nbcli.errors import NbcliError
    from nbcli.store import modelfile

    wrong, models, journals = [], sorted(folder.glob("*.nb")), 0
    for path in models:
        try:
            before = modelfile.model_id(modelfile.load(str(path)))
            journals += modelfile.compact(str(path))[0] > 0  # updates were read from its journal
            if modelfile.model_id(modelfile.load(str(path))) != before:
                wrong.append(f"{path.name}: compacting its journal changed its model id")
        except NbcliError as exc:
            wrong.append(f"{path.name}: {exc}")
    return wrong, len(models), journals


def check_alive(daemon: Daemon) -> str | None:
    """The daemon answers a correct CHECK of a spam with Spam: True."""
    for address in (daemon.unix, daemon.tcp):
        raw, _ = send(address, Case(build_request("CHECK", SPAM), "check"), 10)
        try:
            if not parse_reply(raw).spam()[0]:
                return f"a correct CHECK of a spam was answered {raw[:80]!r}"
        except (ValueError, KeyError):
            return f"a correct CHECK got {raw[:80]!r}"
    return None


def run(
    model: Path,
    count: int,
    seed: int,
    timeout: float = 2.0,
    batch: int = 500,
    threads: int = 16,
    say=None,
    tell: bool = False,
):
    """Fuzz a fresh daemon with `count` requests in batches; the Report.
    tell: TELL allowed, with the oracle's TELLs beside the fuzz (module doc)."""
    rng = random.Random(seed)
    messages = sample_messages()
    cases: dict[int, Case] = {}  # this batch's (made a batch at a time: all of them would be ~400 MB)
    daemon = Daemon(model, timeout, tell=tell)
    secret = (daemon.dir / "secret.nb").read_bytes()
    report = Report()
    slack = 2.0  # the worker's loop and a loaded machine
    teller = Teller(daemon, random.Random(seed + 1), messages, timeout) if tell else None
    try:
        warm = check_alive(daemon)
        if warm:
            report.failures.append(warm)
        report.rss_before_kb = daemon.rss_kb()
        if teller is not None:
            teller.start()
        lock = threading.Lock()

        def one(i: int) -> None:
            case = cases[i]
            address = daemon.unix if i % 2 else daemon.tcp
            raw, seconds = send(address, case, timeout + 10)
            wrong = valid_reply(raw)
            with lock:
                report.requests += 1
                if wrong:
                    report.failures.append(f"#{i} {case.what}: {wrong}")
                elif raw == b"":
                    report.closed += 1
                elif raw.startswith(b"SPAMD/1.0 "):
                    report.errors += 1
                else:
                    report.ok += 1
                if seconds > report.max_seconds:
                    report.max_seconds, report.slowest = seconds, f"#{i} {case.what}"
                if seconds > timeout + slack:
                    report.failures.append(f"#{i} {case.what}: {seconds:.1f} s, over --timeout {timeout}")

        with ThreadPoolExecutor(threads) as pool:
            for start in range(0, count, batch):
                cases = {i: make_case(rng, messages) for i in range(start, min(count, start + batch))}
                list(pool.map(one, cases))
                dead = check_alive(daemon)
                if dead:
                    report.failures.append(f"after request {start + batch}: {dead}")
                if start == 0:
                    report.rss_warm_kb = daemon.rss_kb()
                if say:
                    rss = daemon.rss_kb() / 1024
                    done = min(count, start + batch)
                    say(f"{done} requests, {len(report.failures)} failures, worker RSS {rss:.1f} MB")
        if teller is not None:
            teller.done.set()
            teller.join(timeout + 30)
        time.sleep(0.5)
        report.rss_after_kb = daemon.rss_kb()
        report.crashes = daemon.crashes()
        if daemon.model.read_bytes() != daemon.before:
            report.failures.append("the model file changed (TELL is not allowed, or named no user)")
        if (daemon.dir / "secret.nb").read_bytes() != secret:
            report.failures.append("the model outside --models-dir changed")
        if teller is not None:
            report.tells = len(teller.tells)
            wrong, report.tells_changed = check_tells(model, teller.tells, daemon.dir / "users" / f"{ORACLE_USER}.nb")
            report.failures += wrong
            wrong, report.user_models, report.journals = check_user_models(daemon.dir / "users")
            report.failures += wrong
            if report.tells_changed and not report.journals:
                report.failures.append("no TELL was kept in a journal (JOURNAL_LAUNCHER did not take)")
    finally:
        if daemon.stop() != 0:
            report.failures.append("the daemon did not exit 0 on SIGTERM")
    return report


def main_model(workdir: Path) -> Path:
    path = workdir / "mail.nb"
    subprocess.run(
        [sys.executable, "-m", "nbcli", "train", str(SAMPLE_MAIL / "train"), "-o", str(path), "-q"],
        check=True,
        timeout=300,
    )
    return path
