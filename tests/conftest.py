"""Shared fixtures: a CLI runner and seeded corpora built on the fly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nbcli.cli import cli

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_corpora"


def run(args, input=None, env=None):
    """Invoke the CLI in-process; result.stdout and result.stderr are apart."""
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, env=env, catch_exceptions=False)


def run_process(args, input=None, timeout=120, env=None):
    """Run `python -m nbcli ARGS` as a real process."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "nbcli", *map(str, args)],
        input=input,
        capture_output=True,
        timeout=timeout,
        env=full_env,
    )


TOPIC_WORDS = {
    "space": "star planet orbit comet galaxy telescope nebula moon rocket crater",
    "food": "oven recipe flour butter garlic simmer sauce bake onion pepper",
    "sport": "goal match striker league coach referee pitch season keeper derby",
    "code": "function compile python bug commit branch server deploy query cache",
}
COMMON = "the and with for this that very some time day good new people about over just like".split()


def make_docs(n_docs: int, seed: int = 0, classes=None, vocab_size: int = 3000):
    """Seeded synthetic multi-class documents: (texts, labels).

    Each class draws from a shared Zipf-like background vocabulary plus its
    own topic words, so classes overlap and predictions are not all ~1.0.
    """
    rng = np.random.default_rng(seed)
    classes = classes or sorted(TOPIC_WORDS)
    background = [f"w{i}x" for i in range(vocab_size)] + COMMON
    zipf = 1.0 / np.arange(1, len(background) + 1)
    zipf /= zipf.sum()
    texts, labels = [], []
    for i in range(n_docs):
        label = classes[i % len(classes)]
        topic = TOPIC_WORDS.get(label, "alpha beta gamma").split()
        n = int(rng.integers(3, 60))
        words = list(rng.choice(background, size=n, p=zipf))
        k = int(rng.binomial(n, 0.15))
        words += list(rng.choice(topic, size=k))
        rng.shuffle(words)
        # Mixed case and punctuation, so lowercasing and token rules matter.
        text = " ".join(w.capitalize() if rng.random() < 0.1 else w for w in words) + "."
        texts.append(text)
        labels.append(label)
    return texts, labels


@pytest.fixture
def make_class_folders(tmp_path):
    """Write texts/labels as CORPUS/<label>/<n>.txt; returns the corpus path."""

    def make(texts, labels, name="corpus"):
        root = tmp_path / name
        for i, (text, label) in enumerate(zip(texts, labels)):
            d = root / label
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{i:05d}.txt").write_text(text, encoding="utf-8")
        return root

    return make


@pytest.fixture
def make_jsonl(tmp_path):
    def make(texts, labels=None, name="data.jsonl"):
        path = tmp_path / name
        with open(path, "w", encoding="utf-8") as fh:
            for i, text in enumerate(texts):
                rec = {"id": f"d{i}", "text": text}
                if labels is not None:
                    rec["label"] = labels[i]
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        return path

    return make


@pytest.fixture
def small_model(tmp_path, make_class_folders):
    """A model trained through the CLI on a small two-class corpus."""
    texts, labels = make_docs(200, seed=1, classes=["code", "food"])
    corpus = make_class_folders(texts, labels)
    model = tmp_path / "small.nb"
    result = run(["train", corpus, "-o", model, "-q"])
    assert result.exit_code == 0, result.stderr
    return model


@pytest.fixture
def plain_model(tmp_path, make_class_folders):
    """`small_model` without a calibration map: a plain multinomial model."""
    texts, labels = make_docs(200, seed=1, classes=["code", "food"])
    corpus = make_class_folders(texts, labels)
    model = tmp_path / "plain.nb"
    result = run(["train", corpus, "-o", model, "-q", "--calibrate", "none"])
    assert result.exit_code == 0, result.stderr
    return model
