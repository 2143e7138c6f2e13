"""Shared fixtures: a CLI runner and seeded corpora built on the fly."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nbcli.cli.main import cli

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


def make_skewed_docs(n_docs: int = 600, positives: int = 40, seed: int = 3):
    """Seeded two-class documents where the class "space" is rare
    (`positives` of `n_docs`), the rest "code": (texts, labels), for
    `train --decide` (the topic words overlap little, so the rare class's
    probabilities spread over (0, 1))."""
    texts, labels = make_docs(2 * n_docs, seed=seed, classes=["code", "space"])
    rare = [i for i, lab in enumerate(labels) if lab == "space"][:positives]
    common = [i for i, lab in enumerate(labels) if lab == "code"][: n_docs - positives]
    keep = sorted(rare + common)
    return [texts[i] for i in keep], [labels[i] for i in keep]


def brute_force_threshold(scores, positive, objective: str, weights=None):
    """The oracle of `train --decide`'s threshold: every rule "s >= t", t a
    midpoint between adjacent distinct scores or the lowest score, scored by
    scikit-learn's f1_score or balanced_accuracy_score; (the best t, the
    highest among equals; its value)."""
    from sklearn.metrics import balanced_accuracy_score, f1_score

    def score(y, p, w):
        if objective == "f1":
            return f1_score(y, p, sample_weight=w, zero_division=0.0)
        return balanced_accuracy_score(y, p, sample_weight=w)

    distinct = np.unique(scores)[::-1]
    candidates = [(a + b) / 2 for a, b in zip(distinct[:-1], distinct[1:])] + [distinct[-1]]
    best_t, best_value = None, -1.0
    for t in candidates:
        value = score(positive, scores >= t, weights)
        if value > best_value + 1e-12:
            best_t, best_value = t, value
    return best_t, best_value


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


@pytest.fixture
def classifier():
    """A classifier trained in process (bigrams, two stop words, alpha 0.3,
    a uniform prior, min_df 2): a plain multinomial model, format version 1
    (the model file tests in tests/store/)."""
    from nbcli.fit.settings import TrainOptions
    from nbcli.fit.training import train
    from nbcli.text.analyzer import AnalyzerOptions
    from nbcli.text.sources import Document

    texts, labels = make_docs(300, seed=11)
    docs = [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    return train(
        docs, AnalyzerOptions(ngrams=2, stop_words=("the", "and")), TrainOptions(alpha=0.3, prior="uniform", min_df=2)
    )


@pytest.fixture(scope="session")
def sample_mail_model(tmp_path_factory):
    """The model `nbcli train` makes of the sample mail (calibrated, as by
    default). Shared: copy it (`mail_model_copy`) to change it."""
    path = tmp_path_factory.mktemp("trained") / "mail.nb"
    result = run(["train", SAMPLES / "mail" / "train", "-o", path, "-q"])
    assert result.exit_code == 0, result.stderr
    return path


@pytest.fixture
def mail_model_copy(tmp_path, sample_mail_model):
    """A fresh copy of the model trained on the sample mail."""
    path = tmp_path / "mail.nb"
    shutil.copyfile(sample_mail_model, path)
    return path


def model_info(path) -> dict:
    """`nbcli info --json MODEL`."""
    result = run(["info", "--json", path])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def one_line_error(result, code=1) -> str:
    """The one line a failed command says, after checking its exit status."""
    assert result.exit_code == code, (result.exit_code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(("nbcli: error: ", "Error: ")), result.stderr
    return lines[0]


# -- Debian's packages for the tests with real peers ---------------------------------

_APT_UPDATED = False
_APT_LOCK = Path(tempfile.gettempdir()) / "nbcli-tests-apt.lock"


def debian_tool(package: str, *commands: str, usable=None) -> list[str]:
    """The paths of `commands`, installing Debian's `package` (one, or
    several separated by spaces) with apt-get when any is missing (or
    `usable(paths)` says the ones found will not do) and this is root on a
    machine with apt-get, as CI is; else the test is skipped with one short
    reason. The index is refreshed once per session, only when an install
    fails without it. The suite's workers (make test runs pytest-xdist)
    install one at a time: under a lock file, each looks again for what
    another may have installed meanwhile, and apt-get waits for dpkg's own
    lock, where something else holds it, rather than failing at once."""
    global _APT_UPDATED

    def found():
        paths = [shutil.which(c) or shutil.which(c, path="/usr/sbin:/sbin") for c in commands]
        return None if None in paths or (usable is not None and not usable(paths)) else paths

    if (paths := found()) is not None:
        return paths
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip(f"{package} is not installed, and cannot be installed here (not root, or no apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600"]
    install = [*apt, "install", "-y", "-qq", "--no-install-recommends", *package.split()]
    with open(_APT_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
        if (paths := found()) is not None:
            return paths
        try:
            for step in [install] if _APT_UPDATED else [install, [*apt, "update", "-qq"], install]:
                done = subprocess.run(step, capture_output=True, timeout=900, env=env)
                _APT_UPDATED |= "update" in step and done.returncode == 0
                if (paths := found()) is not None:
                    return paths
        except subprocess.TimeoutExpired:
            pytest.skip(f"installing {package} with apt-get timed out")
    pytest.skip(f"{package} is not installed and apt-get could not install it")


def docs_text() -> str:
    """The README and the user guide's pages (docs/guide/), in order: where
    the examples and configurations a test tries are shown."""
    pages = [REPO / "README.md", *sorted((REPO / "docs" / "guide").glob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


# -- a real IMAP server for `nbcli imap` (tests/dovecot.py) ---------------------------


@pytest.fixture
def dovecot():
    """A fresh Dovecot with one user, INBOX and Junk, stopped after the test."""
    from dovecot import Dovecot, dovecot_binary

    server = Dovecot(dovecot=dovecot_binary())
    yield server
    server.close()


@pytest.fixture
def make_dovecot():
    """Dovecot servers with other settings: make_dovecot(capabilities=...)."""
    from dovecot import Dovecot, dovecot_binary

    servers = []

    def make(**settings):
        servers.append(Dovecot(dovecot=dovecot_binary(), **settings))
        return servers[-1]

    yield make
    for server in servers:
        server.close()
