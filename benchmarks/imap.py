"""`nbcli imap` (issue 29) against a local Dovecot: a 10,000-message inbox.

    make bench-imap                  (= cd benchmarks && python imap.py)
    NBCLI_BENCH_IMAP_MESSAGES=2000 make bench-imap   (a quicker trial)

The server is tests/dovecot.py's throw-away Dovecot (Debian's dovecot-imapd,
installed with apt-get when missing and this is root; else the section says
why nothing was measured), plain IMAP on a loopback port, one user.

Messages: the SpamAssassin public corpus (npm, fetch.py) split 80/20 as in
spamassassin.py; MODEL is `nbcli train` of the 80%, the inbox the 20% (1,209
messages) repeated to 10,000, each copy made distinct by its own Message-ID
and a word of its own in the Subject (`varied`), so that nothing can be
recognised as seen.

1. Populating the inbox, both ways, each into a fresh server: APPEND
   pipelined with LITERAL+ (no round trip per message, one connection), and
   Maildir files written into `new/` (owned by the dovecot account when
   root) followed by the SELECT that makes Dovecot take them in. The passes
   run on the server filled the faster way.
2. `nbcli filter MODEL inbox.mbox > /dev/null` over the same 10,000 messages
   as an mbox, with its default --jobs (a worker per core) and with -j 1
   (one process, as a pass runs): whole-process wall time, messages per
   second.
3. `nbcli imap MODEL ... --once` (a copy of MODEL; a fresh state file): the
   first pass over the 10,000, whole-process wall time, messages per second,
   and what it filed (Junk against filter's count of spam: the same verdicts).
   Then 5 rounds of passes with 0, 10 and 100 new messages APPENDed: the
   median times, and the time each spends beyond the pass with nothing new,
   per new message, against the first pass's time per message: proportional
   to the new messages, not to the 10,000.
4. `nbcli imap MODEL ... --idle` on the same inbox: 5 times, 10 messages
   APPENDed at once, and the time until its summary lines count them
   classified; then SIGTERM and its exit status. And the server's part of
   that time: from an APPEND's OK to the end of an IDLE it woke.
Results go to stdout and to the "imap" section of docs/benchmarks.md.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import report
import spamassassin
from fetch import CACHE, NO_NPM

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # tests/dovecot.py, by path
from dovecot import Dovecot  # noqa: E402

N = int(os.environ.get("NBCLI_BENCH_IMAP_MESSAGES", "10000"))
NEW = (0, 10, 100)
REPEATS = 5
IDLE_ROUNDS, IDLE_NEW = 5, 10
WORK = CACHE / "imap"
BIN = Path(sys.executable).parent
NBCLI = str(BIN / "nbcli")
APPEND_BATCH = 200
VERDICTS = ("spam", "ham", "unsure")


# -- inputs ---------------------------------------------------------------------------


def dovecot_binary() -> tuple[str | None, str | None]:
    """(the dovecot binary, None), or (None, why not): Debian's
    dovecot-imapd, installed with apt-get when missing and possible."""

    def found():
        binary = shutil.which("dovecot") or shutil.which("dovecot", path="/usr/sbin:/sbin")
        imap = any(Path(d, "imap").exists() for d in ("/usr/lib/dovecot", "/usr/libexec/dovecot"))
        return binary if binary and imap else None

    if found():
        return found(), None
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("installing dovecot-imapd with apt-get ...", file=sys.stderr)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "dovecot-imapd"]
        for step in (install, ["apt-get", "update", "-qq"], install):
            subprocess.run(step, capture_output=True, env=env)
            if found():
                return found(), None
    return None, "not measured: dovecot-imapd is not installed and could not be installed here (root and apt-get)"


def varied(raw: bytes, copy: int) -> bytes:
    """A corpus message as a distinct message: no From_ line, LF line ends,
    its own Message-ID and X-Bench-Copy header, and a word of its own in the
    Subject ('nbcopy' and the copy's digits as letters: a term no model has
    seen, which a model skips, so the verdict stays the original's), since
    `nbcli imap` knows a message by its terms (the record's digest): a copy
    with the same terms as one it filed would be taken for one the user
    moved back."""
    if raw.startswith(b"From "):
        raw = raw.split(b"\n", 1)[1]
    raw = raw.replace(b"\r\n", b"\n")
    head, sep, body = raw.partition(b"\n\n")
    head = re.sub(rb"(?im)^message-id:.*\n?(?:[ \t].*\n?)*", b"", head + b"\n").rstrip(b"\n")
    word = b"nbcopy" + bytes(ord("a") + int(d) for d in str(copy))
    head, found = re.subn(rb"(?im)^(subject:[^\n]*)", lambda m: m.group(1) + b" " + word, head, count=1)
    if not found:
        head += b"\nSubject: " + word
    return b"Message-ID: <bench-%d@nbcli.invalid>\nX-Bench-Copy: %d\n%s%s%s" % (copy, copy, head, sep or b"\n\n", body)


def build_inputs() -> dict:
    WORK.mkdir(parents=True, exist_ok=True)
    train, test, train_dir, _ = spamassassin.split_trees(WORK)
    model = WORK / "train80.nb"
    if not model.exists():
        print("training the model of the 80% split ...", file=sys.stderr)
        subprocess.run([NBCLI, "train", str(train_dir), "-o", str(model), "-q"], check=True)
    sources = [path.read_bytes() for path, _ in test]
    inbox = [varied(sources[i % len(sources)], i) for i in range(N)]
    extra = [varied(sources[i % len(sources)], N + i) for i in range(REPEATS * sum(NEW) + IDLE_ROUNDS * (IDLE_NEW + 1))]
    mbox = WORK / f"inbox-{N}.mbox"
    with open(mbox, "wb") as out:
        for message in inbox:
            body = re.sub(rb"(?m)^(>*From )", rb">\1", message)
            out.write(b"From bench@nbcli.invalid Thu Nov 26 00:00:00 2026\n" + body.rstrip(b"\n") + b"\n\n")
    return {"model": model, "inbox": inbox, "extra": extra, "mbox": mbox, "train": len(train), "test": len(test)}


# -- filling the inbox ----------------------------------------------------------------


def crlf(message: bytes) -> bytes:
    return message.replace(b"\n", b"\r\n")


def append_many(server: Dovecot, messages: list[bytes], folder: str = "INBOX") -> None:
    """APPEND every message on one connection: MULTIAPPEND (RFC 3502: one
    command, one transaction, for APPEND_BATCH messages) where the server
    has it, else one APPEND each, pipelined; LITERAL+ (`{n+}`) either way,
    so no continuation is awaited."""
    sock = socket.create_connection(("127.0.0.1", server.port))
    lines = sock.makefile("rb")

    def until(tag: bytes) -> bytes:
        while True:
            line = lines.readline()
            if not line:
                raise RuntimeError("the server closed the connection")
            if line.startswith(b"* CAPABILITY ") or line.startswith(b"* OK [CAPABILITY "):
                said.append(line)
            if line.startswith(tag + b" "):
                if not line.startswith(tag + b" OK"):
                    raise RuntimeError(f"the server said {line!r}")
                return line

    said: list[bytes] = []
    lines.readline()  # greeting
    quoted = [
        b'"' + s.encode().replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"' for s in (server.user, server.password)
    ]
    sock.sendall(b"L LOGIN %s %s\r\n" % tuple(quoted))
    caps = until(b"L")
    sock.sendall(b"C CAPABILITY\r\n")
    caps += b" ".join(said) + until(b"C")
    multi = b"MULTIAPPEND" in caps.upper()
    literals = [b"{%d+}\r\n%s" % (len(m), m) for m in map(crlf, messages)]
    for start in range(0, len(literals), APPEND_BATCH):
        batch = literals[start : start + APPEND_BATCH]
        if multi:
            sock.sendall(b"A%d APPEND %s %s\r\n" % (start, folder.encode(), b" ".join(batch)))
            until(b"A%d" % start)
            continue
        sock.sendall(b"".join(b"A%d APPEND %s %s\r\n" % (start + k, folder.encode(), m) for k, m in enumerate(batch)))
        for k in range(len(batch)):
            until(b"A%d" % (start + k))
    sock.sendall(b"Z LOGOUT\r\n")
    sock.close()


def write_maildir(server: Dovecot, messages: list[bytes]) -> None:
    """Deliver as an MDA does: each message into tmp/, then renamed into
    new/ (owned by the dovecot account when root)."""
    with server.client() as imap:  # Dovecot makes the Maildir at the first login
        imap.select("INBOX")
    account = None
    if os.geteuid() == 0:
        import pwd

        entry = pwd.getpwnam("dovecot")
        account = (entry.pw_uid, entry.pw_gid)
    tmp, new = server.maildir / "tmp", server.maildir / "new"
    stamp = int(time.time())
    for i, message in enumerate(messages):
        name = f"{stamp}.M{i}P{os.getpid()}.nbcli-bench,S={len(message)}"
        with open(tmp / name, "wb") as out:
            out.write(message)
        if account is not None:
            os.chown(tmp / name, *account)
        os.rename(tmp / name, new / name)


def count(server: Dovecot, folder: str) -> int:
    with server.client() as imap:
        typ, data = imap.select(folder, readonly=True)
        return int(data[0])


# -- timing ---------------------------------------------------------------------------


def wall(cmd: list, **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in cmd], capture_output=True, **kwargs)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {done.returncode}: {done.stderr.decode()[-800:]}")
    return seconds, done


def filter_run(model: Path, mbox: Path, *options: str) -> dict:
    seconds, done = wall([NBCLI, "filter", *options, model, mbox])
    verdicts = re.findall(rb"(?m)^X-NB-Class: (\w+)", done.stdout)
    return {"seconds": seconds, "messages": len(verdicts), **{v: verdicts.count(v.encode()) for v in VERDICTS}}


def has_imap_command() -> bool:
    return subprocess.run([NBCLI, "imap", "--help"], capture_output=True).returncode == 0


def imap_pass(server: Dovecot, model: Path, state: Path) -> tuple[float, dict]:
    """One `nbcli imap --once` pass: (wall seconds, its summary's figures)."""
    cmd = [NBCLI, "imap", model, "--host", "127.0.0.1", "--port", server.port, "--no-tls", "--user", server.user]
    cmd += ["--password-file", server.password_file(), "--state", state, "--once", "-q"]
    seconds, done = wall(cmd)
    said = dict(re.findall(r"(\w+)=(\d+)", done.stdout.decode()))
    return seconds, {k: int(v) for k, v in said.items()}


# -- the run --------------------------------------------------------------------------


def fill(binary: str, inbox: list[bytes]) -> tuple[dict, Dovecot]:
    """Both ways of filling the inbox, timed; the server filled the faster
    way is kept, the other stopped."""
    timings, servers = {}, {}
    for how in ("append", "maildir"):
        server = Dovecot(dovecot=binary)
        print(f"filling an inbox with {len(inbox):,} messages ({how}) ...", file=sys.stderr)
        start = time.perf_counter()
        if how == "append":
            append_many(server, inbox)
        else:
            write_maildir(server, inbox)
            count(server, "INBOX")  # Dovecot takes the new files in at the SELECT
        timings[how] = time.perf_counter() - start
        got = count(server, "INBOX")
        if got != len(inbox):
            raise RuntimeError(f"{how}: the inbox holds {got} messages, not {len(inbox)}")
        servers[how] = server
        print(f"  {timings[how]:.2f} s, {len(inbox) / timings[how]:,.0f} msg/s", file=sys.stderr)
    keep = min(timings, key=timings.get)
    for how, server in servers.items():
        if how != keep:
            server.close()
    return {"fill": timings, "kept": keep}, servers[keep]


def passes(server: Dovecot, model_source: Path, extra: list[bytes]) -> dict:
    model = WORK / "imap-run.nb"
    shutil.copyfile(model_source, model)
    Path(str(model) + ".journal").unlink(missing_ok=True)  # an earlier run's: written on this very file, it applies
    state = WORK / "imap-state.json"
    state.unlink(missing_ok=True)
    print(f"first pass over {N:,} messages ...", file=sys.stderr)
    first, said = imap_pass(server, model, state)
    out = {"first": first, "first_said": said, "junk": count(server, "Junk"), "inbox": count(server, "INBOX")}
    print(f"  {first:.2f} s ({N / first:,.0f} msg/s): {out['junk']:,} filed in Junk", file=sys.stderr)
    used = 0
    runs = {new: [] for new in NEW}
    classified = {new: set() for new in NEW}
    for _ in range(REPEATS):
        for new in NEW:
            append_many(server, extra[used : used + new])
            used += new
            seconds, said = imap_pass(server, model, state)
            runs[new].append(seconds)
            classified[new].add(said.get("classified"))
    out["later"] = []
    for new in NEW:
        out["later"].append({"new": new, "seconds": statistics.median(runs[new]), "runs": runs[new]})
        out["later"][-1]["classified"] = "/".join(map(str, sorted(classified[new], key=str)))
        print(f"  passes with {new} new: median {out['later'][-1]['seconds']:.2f} s of {runs[new]}", file=sys.stderr)
    out["idle"] = idle_latency(server, model, state, extra[used:])
    out["idle"]["notice"] = idle_notice(server, extra[used + IDLE_ROUNDS * IDLE_NEW :])
    return out


def idle_notice(server: Dovecot, extra: list[bytes]) -> float:
    """The server's part: the median seconds from an APPEND's OK on one
    connection to the end of an IDLE on another that it woke (watch._idle,
    DONE's round trip included), over IDLE_ROUNDS messages."""
    from nbcli.imap.watch import Stop, _examine, _idle

    seconds, stop = [], Stop()
    with server.client() as idler, server.client() as appender:
        for message in extra[:IDLE_ROUNDS]:
            _examine(idler, "INBOX")
            appended = []

            def later(message=message, appended=appended):
                time.sleep(0.5)  # idling by then
                appender.append("INBOX", None, None, crlf(message))
                appended.append(time.perf_counter())

            thread = threading.Thread(target=later)
            thread.start()
            woke = _idle(idler, stop, 60)
            end = time.perf_counter()
            thread.join()
            if woke:
                seconds.append(end - appended[0])
    stop.close()
    print(f"  the server's IDLE notice: {seconds} s", file=sys.stderr)
    return statistics.median(seconds)


def idle_latency(server: Dovecot, model: Path, state: Path, extra: list[bytes]) -> dict:
    """`nbcli imap --idle` running: IDLE_ROUNDS times, IDLE_NEW messages
    APPENDed at once, and the seconds until its summary lines have counted
    them all classified; then SIGTERM, and its exit status."""
    cmd = [NBCLI, "imap", model, "--host", "127.0.0.1", "--port", server.port, "--no-tls", "--user", server.user]
    cmd += ["--password-file", server.password_file(), "--state", state, "--idle", "-q"]
    process = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()

    def classified() -> int:
        line = lines.get(timeout=60)
        return int(re.search(r"classified=(\d+)", line).group(1))

    try:
        classified()  # the pass at start
        seconds = []
        for r in range(IDLE_ROUNDS):
            time.sleep(1.0)  # idling again
            start = time.perf_counter()
            append_many(server, extra[r * IDLE_NEW : (r + 1) * IDLE_NEW])
            done = 0
            while done < IDLE_NEW:
                done += classified()
            seconds.append(time.perf_counter() - start)
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    print(f"  --idle: {IDLE_NEW} new filed in {seconds} s; exit {status} after SIGTERM", file=sys.stderr)
    return {"seconds": seconds, "median": statistics.median(seconds), "status": status}


def verdicts(said: dict) -> str:
    return ", ".join(f"{said.get(v, 0):,} {v}" for v in VERDICTS)


def markdown(m: dict, notes: list[str]) -> str:
    lines = [
        "## `nbcli imap` against a local Dovecot (issue 29)",
        "",
        f"Command: `make bench-imap` ({report.machine()})",
        "",
    ]
    if "fill" not in m:
        return "\n".join(lines + notes)
    fill, kept = m["fill"], m["kept"]
    lines += [
        f"An inbox of {N:,} messages in a throw-away Dovecot {m['dovecot']} (tests/dovecot.py, Maildir, plain IMAP "
        f"on loopback): the SpamAssassin corpus's 20% test split ({m['test']:,} messages) repeated, each copy with "
        "its own Message-ID and a Subject word no model has seen (its own terms, the same verdict); the model is "
        f"`nbcli train` of the 80% split ({m['train']:,} messages). Whole-process "
        "wall times; the machine is shared, so read the ratios.",
        "",
        "### Filling the inbox",
        "",
        report.table(
            ["how", "seconds", "msg/s"],
            [
                [
                    f"APPEND with LITERAL+, {APPEND_BATCH} messages per MULTIAPPEND",
                    f"{fill['append']:.2f}",
                    f"{N / fill['append']:,.0f}",
                ],
                [
                    "Maildir files into new/, then the SELECT that takes them in",
                    f"{fill['maildir']:.2f}",
                    f"{N / fill['maildir']:,.0f}",
                ],
            ],
        ),
        "",
        f"The passes below ran on the inbox filled by {'APPEND' if kept == 'append' else 'Maildir files'}, the faster.",
        "",
        "### A first pass beside `nbcli filter`",
        "",
    ]
    f = m["filter"]
    f1 = m["filter_1"]
    rows = [
        ["`nbcli filter MODEL inbox.mbox` (its default `-j 0`: one worker per core)", f"{f['seconds']:.2f}"]
        + [f"{N / f['seconds']:,.0f}", verdicts(f), ""],
        ["`nbcli filter -j 1 MODEL inbox.mbox` (one process, as a pass)", f"{f1['seconds']:.2f}"]
        + [f"{N / f1['seconds']:,.0f}", verdicts(f1), ""],
    ]
    if "passes" in m:
        p = m["passes"]
        rows.append(
            [
                "`nbcli imap MODEL ... --once`, first pass",
                f"{p['first']:.2f}",
                f"{N / p['first']:,.0f}",
                verdicts(p["first_said"]),
                f"{p['junk']:,} in Junk, {p['inbox']:,} in the inbox; learned "
                f"{p['first_said'].get('learned_spam', 0) + p['first_said'].get('learned_ham', 0)}",
            ]
        )
    lines += [report.table(["command", "seconds", "msg/s", "verdicts", "after"], rows), ""]
    if "passes" in m:
        p = m["passes"]
        per_message = p["first"] / N
        base = p["later"][0]["seconds"]
        lines += [
            "### Later passes",
            "",
            f"After the first pass, NEW messages APPENDed, then one `--once` pass (a fresh process, as from cron); "
            f"{REPEATS} rounds of 0, 10 and 100 new, the median of each. 'Beyond the empty pass' is the pass's time "
            f"less that of the pass with nothing new (the process start, the model's load, the login and the looks "
            f"at the folders); per new message it compares with the first pass's {1000 * per_message:.2f} ms per "
            "message. A pass that re-read the inbox would take the first pass's time again.",
            "",
            report.table(
                [
                    "new messages",
                    "classified",
                    "seconds (median)",
                    "runs, min to max",
                    "beyond the empty pass",
                    "ms per new message",
                    "first pass's time for as many",
                    "of the first pass's time",
                ],
                [
                    [
                        f"{r['new']}",
                        f"{r['classified']}",
                        f"{r['seconds']:.2f}",
                        f"{min(r['runs']):.2f} to {max(r['runs']):.2f}",
                        "" if r["new"] == 0 else f"{r['seconds'] - base:.2f}",
                        "" if r["new"] == 0 else f"{1000 * (r['seconds'] - base) / r['new']:.1f}",
                        f"{r['new'] * per_message:.2f}",
                        f"{100 * r['seconds'] / p['first']:.1f}%",
                    ]
                    for r in p["later"]
                ],
            ),
            "",
        ]
        idle = p["idle"]
        lines += [
            "### With `--idle`",
            "",
            f"`nbcli imap MODEL ... --idle` running on the same inbox: {IDLE_ROUNDS} times, {IDLE_NEW} messages "
            "APPENDed at once (one MULTIAPPEND), timed until its summary lines on stdout have counted them all "
            f"classified (and filed): median {idle['median']:.2f} s (from {min(idle['seconds']):.2f} to "
            f"{max(idle['seconds']):.2f} s), of which the server's notice takes {idle['notice']:.2f} s (the median "
            "time from an APPEND's OK to the end of an IDLE it woke on another connection: Dovecot gathers changes "
            "for a moment before it tells), the rest a pass without a process to start. "
            f"SIGTERM then: exit status {idle['status']}.",
            "",
        ]
        ten = next(r for r in p["later"] if r["new"] == 10)
        lines += [
            f"**In short.** The first pass classified and filed {N:,} messages at {N / p['first']:,.0f} msg/s, "
            f"{p['first'] / f1['seconds']:.1f}x the time of `nbcli filter -j 1` over the same messages from a local "
            "mbox (a pass also fetches them over IMAP, keeps the state file as it goes and files each batch), with the "
            "same "
            f"verdicts. A later pass with 10 new messages took {ten['seconds']:.2f} s, "
            f"{100 * ten['seconds'] / p['first']:.1f}% of the first pass: the fixed cost of a pass, and "
            + (
                f"{1000 * (ten['seconds'] - base):.0f} ms more for the 10"
                if ten["seconds"] > base
                else "no time for the 10 that stands out of the runs' spread"
            )
            + f": in proportion to the new messages, not to the {N:,}.",
            "",
        ]
    lines += notes
    return "\n".join(lines)


def main() -> int:
    binary, why = dovecot_binary()
    if binary is None:
        print(f"bench-imap: {why}", file=sys.stderr)
        report.update_section("imap", markdown({}, [why]))
        return 0
    try:
        inputs = build_inputs()
    except SystemExit as exc:
        if exc.code == NO_NPM:
            print("bench-imap skipped: npm is needed to fetch the SpamAssassin corpus", file=sys.stderr)
            return 0
        raise
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()
    m: dict = {"train": inputs["train"], "test": inputs["test"], "dovecot": version[0] if version else "?"}
    notes = []
    filled, server = fill(binary, inputs["inbox"])
    m.update(filled)
    try:
        print("nbcli filter over the same messages as an mbox ...", file=sys.stderr)
        m["filter"] = filter_run(inputs["model"], inputs["mbox"])
        m["filter_1"] = filter_run(inputs["model"], inputs["mbox"], "-j", "1")
        print(f"  {m['filter']['seconds']:.2f} s, {m['filter']['spam']:,} spam", file=sys.stderr)
        if has_imap_command():
            m["passes"] = passes(server, inputs["model"], inputs["extra"])
        else:
            notes.append("`nbcli imap` not measured: this nbcli has no imap command yet.")
    finally:
        server.close()
    path = report.update_section("imap", markdown(m, notes))
    print(markdown(m, notes))
    print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
