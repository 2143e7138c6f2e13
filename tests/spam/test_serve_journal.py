"""`nbcli serve` and a model's journal (store/journal.py): a worker serves
the model read through its journal, reads it again when the journal grows,
and keeps serving the last good model when the journal is damaged."""

from __future__ import annotations

import sys

import pytest
from test_serve import HAM_FILE, SPAM_FILE, TRAIN, Server, model_id, nbcli, served_id

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and signals")


def learned_into_journal(path, message, monkeypatch) -> None:
    """Learn `message` as spam, appending to the journal (the test model is
    under the size from which nbcli keeps one)."""
    from nbcli.fit import learning
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.store import modelfile
    from nbcli.text.sources import Document

    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    with modelfile.locked(str(path)):
        current = modelfile.load(str(path))
        docs = analyse_for_learning(current.analyzer, [Document("m", "spam", message.read_bytes(), "mail")])
        updated, _ = learning.learn(current, docs)
        modelfile.save(updated, str(path), since=current)


def test_a_worker_serves_the_journal_reads_it_again_and_survives_its_damage(tmp_path, monkeypatch):
    path = tmp_path / "mail.nb"
    nbcli("train", TRAIN, "-o", path, "-q")
    trained = model_id(path)
    learned_into_journal(path, HAM_FILE, monkeypatch)
    journal = tmp_path / "mail.nb.journal"
    assert journal.exists()
    first = model_id(path)
    assert first != trained
    message = SPAM_FILE.read_bytes()
    srv = Server(path, "--workers", "1")
    try:
        assert served_id(srv.unix, message) == first
        learned_into_journal(path, sorted(HAM_FILE.parent.iterdir())[3], monkeypatch)
        second = model_id(path)
        assert second != first
        assert served_id(srv.unix, message) == second  # the journal grew: read again
        good = journal.read_bytes()
        damaged = bytearray(good)
        damaged[good.index(b"NBJR") + 40] ^= 0xFF  # the first of two updates
        journal.write_bytes(bytes(damaged))
        assert served_id(srv.tcp, message) == second  # the last good model keeps serving
        srv.assert_alive()
    finally:
        assert srv.stop() == 0, "".join(srv.stderr)
