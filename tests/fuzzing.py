"""The fuzz harness: mutated real messages through the real `nbcli` CLI.

Used by tests/test_fuzz.py (a small seeded sample in the suite) and by
tools/fuzz.py (`make fuzz`, 2,000 messages). It takes real messages, mutates
them with a seeded RNG (byte flips, truncation, duplicated spans, adversarial
snippets, header damage, line-ending changes, deep MIME nesting, broken
boundaries, bad charsets, RFC 2047 words, 8-bit junk, UTF-16, NUL bytes ...)
and runs them through `nbcli predict` and `nbcli filter` as subprocesses,
each call under a timeout, checking what a user relies on:

- no traceback and no "internal error" on stderr, and the documented exit
  status (predict 0; filter 0, or 1 when a message got the verdict error;
  `filter --exit-codes` on one message 0/1/2 by the verdict header, 3 for
  error);
- filter: every message comes out with exactly one `X-NB-Class:` line added
  at the top of its header block (after an mbox From_ line), or unchanged
  with a warning on stderr; with the added lines removed the output is the
  input byte for byte;
- count in = count out: the messages predict reports for a file, the
  headers filter adds and the messages in the input by the mbox rule below
  all agree;
- no hang: every call has a timeout; single-message runs are timed
  (seconds per MB beyond nbcli's start-up time) and one slower than a
  generous limit is the failure "slow" (see Harness).

The mbox rule is written here independently of nbcli's code, from the
README's "Corpus formats" (issue 12, defect 3): a file is an mbox when it
starts with a From_ line; a new message starts there and at every line that
follows a blank line and looks like a real From_ line
(`From [SENDER] DAY MON DD HH:MM[:SS] [ZONE] YEAR`, as mutt checks). A
blank line is an empty line ending in "\\n" (a "\\r" before the "\\n"
belongs to the line end); CR-only text has no blank lines here. Any other
"From " line (after a non-blank line, or without sender and date) is body
text; a file that starts with one ("From here on") is a single message.

Where filter puts the header: at the start of the message, or right after
its first line when it starts with "From " (the line may end in "\\n" or,
for CR-only mail, "\\r"); any line ending is accepted for the added line.

To stay fast the cases are batched: one predict over many files, one filter
over one mbox of many entries; only a failing batch is re-run one message at
a time to pinpoint the message.
"""

from __future__ import annotations

import base64
import bisect
import json
import math
import os
import random
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE_MAIL = REPO / "sample_corpora" / "mail"
BENCH_CACHE = Path(os.environ.get("NBCLI_BENCH_CACHE", REPO / "bench-cache"))
SA_DATA = BENCH_CACHE / "spam-assassin" / "package" / "data"

# ---------------------------------------------------------------- the mbox rule

_DAYS = rb"(?:mon|tue|wed|thu|fri|sat|sun)"
_MONTHS = rb"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
# After "From ": an optional sender (one word, or a quoted string), then a
# ctime-style date: weekday, month, day, time, up to two time-zone words and
# the year; names in any case and possibly spelt out ("Monday"). Only the
# first 1,024 bytes of a line are looked at. The segments alternate spaces
# and non-spaces, so matching is linear.
FROM_LINE = re.compile(
    rb"[ \t]*(?:(?:\"[^\"\r\n]*\"|[^\s\"]+)[ \t]+)??" + _DAYS + rb"\S*[ \t]+" + _MONTHS + rb"\S*[ \t]+"
    rb"\d{1,2}[ \t]+\d{1,2}:\d\d(?::\d\d)?(?:[ \t]+[^\s\d]\S*){0,2}[ \t]+\d+",
    re.IGNORECASE,
)
_FROM_SPAN = 1024
_BLANK_THEN_FROM = re.compile(rb"\n\r?\nFrom ")
WRAP_FROM = b"From fuzz@example.invalid Mon Jan  1 00:00:00 2024\n"


def is_from_line(data: bytes, at: int = 0) -> bool:
    return data.startswith(b"From ", at) and FROM_LINE.match(data, at + 5, at + _FROM_SPAN) is not None


def message_starts(data: bytes) -> list[int]:
    """Where each message of `data` starts, by the rule above: [0] for a file
    that is not an mbox, [] for an empty file."""
    if not data:
        return []
    starts = [0]
    if not is_from_line(data):
        return starts
    for m in _BLANK_THEN_FROM.finditer(data):
        at = m.end() - 5
        if is_from_line(data, at):
            starts.append(at)
    return starts


def split_messages(data: bytes) -> list[bytes]:
    starts = message_starts(data)
    return [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]


def count_messages(data: bytes) -> int:
    return len(message_starts(data))


# ---------------------------------------------------------------- seed messages


def sample_messages() -> list[tuple[str, bytes]]:
    """(name, bytes) of every message under sample_corpora/mail: each .eml
    file, each entry of the mbox, and the mbox whole."""
    out = []
    for path in sorted(SAMPLE_MAIL.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        name = str(path.relative_to(REPO))
        if path.suffix == ".mbox":
            out += [(f"{name}:{n}", m) for n, m in enumerate(split_messages(data), 1)]
        out.append((name, data))
    return out


def spamassassin_messages() -> list[tuple[str, bytes]]:
    """The SpamAssassin public corpus's messages, if fetched (benchmarks/fetch.py)."""
    if not (SA_DATA.parent.parent / ".complete").exists():
        return []
    return [(str(p.relative_to(SA_DATA)), p.read_bytes()) for p in sorted(SA_DATA.glob("*/*.txt"))]


# ---------------------------------------------------------------- mutations

SNIPPETS = [
    b"<!--",
    b"<script>",
    b"begin 644 a.txt\n",
    b"\nFrom here on\n",
    b"\n\nFrom x@y Mon Jan  1 00:00:00 2024\n",
    b"\n>From the start\n",
    b">From ",
    b"\x00",
    b"<html>",
    b'<a href="http://',
    b"<style>",
    b"<",
    b"&#",
    b"=\n",
    b"=?utf-8?B?w6k=?=",
    b"=?iso-8859-1?Q?caf=E9_?=",
    b"=?x-bogus?X?zz?=",
    b"\r",
    b"\r\n",
    b"--",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"http://",
    b'Content-Type: multipart/mixed; boundary="x"\n',
]
HTML_SNIPPETS = {b"<!--", b"<script>", b"<html>", b'<a href="http://', b"<style>", b"<", b"&#"}
_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_CHARSETS = [
    b"x-unknown",
    b"utf-7",
    b"utf-16",
    b"utf-32",
    b'"\xff\xfe"',
    b"",
    b'""',
    b"cp65001",
    b"a" * 300,
    b'utf-8"; charset="utf-16',
    b"iso-2022-jp",
    b"../../etc/passwd",
    b"idna",
    b"rot13",
    b"base64",
    b"zlib",
]


def _log_uniform(rng: random.Random, hi: int) -> int:
    """An integer from 1 to hi, uniform in log scale (small counts usual, huge ones not rare)."""
    return max(1, min(hi, int(math.exp(rng.uniform(0, math.log(max(hi, 1) + 1))))))


def _split_head(data: bytes) -> tuple[bytes, bytes]:
    """(header block with its blank line, body); all header when no blank line."""
    m = re.search(rb"\r?\n\r?\n", data)
    return (data, b"") if m is None else (data[: m.end()], data[m.end() :])


def _header_lines(head: bytes) -> list[bytes]:
    """The header fields of `head`, each with its continuation lines (the
    From_ line and the blank line are fields too, kept as they are)."""
    lines = head.splitlines(keepends=True)
    fields: list[bytes] = []
    for line in lines:
        if fields and line[:1] in (b" ", b"\t"):
            fields[-1] += line
        else:
            fields.append(line)
    return fields


def _pos(rng: random.Random, data: bytes) -> int:
    """A random offset, half of the time at the start of a body line."""
    if data and rng.random() < 0.5:
        head, body = _split_head(data)
        if body:
            at = len(head) + rng.randrange(len(body))
            nl = data.rfind(b"\n", len(head), at)
            return len(head) if nl < 0 else nl + 1
    return rng.randrange(len(data) + 1)


def flip_bytes(rng, data, budget):
    b = bytearray(data)
    for _ in range(_log_uniform(rng, 200) if b else 0):
        b[rng.randrange(len(b))] ^= rng.randrange(1, 256)
    return bytes(b)


def truncate(rng, data, budget):
    return data[: rng.randrange(1, len(data))] if len(data) > 1 else data


def duplicate_span(rng, data, budget):
    if not data:
        return data
    a = rng.randrange(len(data))
    span = data[a : a + _log_uniform(rng, min(budget, len(data) - a))]
    times = _log_uniform(rng, max(1, budget // max(len(span), 1)))
    at = rng.randrange(len(data) + 1)
    return data[:at] + span * times + data[at:]


def insert_snippet(rng, data, budget):
    snippet = rng.choice(SNIPPETS)
    times = _log_uniform(rng, max(1, budget // len(snippet)))
    at = _pos(rng, data)
    out = data[:at] + snippet * times + data[at:]
    note = f"insert_snippet({snippet.decode('latin-1')!r} x{times})"
    if snippet in HTML_SNIPPETS and rng.random() < 0.7:
        return as_html(rng, out, budget), note + " as html"
    return out, note


_BOMBS = [
    b"<!--",
    b"<script>",
    b"<style>",
    b"<",
    b'<a href="http://',
    b"&#",
    b"begin 644 a.txt\n",
    b"=?utf-8?Q?a?= ",
    b"\n\nFrom x@y Mon Jan  1 00:00:00 2024\n",
    b"\nFrom here on\n",
    b"--b\n",
    b"http://a.",
    b"<<<<",
]


def snippet_bomb(rng, data, budget):
    """One adversarial construct repeated to fill most of the budget: the
    shape of the messages that stalled the filter (issue 12, defect 1)."""
    snippet = rng.choice(_BOMBS)
    times = max(1, int(math.exp(rng.uniform(math.log(4096), math.log(max(budget, 4097))))) // len(snippet))
    at = _pos(rng, data)
    note = f"snippet_bomb({snippet.decode()!r} x{times})"
    if snippet.startswith(b"<") or snippet == b"&#":
        return as_html(rng, data[:at] + b"<html>" + snippet * times + data[at:], budget), note
    return data[:at] + snippet * times + data[at:], note


def base64_lines(rng, data, budget):
    """Long base64-looking lines (one huge line, or many of 76)."""
    n = _log_uniform(rng, budget)
    text = bytes(rng.choice(_B64) for _ in range(min(n, 4096)))
    text = (text * (n // len(text) + 1))[:n]
    if rng.random() < 0.5:
        text = b"\n".join(text[i : i + 76] for i in range(0, len(text), 76))
    at = _pos(rng, data)
    return data[:at] + text + b"\n" + data[at:]


def as_html(rng, data, budget):
    """Make the message a text/html one (the HTML stripper then reads it)."""
    head, body = _split_head(data)
    fields = [f for f in _header_lines(head) if not f.lower().startswith(b"content-")]
    eol = b"\r\n" if head.endswith(b"\r\n") else b"\n"
    if not body:  # no blank line: all of it becomes the body
        return b"Content-Type: text/html; charset=utf-8\n\n" + data
    blank = [f for f in fields if f in (b"\n", b"\r\n")]
    fields = [f for f in fields if f not in (b"\n", b"\r\n")]
    return b"".join(fields) + b"Content-Type: text/html; charset=utf-8" + eol + (blank[0] if blank else eol) + body


def delete_header(rng, data, budget):
    head, body = _split_head(data)
    fields = _header_lines(head)
    if len(fields) > 1:
        del fields[rng.randrange(len(fields) - 1)]
    return b"".join(fields) + body


def duplicate_header(rng, data, budget):
    head, body = _split_head(data)
    fields = _header_lines(head)
    if len(fields) > 1:
        f = fields[rng.randrange(len(fields) - 1)]
        times = _log_uniform(rng, max(1, min(5000, budget // max(len(f), 1))))
        at = rng.randrange(len(fields))
        fields[at:at] = [f] * times
    return b"".join(fields) + body


def huge_header(rng, data, budget):
    """A header line of up to `budget` bytes, one line or folded."""
    n = _log_uniform(rng, budget)
    value = b"a" * n if rng.random() < 0.5 else b"\n\tb" * (n // 3)
    name = rng.choice([b"X-Huge", b"Subject", b"Received", b"Content-Type", b"From", b"To"])
    head, body = _split_head(data)
    fields = _header_lines(head)
    at = rng.randrange(len(fields)) if fields else 0
    fields[at:at] = [name + b": " + value + b"\n"]
    return b"".join(fields) + body


def change_line_endings(rng, data, budget):
    lines = data.split(b"\n")
    mode = rng.choice(["cr", "crlf", "mixed"])
    return _line_endings(rng, lines, mode), f"line_endings({mode})"


def _line_endings(rng, lines, mode):
    if mode == "cr":
        return b"\r".join(line.rstrip(b"\r") for line in lines)
    if mode == "crlf":
        return b"\r\n".join(line.rstrip(b"\r") for line in lines)
    out = []
    for line in lines[:-1]:
        out.append(line.rstrip(b"\r") + rng.choice([b"\n", b"\r\n", b"\r"]))
    return b"".join(out) + lines[-1]


def deep_mime(rng, data, budget):
    """The body wrapped in many nested multipart parts, sometimes unclosed."""
    depth = _log_uniform(rng, max(1, min(20000, budget // 60)))
    head, body = _split_head(data)
    fields = [f for f in _header_lines(head) if not f.lower().startswith(b"content-") and f not in (b"\n", b"\r\n")]
    closed = rng.random() < 0.5
    opening = b"".join(b'--b%d\nContent-Type: multipart/mixed; boundary="b%d"\n\n' % (i, i + 1) for i in range(depth))
    inner = b"--b%d\nContent-Type: text/plain\n\n" % depth + body + b"\n"
    closing = b"".join(b"--b%d--\n" % i for i in range(depth, -1, -1)) if closed else b""
    out = (
        b"".join(fields)
        + b'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b0"\n\n'
        + opening
        + inner
        + closing
    )
    return out, f"deep_mime(depth {depth}, {'closed' if closed else 'unclosed'})"


def many_parts(rng, data, budget):
    """A multipart body with very many small parts."""
    n = _log_uniform(rng, max(1, min(100000, budget // 40)))
    head, body = _split_head(data)
    fields = [f for f in _header_lines(head) if not f.lower().startswith(b"content-") and f not in (b"\n", b"\r\n")]
    part = b"--p\nContent-Type: text/plain\n\nword\n"
    return b"".join(
        fields
    ) + b"Content-Type: multipart/mixed; boundary=p\n\n" + part * n + body + b"\n--p--\n", f"many_parts({n})"


def break_boundary(rng, data, budget):
    m = re.search(rb"boundary=\"?([^\";\r\n]+)", data, re.IGNORECASE)
    if m is None:
        return deep_mime(rng, data, budget)
    b = m.group(1)
    choice = rng.randrange(4)
    if choice == 0:  # declared boundary never used
        return data[: m.start(1)] + b"nomatch" + data[m.end(1) :]
    if choice == 1:  # closing delimiters removed
        return data.replace(b"--" + b + b"--", b"")
    if choice == 2:  # an empty boundary
        return data[: m.start(1)] + data[m.end(1) :]
    return data.replace(b"--" + b, b"--" + b[: max(1, len(b) // 2)], 1)  # one delimiter cut short


def bad_charset(rng, data, budget):
    cs = rng.choice(_CHARSETS)
    note = f"bad_charset({cs[:20].decode('latin-1')!r})"
    new, n = re.subn(rb"(?i)charset=\"?[^\";\r\n]*\"?", b"charset=" + cs, data, count=rng.randrange(1, 4))
    if n:
        return new, note
    head, body = _split_head(data)
    return b"Content-Type: text/plain; charset=" + cs + b"\n" + head + body, note


def rfc2047_words(rng, data, budget):
    words = [
        b"=?utf-8?B?" + base64.b64encode("caf\u00e9 \u2603 spam".encode()) + b"?=",
        b"=?iso-8859-1?Q?d=E9j=E0_vu?=",
        b"=?utf-8?Q?=ZZ=?=",
        b"=?x-nope?B?AAAA?=",
        b"=?utf-8?B?!!!?=",
        b"=?utf-16?B?" + base64.b64encode("\ufeffhi".encode("utf-16-le")) + b"?=",
        b"=?utf-8*en?Q?a?=",
        b"=?",
    ]
    n = _log_uniform(rng, max(1, min(20000, budget // 20)))
    value = b" ".join(rng.choice(words) for _ in range(min(n, 200)))
    value = (value + b" ") * max(1, n // 200)
    name = rng.choice([b"Subject", b"From", b"To", b"Content-Disposition"])
    if name == b"Content-Disposition":
        value = b'attachment; filename="' + value + b'"'
    head, body = _split_head(data)
    fields = _header_lines(head)
    at = rng.randrange(len(fields)) if fields else 0
    fields[at:at] = [name + b": " + value + b"\n"]
    return b"".join(fields) + body


def eight_bit(rng, data, budget):
    n = _log_uniform(rng, min(budget, 65536))
    junk = bytes(rng.randrange(0x80, 0x100) for _ in range(min(n, 4096)))
    junk = (junk * (n // max(len(junk), 1) + 1))[:n]
    at = _pos(rng, data)
    return data[:at] + junk + data[at:]


def nul_bytes(rng, data, budget):
    out = bytearray(data)
    for _ in range(_log_uniform(rng, 50)):
        at = rng.randrange(len(out) + 1)
        out[at:at] = b"\x00" * _log_uniform(rng, 100)
    return bytes(out)


def utf16(rng, data, budget):
    if rng.random() < 0.5:
        return rng.choice([b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf"]) + data
    text = data.decode("latin-1")
    return (
        text.encode("utf-16")
        if rng.random() < 0.5
        else b"\xff\xfe" + text.encode("utf-16-le")[: rng.randrange(1, 2 * len(text) + 2)]
    )


def mbox_form(rng, data, budget):
    """Make it an mbox: a real From_ line in front, or a damaged one."""
    line = rng.choice(
        [WRAP_FROM, b"From MAILER-DAEMON Mon Mar  2 10:00:00 2026\r\n", b"From \n", b"From x\r", b"From "]
    )
    return line + data


MUTATIONS = [
    flip_bytes,
    truncate,
    duplicate_span,
    insert_snippet,
    insert_snippet,
    insert_snippet,
    snippet_bomb,
    base64_lines,
    as_html,
    delete_header,
    duplicate_header,
    huge_header,
    change_line_endings,
    deep_mime,
    many_parts,
    break_boundary,
    bad_charset,
    rfc2047_words,
    eight_bit,
    nul_bytes,
    utf16,
    mbox_form,
]


@dataclass
class Case:
    """One fuzzed message: where it came from, what was done, its bytes."""

    name: str
    source: str
    mutations: list[str]
    data: bytes

    def describe(self) -> str:
        return f"{self.name}: {self.source} + {', '.join(self.mutations)} ({len(self.data)} bytes)"


def make_cases(seeds: list[tuple[str, bytes]], count: int, seed: int, max_bytes: int = 1 << 20) -> list[Case]:
    """`count` mutated messages, the same for the same seed: each a random
    seed message with one to four mutations (every mutation is given a
    budget of bytes it may add, so no message exceeds about max_bytes)."""
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        source, data = rng.choice(seeds)
        names = []
        for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
            mutate = rng.choice(MUTATIONS)
            budget = max(16, max_bytes - len(data))
            data = mutate(rng, data, budget)
            data, note = data if isinstance(data, tuple) else (data, mutate.__name__)
            names.append(note)
        if len(data) > max_bytes:
            data, names = data[:max_bytes], names + ["cut to max_bytes"]
        if not data:
            data, names = b"\n", names + ["empty -> newline"]
        cases.append(Case(f"case-{seed}-{i:05d}", source, names, data))
    return cases


def adversarial_cases(size: int = 1 << 18) -> list[Case]:
    """The constructs issue 12 found stalling the filter, each about `size`
    bytes, as fixed cases (so every run has them, whatever the seed)."""
    head = b"From: a@example.org\nTo: b@example.org\nSubject: adversarial\n"
    html = head + b"Content-Type: text/html; charset=utf-8\n\n<html>"
    text = head + b"Content-Type: text/plain\n\n"
    shapes = {
        "html-comments": html + b"<!--" * (size // 4),
        "html-scripts": html + b"<script>" * (size // 8),
        "html-open-tags": html + b'<a href="http://' * (size // 16),
        "uuencode-begins": text + b"begin 644 a.txt\n" * (size // 16),
        "mbox-body-from-lines": WRAP_FROM + text + b"\nFrom here on\n" * (size // 14),
        "mbox-many-messages": WRAP_FROM + text + b"x\n" + (b"\n" + WRAP_FROM + b"Subject: s\n\nx\n") * (size // 70),
        "header-line": head + b"X-Long: " + b"a" * size + b"\n\nbody\n",
        "rfc2047-words": head.replace(b"Subject: adversarial", b"Subject:" + b" =?utf-8?Q?a?=" * (size // 14))
        + b"\nbody\n",
    }
    return [Case(f"adversarial-{name}", "adversarial", [name], data) for name, data in shapes.items()]


# ---------------------------------------------------------------- running and checking


@dataclass
class Failure:
    kind: str
    case: str
    detail: str
    reproducer: str = ""


@dataclass
class Call:
    rc: int | None  # None: timed out
    stdout: bytes
    stderr: bytes
    seconds: float


@dataclass
class Report:
    messages: int = 0
    mbox_messages: int = 0
    calls: int = 0
    failures: list[Failure] = field(default_factory=list)
    timings: list[tuple[float, int, str, bool]] = field(
        default_factory=list
    )  # (seconds per MB beyond start-up, bytes, case, killed)
    baseline: float = 0.0

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.failures:
            out[f.kind] = out.get(f.kind, 0) + 1
        return dict(sorted(out.items()))


HEADER_LINE = re.compile(rb"X-NB-Class: [^\r\n]*(?:\r\n|\n|\r)")
_EXIT_BY_VERDICT = {b"spam": 0, b"ham": 1, b"unsure": 2}
_TROUBLE = re.compile(rb"Traceback \(most recent call last\)|internal error", re.IGNORECASE)


def _blank(message: bytes) -> bool:
    """Nothing to classify: whitespace, or only a From_ line and whitespace."""
    if message.startswith(b"From "):
        nl = message.find(b"\n")
        message = b"" if nl < 0 else message[nl + 1 :]
    return not message.strip()


def match_one(out: bytes, pos: int, message: bytes) -> tuple[int, bytes | None] | None:
    """Match one input message against the filter's output at `pos`:
    (end, verdict) with one X-NB-Class line added at the top of the header
    block, (end, None) for the message unchanged, None for anything else."""
    places = [0]
    if message.startswith(b"From "):  # after the From_ line, however it ends
        places += [k + 1 for k in (message.find(b"\n"), message.find(b"\r")) if k >= 0]
    for p in places:
        if not out.startswith(message[:p], pos):
            continue
        m = HEADER_LINE.match(out, pos + p)
        if m and out.startswith(message[p:], m.end()):
            verdict = m.group()[len(b"X-NB-Class: ") :].split(b";")[0].strip()
            return m.end() + len(message) - p, verdict
    if out.startswith(message, pos):
        return pos + len(message), None
    return None


def check_filter_output(data: bytes, out: bytes) -> tuple[list[bytes | None], int | None]:
    """(verdict per message (None: passed through unchanged), index of the
    first message the output does not match, or None when all match)."""
    pos, verdicts = 0, []
    for k, message in enumerate(split_messages(data)):
        got = match_one(out, pos, message)
        if got is None:
            return verdicts, k
        pos, verdict = got
        verdicts.append(verdict)
    return verdicts, (None if pos == len(out) else len(verdicts))


class Harness:
    """Runs cases through `nbcli` and collects failures.

    nbcli: the command (a list); model: a trained model file; workdir: a
    scratch folder; findings: where reproducers are saved (None: not saved).
    A batch call gets `timeout` seconds plus `timeout_per_mb` per MB of
    input. A single-message filter run may take nbcli's start-up time plus
    `slow_floor` seconds plus `slow_per_mb` per MB (normal mail is analysed
    at well under 1 s per MB, so this is a hang guard, not a speed test:
    the defaults allow 2.8 s for a 128 KB message and 6.5 s for 512 KB);
    slower is the failure "slow", and the run is killed at that limit.

    Single-message runs go first (every `single_every`-th message and all of
    `single_bytes` or more); a message that fails there is left out of the
    batches, so one stalling message costs its own limit only once.
    """

    def __init__(
        self,
        nbcli,
        model,
        workdir,
        findings=None,
        timeout=30.0,
        timeout_per_mb=20.0,
        batch=100,
        single_every=10,
        single_bytes=32768,
        slow_floor=1.5,
        slow_per_mb=10.0,
    ):
        self.nbcli = list(nbcli)
        self.model = str(model)
        self.workdir = Path(workdir)
        self.findings = Path(findings) if findings else None
        self.timeout, self.timeout_per_mb = timeout, timeout_per_mb
        self.batch, self.single_every, self.single_bytes = batch, single_every, single_bytes
        self.slow_floor, self.slow_per_mb = slow_floor, slow_per_mb
        self.report = Report()
        self.workdir.mkdir(parents=True, exist_ok=True)

    # -- processes

    def call(self, args, stdin_path=None, size=0, limit=None) -> Call:
        limit = limit or self.timeout + self.timeout_per_mb * size / 1e6
        self.report.calls += 1
        t0 = time.perf_counter()
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            p = subprocess.run(self.nbcli + [str(a) for a in args], stdin=stdin, capture_output=True, timeout=limit)
            return Call(p.returncode, p.stdout, p.stderr, time.perf_counter() - t0)
        except subprocess.TimeoutExpired as exc:
            return Call(None, exc.stdout or b"", exc.stderr or b"", time.perf_counter() - t0)
        finally:
            if stdin_path:
                stdin.close()

    def _trouble(self, call: Call, what: str) -> tuple[str, str] | None:
        """(kind, detail) when a call hung, crashed or wrote a traceback."""
        if call.rc is None:
            return "hang", f"{what} did not finish in {call.seconds:.0f} s"
        m = _TROUBLE.search(call.stderr)
        if m:
            line = call.stderr[max(0, call.stderr.rfind(b"\n", 0, m.start()) + 1) :].split(b"\n")[0]
            last = call.stderr.strip().splitlines()[-1:] or [b""]
            return (
                "traceback",
                f"{what}: {line.decode('utf-8', 'replace')[:200]} ... {last[0].decode('utf-8', 'replace')[:200]}",
            )
        if call.rc < 0 or call.rc >= 128:
            return "crash", f"{what} exited with status {call.rc}"
        return None

    def fail(self, kind: str, case: Case | None, detail: str, data: bytes | None = None, suffix: str = ".eml") -> None:
        name = case.name if case else f"batch-{len(self.report.failures)}"
        repro = ""
        if self.findings is not None and (data is not None or case is not None):
            self.findings.mkdir(parents=True, exist_ok=True)
            path = self.findings / f"{kind}-{name}{suffix}"
            path.write_bytes(case.data if data is None else data)
            (self.findings / f"{kind}-{name}.txt").write_text(f"{detail}\n{case.describe() if case else ''}\n")
            repro = str(path)
        self.report.failures.append(Failure(kind, name, detail + (f" [{case.describe()}]" if case else ""), repro))

    # -- the checks

    def run(self, cases: list[Case]) -> Report:
        self.report.messages += len(cases)
        self.report.baseline = self._baseline()
        batched = []
        for i, case in enumerate(cases):
            if i % self.single_every == 0 or len(case.data) >= self.single_bytes:
                if not self.check_filter_single(case):
                    continue
            batched.append(case)
        for start in range(0, len(batched), self.batch):
            chunk = batched[start : start + self.batch]
            folder = self.workdir / f"batch-{start:05d}"
            folder.mkdir(exist_ok=True)
            self.check_predict(chunk, folder)
            self.check_filter_mbox(chunk, folder)
            shutil.rmtree(folder, ignore_errors=True)
        return self.report

    def _baseline(self) -> float:
        """nbcli's start-up and model-loading time: the fastest of three
        filter runs over a small message."""
        path = self.workdir / "baseline.eml"
        path.write_bytes(b"Subject: hello\n\nhello world\n")
        return min(self.call(["filter", self.model], stdin_path=path).seconds for _ in range(3))

    def check_predict(self, chunk: list[Case], folder: Path) -> None:
        """One `predict --json` over every case of the chunk as a file:
        each file's number of results must be its number of messages."""
        paths = []
        for case in chunk:
            path = folder / f"{case.name}.eml"
            path.write_bytes(case.data)
            paths.append(path)
        size = sum(len(c.data) for c in chunk)
        call = self.call(["predict", self.model, "--json", *paths], size=size)
        trouble = self._trouble(call, "predict") or (
            None if call.rc == 0 else ("exit-status", f"predict exited {call.rc}")
        )
        if trouble:
            self._pinpoint_predict(chunk, paths, trouble)
            return
        seen: dict[str, int] = {str(p): 0 for p in paths}
        for line in call.stdout.splitlines():
            try:
                doc_id = json.loads(line)["id"]
            except (ValueError, KeyError, TypeError):
                self.fail("predict-output", None, f"not a JSON result line: {line[:200]!r}")
                continue
            owner = doc_id if doc_id in seen else doc_id.rpartition(":")[0]
            if owner not in seen:
                self.fail("predict-output", None, f"result for an unknown id {doc_id!r}")
                continue
            seen[owner] += 1
        for case, path in zip(chunk, paths):
            want = count_messages(case.data)
            if seen[str(path)] != want:
                self.fail("predict-count", case, f"predict reported {seen[str(path)]} messages, the input holds {want}")

    def _pinpoint_predict(self, chunk, paths, trouble) -> None:
        found = False
        for case, path in zip(chunk, paths):
            call = self.call(["predict", self.model, path], size=len(case.data))
            one = self._trouble(call, "predict") or (
                None if call.rc == 0 else ("exit-status", f"predict exited {call.rc}: {call.stderr[-300:]!r}")
            )
            if one:
                self.fail(one[0], case, one[1])
                found = True
        if not found:
            self.fail(trouble[0], None, trouble[1] + " (on the batch only; no single message reproduces it)")

    def check_filter_mbox(self, chunk: list[Case], folder: Path) -> None:
        """One `filter MODEL FILE` over an mbox of every case of the chunk
        (each after a From_ line unless it starts with one, and ended
        by a blank line), then `predict` over the same mbox: the headers
        added, the messages predicted and the messages by the rule agree."""
        entries = [self._entry(c) for c in chunk]
        data = b"".join(entries)
        mbox = folder / "all.mbox"
        mbox.write_bytes(data)
        starts = message_starts(data)
        self.report.mbox_messages += len(starts)
        owner_at, offset = [], 0
        for e in entries:
            owner_at.append(offset)
            offset += len(e)

        def owner(k: int) -> int:  # the case in which message k starts
            return bisect.bisect_right(owner_at, starts[k]) - 1

        call = self.call(["filter", self.model, mbox], size=len(data))
        trouble = self._trouble(call, "filter FILE")
        if trouble:
            self._pinpoint_filter(chunk, entries, trouble)
            return
        verdicts, bad = check_filter_output(data, call.stdout)
        if bad is not None:
            if bad >= len(starts):
                self.fail(
                    "filter-bytes",
                    None,
                    (
                        f"filter wrote {len(call.stdout) - len(data)} bytes more than the input and its headers, "
                        "after the last message"
                    ),
                    data,
                    ".mbox",
                )
            else:
                i = owner(bad)
                self._filter_mismatch(
                    chunk[i],
                    entries,
                    i,
                    (
                        f"filter FILE: message {bad + 1} of the batch mbox does not come out as itself plus one "
                        "X-NB-Class line"
                    ),
                )
        unchanged = [k for k, v in enumerate(verdicts) if v is None]
        messages = split_messages(data) if unchanged else []
        for k in unchanged:
            message = messages[k]
            if not _blank(message):
                self.fail(
                    "filter-error-verdict",
                    chunk[owner(k)],
                    f"filter passed message {k + 1} through with no header (verdict error) though it is not empty",
                    message,
                )
        warnings = len(call.stderr.strip().splitlines())
        if unchanged and warnings < len(unchanged):
            self.fail(
                "filter-no-warning",
                chunk[owner(unchanged[0])],
                f"{len(unchanged)} messages passed through unchanged but stderr has {warnings} lines",
            )
        want_rc = 1 if unchanged else 0
        if bad is None and call.rc != want_rc:
            self.fail(
                "exit-status",
                None,
                f"filter FILE exited {call.rc}, expected {want_rc} ({len(unchanged)} unchanged messages)",
                data,
                ".mbox",
            )
        # predict over the same mbox: one result per message
        pcall = self.call(["predict", self.model, "--json", mbox], size=len(data))
        trouble = self._trouble(pcall, "predict MBOX") or (
            None if pcall.rc == 0 else ("exit-status", f"predict MBOX exited {pcall.rc}")
        )
        if trouble:
            self.fail(trouble[0], None, trouble[1], data, ".mbox")
        elif len(pcall.stdout.splitlines()) != len(starts):
            got = len(pcall.stdout.splitlines())
            self.fail(
                "predict-count",
                None,
                f"predict on the batch mbox reported {got} messages, the rule gives {len(starts)}",
                data,
                ".mbox",
            )

    @staticmethod
    def _entry(case: Case) -> bytes:
        data = case.data if is_from_line(case.data) else WRAP_FROM + case.data
        return data + (b"" if data.endswith(b"\n") else b"\n") + b"\n"

    def _filter_mismatch(self, case: Case, entries: list[bytes], i: int, detail: str) -> None:
        """Save the smallest input that shows a batch mismatch: the case's
        entry alone if it shows it, else with the entry before it."""
        for data in [entries[i]] if i == 0 else [entries[i], entries[i - 1] + entries[i]]:
            path = self.workdir / "one.mbox"
            path.write_bytes(data)
            call = self.call(["filter", self.model, path], size=len(data))
            if call.rc is not None and check_filter_output(data, call.stdout)[1] is not None:
                self.fail("filter-bytes", case, detail, data, ".mbox")
                return
        self.fail("filter-bytes", case, detail + " (only in the batch)", entries[i], ".mbox")

    def _pinpoint_filter(self, chunk, entries, trouble) -> None:
        found = False
        for case, data in zip(chunk, entries):
            path = self.workdir / "one.mbox"
            path.write_bytes(data)
            one = self._trouble(self.call(["filter", self.model, path], size=len(data)), "filter FILE")
            if one:
                self.fail(one[0], case, one[1], data, ".mbox")
                found = True
        if not found:
            self.fail(trouble[0], None, trouble[1] + " (on the batch only; no single message reproduces it)")

    def check_filter_single(self, case: Case) -> bool:
        """`filter --exit-codes MODEL < FILE` on the case as it is (not made
        an mbox): the time, the output check and the exit status by
        verdict. False if it hung, crashed or was too slow (the case is
        then left out of the batches)."""
        path = self.workdir / "single.eml"
        path.write_bytes(case.data)
        mb = len(case.data) / 1e6
        limit = self.report.baseline + self.slow_floor + self.slow_per_mb * mb
        call = self.call(["filter", "--exit-codes", self.model], stdin_path=path, limit=limit)
        excess = max(0.0, call.seconds - self.report.baseline)
        self.report.timings.append((excess / max(mb, 1e-6), len(case.data), case.name, call.rc is None))
        if call.rc is None:
            self.fail(
                "slow",
                case,
                (
                    f"filter < FILE killed after {call.seconds:.1f} s (limit {self.slow_floor:g} s + "
                    f"{self.slow_per_mb:g} s/MB beyond start-up)"
                ),
            )
            return False
        trouble = self._trouble(call, "filter < FILE")
        if trouble:
            self.fail(trouble[0], case, trouble[1])
            return False
        verdicts, bad = check_filter_output(case.data, call.stdout)
        if bad is not None:
            self.fail(
                "filter-bytes",
                case,
                f"filter < FILE: message {bad + 1} does not come out as itself plus one X-NB-Class line",
            )
            return True
        if len(verdicts) == 1:
            want = _EXIT_BY_VERDICT.get(verdicts[0], 3) if verdicts[0] is not None else 3
        else:
            want = 3 if None in verdicts else 0
        if call.rc != want:
            self.fail(
                "exit-status",
                case,
                f"filter --exit-codes < FILE exited {call.rc}, expected {want} (verdicts {verdicts})",
            )
        for k, v in enumerate(verdicts):
            if v is None and not _blank(split_messages(case.data)[k]):
                self.fail(
                    "filter-error-verdict",
                    case,
                    (
                        f"filter < FILE passed message {k + 1} through with no header (verdict error) though it is "
                        "not empty"
                    ),
                )
        if None in verdicts and not call.stderr.strip():
            self.fail("filter-no-warning", case, "a message passed through unchanged with nothing on stderr")
        return True


def summary(report: Report, top: int = 5) -> str:
    """The run in a few lines: messages, failures by kind, slowest messages."""
    lines = [
        (
            f"messages: {report.messages} fuzzed ({report.mbox_messages} in the batch mboxes by the From_ rule), "
            f"{report.calls} nbcli calls"
        ),
        f"failures: {len(report.failures)}" + "".join(f"\n  {k}: {n}" for k, n in report.by_kind().items()),
    ]
    # Below ~64 KB the start-up time's jitter outweighs the analysis time.
    big = sorted((t for t in report.timings if t[1] >= 65536), reverse=True)[:top]
    lines.append(
        f"slowest single-message filter runs (seconds per MB beyond start-up {report.baseline:.2f} s; messages "
        "of 64 KB or more):"
    )
    lines += [
        f"  {'>=' if killed else '  '}{s:7.2f} s/MB  {n / 1e6:7.3f} MB  {name}"
        + (" (killed at the limit)" if killed else "")
        for s, n, name, killed in big
    ]
    lines += [] if big else ["  (none timed)"]
    done = [t for t in report.timings if t[1] >= 65536 and not t[3]]
    if done:
        mb = sum(t[1] for t in done) / 1e6
        lines.append(
            f"  all {len(done)} finished runs of 64 KB or more: {sum(t[0] * t[1] / 1e6 for t in done) / mb:.2f} "
            f"s/MB beyond start-up, over {mb:.1f} MB"
        )
    return "\n".join(lines)
