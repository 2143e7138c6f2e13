"""A reader of `load_view` keeps resident only what it reads for every
message (`modelfile._release_unread`, `integrity.release_pages`): a mapped
model file's other tables leave the process's resident set once checked,
and read the same when something reads them again."""

from __future__ import annotations

import gc
import os
import sys

import numpy as np
import pytest
from test_journal import trained

from nbcli.fit import learning
from nbcli.fit.analysed import analyse_for_learning
from nbcli.nb.counts import Counts
from nbcli.nb.overlay import JournalView
from nbcli.store import integrity, modelfile
from nbcli.text import hashing
from nbcli.text.sources import Document

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")

N_TERMS = 40_000
TEXTS = ["term17 term4000 term39999 nowhere", "term3 term3 term250 term31000", "zebra term12345"]


def resident_bytes(path) -> int:
    """Resident bytes of this process's mappings of file `path`."""
    real, total, mine = os.path.realpath(path), 0, False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5 and ":" in head[3]:  # a mapping's first line
                mine = len(head) >= 6 and head[5] == real
            elif mine and head and head[0] == "Rss:":
                total += int(head[1]) * 1024
    return total


@pytest.fixture
def big_model(tmp_path, monkeypatch):
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    words = [f"term{i}" for i in range(N_TERMS)]
    pairs = [(" ".join(words[i : i + 400]), "ab"[(i // 400) % 2]) for i in range(0, N_TERMS, 400)]
    path = tmp_path / "big.nb"
    modelfile.save(trained(pairs), str(path))
    return path


def test_released_pages_of_a_mapped_array_leave_the_resident_set_and_read_the_same(big_model):
    p = integrity.read_payload(str(big_model))
    weights = p["weights"]
    before = weights.copy()
    assert resident_bytes(big_model) >= weights.nbytes  # the checksum read every page
    released = integrity.release_pages(weights)
    assert released >= weights.nbytes - 2 * 4096
    pages = -(-os.path.getsize(big_model) // 4096) * 4096
    assert resident_bytes(big_model) <= pages - released
    assert np.array_equal(weights, before)  # read back from the file
    copied = integrity.read_payload(str(big_model), copy=True)
    assert integrity.release_pages(copied["weights"]) == 0  # in memory: nothing to release


def assert_reads_the_same(mapped, copied):
    assert np.array_equal(mapped.log_proba(TEXTS), copied.log_proba(TEXTS))
    assert mapped.score(TEXTS, explain=5)[1] == copied.score(TEXTS, explain=5)[1]  # the terms' texts
    hashes = hashing.hash_strings([f"term{i}" for i in range(0, N_TERMS, 97)])
    a, b = Counts.of_terms(mapped, hashes), Counts.of_terms(copied, hashes)
    for name in ("hashes", "blob", "offsets", "tf", "last_seen"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert modelfile.model_id(mapped) == modelfile.model_id(copied)


def test_a_mapped_model_keeps_resident_its_hashes_and_weights_only(big_model):
    mapped = modelfile.load_view(str(big_model))
    p = integrity.read_payload(str(big_model), copy=True)
    scored = p["vocab_hashes"].nbytes + p["weights"].nbytes
    unread = sum(p[k].nbytes for k in ("feature_count", "vocab_blob", "vocab_offsets", "term_last_seen"))
    assert unread > scored / 2
    assert resident_bytes(big_model) <= scored + 16 * 4096  # whole pages, and the pickle's plain values
    assert_reads_the_same(mapped, modelfile.load_view(str(big_model), copy=True))


def test_a_view_releases_the_stored_weights_its_journal_made_stale(big_model):
    path = str(big_model)
    current = modelfile.load_view(path)
    docs = analyse_for_learning(current.analyzer, [Document("x", "a", "term5 term6 fresh", "text")])
    modelfile.append_update(path, learning.learn_update(current, docs)[0], since=current)
    del current, docs
    gc.collect()  # its mapping goes with it
    view = modelfile.load_view(path)
    assert isinstance(view, JournalView)
    p = integrity.read_payload(path, copy=True)
    # the view reads the hashes and the counts it derives weights from; laying the update over the
    # base read a few pages of the rest, released again
    assert resident_bytes(big_model) <= p["vocab_hashes"].nbytes + p["feature_count"].nbytes + 16 * 4096
    assert_reads_the_same(view, modelfile.load_view(path, copy=True))


def test_a_view_releases_the_pages_of_the_checkpoint_it_mapped(big_model, monkeypatch):
    """A journal's checkpoint is mapped from the file (`journal._mapped_checkpoint`):
    once the view is made, its pages leave the resident set (`journal.release`),
    and the view reads the same as one of the checkpoint read into memory."""
    from nbcli.store import journal, journal_updates

    monkeypatch.setattr(journal_updates, "CHECKPOINT_MIN_BYTES", 0)  # a checkpoint after the first update
    monkeypatch.setattr(journal_updates, "_marks", {})
    path = str(big_model)
    for text in (" ".join(f"term{i}" for i in range(0, N_TERMS, 3)), "term5 term6 fresh"):
        current = modelfile.load_view(path)
        docs = analyse_for_learning(current.analyzer, [Document("x", "a", text, "text")])
        modelfile.append_update(path, learning.learn_update(current, docs)[0], since=current)
        del current, docs
    gc.collect()
    snapshot = journal.read(path)
    assert snapshot.starts_with_checkpoint and len(snapshot.bodies) == 2
    checkpoint = len(snapshot.bodies[0])
    assert checkpoint > 64 * 4096 and resident_bytes(journal.path_of(path)) >= checkpoint - 4096  # its checksum read it
    del snapshot
    gc.collect()
    view = modelfile.load_view(path)
    assert isinstance(view, JournalView)
    assert resident_bytes(journal.path_of(path)) <= 4096
    assert_reads_the_same(view, modelfile.load_view(path, copy=True))
