"""What identifies a learned document (nbcli/text/identity.py): the content
digest `forget` and `prune` match on, and the Message-ID and Date read from
the header block only."""

import numpy as np

from nbcli.text.analyzer import Analyzer
from nbcli.text.identity import date_order, digests, document_entries, message_fields, message_id_hash, run_time

MESSAGE = (
    b"Message-ID: <abc.123@mail.example.org>\nDate: Tue, 20 Aug 2002 10:21:23 +0100\nSubject: lunch\n\n"
    b"see you at noon\n"
)


def test_message_id_and_date_come_from_the_header_block_only():
    message_id, date = message_fields(MESSAGE)
    assert message_id == "abc.123@mail.example.org"
    assert date == 1029835283.0  # 09:21:23 UTC
    body_only = b"Subject: x\n\nMessage-ID: <not.a.header@example.org>\nDate: Tue, 20 Aug 2002 10:21:23 +0100\n"
    assert message_fields(body_only) == (None, None)
    assert message_fields("a text document, not bytes") == (None, None)


def test_a_folded_message_id_and_a_date_without_a_zone():
    raw = b"Message-ID:\n <folded@example.org>\nDate: 20 Aug 2002 10:21:23\n\nbody\n"
    assert message_fields(raw) == ("folded@example.org", 1029838883.0)  # no zone: UTC
    assert message_fields(b"Date: next tuesday\n\nbody\n") == (None, None)


def test_the_digest_ignores_what_the_analyzer_ignores():
    """A message filed by `nbcli filter` (an X-NB-Class header, CRLF line
    endings) is the same learned document; a different text is not."""
    filed = MESSAGE.replace(b"\n\n", b"\nX-NB-Class: ham\n\n").replace(b"\n", b"\r\n")
    other = MESSAGE.replace(b"noon", b"one")
    batch = Analyzer().analyze([MESSAGE, filed, other], ["mail"] * 3)
    got = digests(batch.hashes, batch.doc_ptr)
    assert got.shape == (3, 2) and got.dtype == np.uint64
    assert (got[0] == got[1]).all() and not (got[0] == got[2]).all()


def test_documents_without_a_date_keep_their_place_in_date_order():
    dates = [300.0, None, 100.0, 200.0, None]
    # the second goes with the first (300), the last with the fourth (200)
    assert date_order(dates).tolist() == [2, 3, 4, 0, 1]


def test_the_run_time_is_source_date_epoch_when_set(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert run_time() == 1700000000
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "not a number")
    assert run_time() > 1700000000


def test_document_entries_give_a_dateless_document_the_run_time():
    datas = [MESSAGE, b"Subject: no date, no id\n\nhello\n"]
    batch = Analyzer().analyze(datas, ["mail", "mail"])
    found, message_ids, when = document_entries(batch, datas, now=1234)
    assert found.shape == (2, 2)
    assert message_ids.tolist() == [message_id_hash("abc.123@mail.example.org"), 0]
    assert when.tolist() == [1029835283, 1234]
    assert message_id_hash(None) == 0 and message_id_hash("x") != message_id_hash("y")
