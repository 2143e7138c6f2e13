"""Fuzz `nbcli serve`: malformed and mutated spamd requests against a running daemon.

    python tools/fuzz_serve.py --count 20000 --seed 1     # what `make fuzz-serve` runs

The requests and checks are in tests/serve_fuzzing.py: every reply a valid
spamd reply or a closed connection, none slower than --timeout, a correct
CHECK still answered after each batch of 500, no worker crash, the model
unchanged; the workers' memory before and after is printed. Exits 1 on any
failure, listing the first ones.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import serve_fuzzing  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=2.0, help="the daemon's --timeout")
    parser.add_argument(
        "--tell",
        action="store_true",
        help="--allow-tell, a journal at any model size, and well-formed TELLs checked against learning in memory",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nbfz") as workdir:
        model = serve_fuzzing.main_model(Path(workdir))
        report = serve_fuzzing.run(
            model,
            args.count,
            args.seed,
            timeout=args.timeout,
            say=lambda line: print(line, file=sys.stderr),
            tell=args.tell,
        )
    print(report.summary())
    for line in report.crashes + report.failures[:20]:
        print(f"  {line}")
    return 1 if report.failures or report.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
