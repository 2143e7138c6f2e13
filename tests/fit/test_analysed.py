"""Documents analysed for learning (fit/analysed.py): each document's
digest and distinct terms, the same in one piece or in batches."""

from __future__ import annotations

import numpy as np

from nbcli.fit.analysed import analyse_batch, analyse_for_learning, join
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import Document

ANALYZER = Analyzer(AnalyzerOptions())
MAIL = b"From: a@example.com\nMessage-ID: <1@example.com>\nDate: Mon, 2 Jan 2006 10:00:00 +0000\n\nhello there"


def docs_of(texts, label="ham"):
    return [Document(f"d{i}", label, text, "text") for i, text in enumerate(texts)]


def terms_of(analysed, d) -> dict:
    start, end = analysed.doc_ptr[d], analysed.doc_ptr[d + 1]
    return {
        analysed.texts[h]: int(c)
        for h, c in zip(analysed.pair_hash[start:end].tolist(), analysed.pair_count[start:end])
    }


def test_each_document_has_its_distinct_terms_counted():
    analysed = analyse_for_learning(ANALYZER, docs_of(["apple apple bread", "bread cider bread"]))
    assert len(analysed) == 2 and analysed.labels == ["ham", "ham"] and analysed.ids == ["d0", "d1"]
    assert terms_of(analysed, 0) == {"apple": 2, "bread": 1}
    assert terms_of(analysed, 1) == {"bread": 2, "cider": 1}


def test_the_same_document_twice_has_one_digest():
    analysed = analyse_for_learning(ANALYZER, docs_of(["apple bread", "apple bread", "apple cider"]))
    assert np.array_equal(analysed.digest[0], analysed.digest[1])
    assert not np.array_equal(analysed.digest[0], analysed.digest[2])


def test_a_label_given_overrides_the_documents_own():
    analysed = analyse_for_learning(ANALYZER, docs_of(["apple", "bread"], label=None), label="spam")
    assert analysed.labels == ["spam", "spam"]


def test_batches_joined_are_the_analysis_of_all():
    texts = ["apple bread", "cider", "dough eagle eagle", "fjord"]
    whole = analyse_for_learning(ANALYZER, docs_of(texts))
    parts = [
        analyse_batch(ANALYZER, [f"d{i}" for i in r], [texts[i] for i in r], ["text"] * len(r), ["ham"] * len(r))
        for r in (range(0, 1), range(1, 4))
    ]
    joined = join(parts)
    for name in ("digest", "doc_ptr", "pair_hash", "pair_count", "mail"):
        assert np.array_equal(getattr(joined, name), getattr(whole, name)), name
    assert joined.texts == whole.texts and len(join([])) == 0


def test_mail_is_told_from_text_and_keeps_its_message_id_and_date():
    analysed = analyse_for_learning(
        ANALYZER, [Document("m", "ham", MAIL, "auto"), Document("t", "ham", "hi there", "text")]
    )
    assert analysed.mail.tolist() == [True, False]
    assert analysed.message_id[0] != 0 and analysed.message_id[1] == 0
    assert analysed.when[0] == 1136196000  # the Date header, in POSIX seconds


def test_a_terms_text_is_made_when_asked_for_and_a_worker_gets_them_all():
    import pickle

    made = []
    analysed = analyse_batch(ANALYZER, ["d0", "d1"], ["apple bread bread", "cider"], ["text"] * 2, ["ham"] * 2)
    strings = analysed.texts._strings
    analysed.texts._strings = lambda idx: made.append(len(idx)) or strings(idx)
    h = sorted(analysed.texts)
    assert made == [] and len(analysed.texts) == 3
    assert analysed.texts.of(h[:2]) == [analysed.texts[h[0]], analysed.texts[h[1]]] and made == [2]
    assert sorted(analysed.texts.values()) == ["apple", "bread", "cider"] and made == [2, 1]
    sent = pickle.loads(pickle.dumps(analysed))
    assert dict(sent.texts) == dict(analysed.texts)
    try:
        analysed.texts[12345]
    except KeyError:
        pass
    else:
        raise AssertionError("a hash not in the batch has no text")


def test_one_document_alone_is_analysed_as_it_is_in_a_batch():
    """A TELL analyses one message (one sort of its hashes); in a batch the
    same message gives the same terms, counts, texts and digest."""
    analyzer = Analyzer(AnalyzerOptions(ngrams=2))
    texts = ["b a b c a", "c c d", "a b c d e a b"]
    batch = analyse_for_learning(analyzer, docs_of(texts))
    for d, text in enumerate(texts):
        alone = analyse_batch(analyzer, ["x"], [text], ["text"], ["ham"], now=0)
        start, end = batch.doc_ptr[d], batch.doc_ptr[d + 1]
        assert np.array_equal(alone.pair_hash, batch.pair_hash[start:end])
        assert np.array_equal(alone.pair_count, batch.pair_count[start:end])
        assert np.array_equal(alone.digest[0], batch.digest[d])
        assert terms_of(alone, 0) == terms_of(batch, d)
        assert list(alone.texts) == sorted(alone.pair_hash.tolist())
