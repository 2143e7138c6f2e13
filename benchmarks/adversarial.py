"""Analysis time on adversarial mail: seconds per MB, against normal mail.

    make bench-adversarial     (= cd benchmarks && python adversarial.py)

The analysis of a message is what `nbcli filter` does per message before
the model: `nbcli.text.mail.extract` plus the Analyzer's tokenization (timed as
`Analyzer.analyze([raw], ["mail"])`, the best of NBCLI_BENCH_RUNS runs,
default 3). Normal mail: every message of sample_corpora/mail, and the
SpamAssassin corpus when bench-cache/spam-assassin is there (fetched by
`make bench-accuracy`; not fetched here). Each adversarial input is one
message of about 500 KB (the analysis cap is 512 KB) built from one
construct repeated; the first three are issue 12's reports, the others
the constructs found super-linear when every step of the analyzer was
audited. Each message file also goes once through `nbcli filter` end to
end (interpreter start and model loading included; a model trained on
sample_corpora/mail/train).

Acceptance: every adversarial figure within 10x of normal mail's seconds
per MB. Results go to stdout and to the "adversarial" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import report
from fetch import CACHE

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from nbcli.text.analyzer import Analyzer  # noqa: E402

RUNS = int(os.environ.get("NBCLI_BENCH_RUNS", "3"))
NBCLI = str(Path(sys.executable).parent / "nbcli")
SIZE = 500_000
LIMIT = 10.0  # adversarial s/MB over normal s/MB


def _rep(unit: bytes, size: int = SIZE) -> bytes:
    return unit * max(1, size // len(unit))


def _html(body: bytes) -> bytes:
    return b"From: a@example.com\nSubject: s\nContent-Type: text/html\n\n<html>" + body


def _plain(body: bytes) -> bytes:
    return b"From: a@example.com\nSubject: s\n\n" + body


def _header(name: bytes, value: bytes) -> bytes:
    return name + b": " + value + b"\nFrom: a@example.com\nSubject: s\n\nbody\n"


def _nested(depth: int) -> bytes:
    """`depth` multiparts, each inside the one before, then lines that start
    like a boundary but are none: the email package checks each line against
    every open boundary."""
    head = b'From: a@example.com\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b0"\n\n'
    opening = b"".join(b'--b%d\nContent-Type: multipart/mixed; boundary="b%d"\n\n' % (i, i + 1) for i in range(depth))
    inner = b"--b%d\nContent-Type: text/plain\n\n" % depth
    return head + opening + inner + _rep(b"--b\n")[: max(0, SIZE - len(head) - len(opening) - len(inner))]


# name -> (what it is, the message)
ATTACKS = {
    "html-comment": ("issue 12: `<html>` + `<!--` x130,000", lambda: _html(b"<!--" * 130_000)),
    "html-script": ("issue 12: `<script>` repeated", lambda: _html(_rep(b"<script>"))),
    "uuencode-begin": ("issue 12: `begin 644 a.txt` lines, no `end`", lambda: _plain(_rep(b"begin 644 a.txt\n"))),
    "html-style": ("`<style>` repeated", lambda: _html(_rep(b"<style>"))),
    "html-head": ("`<head>` repeated", lambda: _html(_rep(b"<head>"))),
    "html-lt": ("`<` repeated (no `>`)", lambda: _html(_rep(b"<"))),
    "html-inline-tag": ("`<b ` repeated (no `>`)", lambda: _html(_rep(b"<b "))),
    "html-end-tag-ws": ("`<script></script ` repeated", lambda: _html(_rep(b"<script></script "))),
    "url-www": ("`www.` repeated (plain text)", lambda: _plain(_rep(b"www."))),
    "url-many-labels": ("`http://a.a.a...` one host of 250,000 labels", lambda: _plain(b"http://" + _rep(b"a."))),
    "encoded-word-open": (
        "Subject: `=?utf-8?q?a ` repeated (no `?=`)",
        lambda: _header(b"Subject", _rep(b"=?utf-8?q?a ")),
    ),
    "encoded-words": ("Subject: `=?utf-8?q?a?= ` repeated", lambda: _header(b"Subject", _rep(b"=?utf-8?q?a?= "))),
    "address-parens": ("From: `(` repeated (RecursionError before)", lambda: _header(b"From", _rep(b"("))),
    "address-angles": ("To: `<` repeated", lambda: _header(b"To", _rep(b"<"))),
    "address-quotes": ('To: `"a" ` repeated', lambda: _header(b"To", _rep(b'"a" '))),
    "charset-punycode": (
        "charset=punycode body",
        lambda: _plain(b"").replace(b"\n\n", b"\nContent-Type: text/plain; charset=punycode\n\n-") + _rep(b"abcdefgh"),
    ),
    "mime-parts": (
        "15,600 MIME parts",
        lambda: (
            b"From: a@example.com\nContent-Type: multipart/mixed; boundary=b\n\n"
            + _rep(b"--b\nContent-Type: text/plain\n\nx\n")
        ),
    ),
    "header-lines": (
        "71,000 header lines and a bad one",
        lambda: b"From: a@example.com\n" + _rep(b"X-A: b\n") + b"bad line\n\nbody\n",
    ),
    "mime-deep": ("800 nested multiparts, then `--b` lines (found by make fuzz)", lambda: _nested(800)),
    "mime-deep-16": ("16 nested multiparts (the most read), then `--b` lines", lambda: _nested(15)),
}


def seconds(analyzer: Analyzer, messages: list[bytes]) -> float:
    """Best-of-RUNS time to analyze `messages`, one call per message."""
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        for raw in messages:
            analyzer.analyze([raw], ["mail"])
        best = min(best, time.perf_counter() - start)
    return best


def normal_corpora() -> list[tuple[str, list[bytes]]]:
    corpora = [
        ("sample_corpora/mail", [p.read_bytes() for p in sorted((ROOT / "sample_corpora" / "mail").rglob("*.eml"))])
    ]
    sa = CACHE / "spam-assassin"
    if (sa / ".complete").exists():
        files = sorted((sa / "package" / "data").glob("*/*.txt"))
        corpora.append(("SpamAssassin corpus", [p.read_bytes() for p in files]))
    else:
        print(f"{sa} is absent: SpamAssassin row skipped (make bench-accuracy fetches it)", file=sys.stderr)
    return corpora


def filter_seconds(model: Path, path: Path) -> str:
    start = time.perf_counter()
    try:
        subprocess.run(
            [NBCLI, "filter", str(model), str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "> 600"
    return f"{time.perf_counter() - start:.2f}"


def main() -> None:
    analyzer = Analyzer()
    rows = []
    normal_rate = None
    for name, messages in normal_corpora():
        mb = sum(map(len, messages)) / 1e6
        rate = seconds(analyzer, messages) / mb
        rows.append([f"normal: {name} ({len(messages)} messages, {mb:.1f} MB)", f"{rate:.3f}", "", "", "", rate])
    # The reference is the fastest normal figure: the strictest test (small
    # messages pay a per-message cost that inflates their seconds per MB).
    normal_rate = min(row[-1] for row in rows)
    for row in rows:
        row[2] = "1x (reference)" if row[-1] == normal_rate else f"{row[-1] / normal_rate:.1f}x"
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "mail.nb"
        subprocess.run(
            [NBCLI, "train", str(ROOT / "sample_corpora" / "mail" / "train"), "-o", str(model)],
            check=True,
            capture_output=True,
        )
        for name, (what, build) in ATTACKS.items():
            raw = build()
            path = Path(tmp) / f"{name}.eml"
            path.write_bytes(raw)
            rate = seconds(analyzer, [raw]) / (len(raw) / 1e6)
            ratio = rate / normal_rate
            rows.append(
                [
                    f"{name}: {what} ({len(raw) // 1000} KB)",
                    f"{rate:.3f}",
                    f"{ratio:.1f}x",
                    "yes" if ratio <= LIMIT else "**no**",
                    filter_seconds(model, path),
                    rate,
                ]
            )
            print(" | ".join(str(c) for c in rows[-1][:-1]), flush=True)
    header = ["input", "analysis s/MB", "vs normal mail", f"within {LIMIT:.0f}x", "`nbcli filter` s (whole process)"]
    table = report.table(header, [row[:-1] for row in rows])
    passed = sum(1 for row in rows if row[3] == "yes")
    adversarial = len(ATTACKS)
    markdown = (
        "## Analysis time on adversarial mail\n"
        "\n"
        "Seconds per MB of analysis (`extract` and tokenization, as `nbcli filter` does per message; best of "
        f'{RUNS} runs) for normal mail and for one message of about 500 KB of each crafted construct; "vs '
        'normal mail" divides by the fastest normal figure (the strictest reference: the sample messages are '
        "small, 2 KB on average, and pay a per-message cost that inflates their seconds per MB). The last "
        "column runs `nbcli filter` once on the message file, interpreter start and model loading included "
        "(about 0.3 s of it). Before the fixes of issue 12 (reported sizes), the first three took 325 s, 83 "
        "s and 12 s in `nbcli filter` (on this machine, `extract` alone: 309 s, 282 s and 10.7 s; now 0.004 "
        "s, 0.002 s and 0.003 s); `address-parens` ended in a RecursionError, `encoded-word-open` took 113 s "
        "in the email package's `decode_header`, and the other HTML rows and `url-www` did not finish within "
        "60 s.\n"
        "\n"
        f"{table}\n"
        "\n"
        f"{passed} of {adversarial} adversarial inputs within {LIMIT:.0f}x of normal mail. Command: `make "
        f"bench-adversarial` ({report.machine()}; the machine is shared, so read the ratios).\n"
    )
    print(markdown)
    print(f"written to {report.update_section('adversarial', markdown)}", file=sys.stderr)


if __name__ == "__main__":
    main()
