"""The scikit-learn peer: the script a user would write by hand.

    python peer_sklearn.py train CORPUS_DIR MODEL    # class folders of raw messages
    python peer_sklearn.py predict MODEL FILE...     # one line per file: path, label

CountVectorizer + MultinomialNB with their defaults, on the raw messages
decoded as UTF-8 (errors replaced), saved with joblib. speed.py times it as
a whole process, imports included, as a user would run it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import joblib
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def train(corpus: Path, model: Path) -> None:
    paths = sorted(p for p in corpus.rglob("*") if p.is_file() and not p.name.startswith("."))
    vectorizer = CountVectorizer()
    X = vectorizer.fit_transform(read(p) for p in paths)
    nb = MultinomialNB().fit(X, [p.relative_to(corpus).parts[0] for p in paths])
    joblib.dump((vectorizer, nb), model)


def predict(model: Path, files: list[Path]) -> None:
    vectorizer, nb = joblib.load(model)
    for path, label in zip(files, nb.predict(vectorizer.transform(read(p) for p in files))):
        print(f"{path}\t{label}")


if __name__ == "__main__":
    command, args = sys.argv[1], [Path(a) for a in sys.argv[2:]]
    if command == "train":
        train(*args)
    else:
        predict(args[0], args[1:])
