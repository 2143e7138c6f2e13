"""The counting pass (fit/count_table.py): per-class counts of a growing
vocabulary, the same however the corpus is split among tables."""

from __future__ import annotations

import numpy as np

from nbcli.fit.count_table import CountTable, count_corpus
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import Document

DOCS = [
    Document("d0", "ham", "apple apple bread", "text"),
    Document("d1", "spam", "grape honey", "text"),
    Document("d2", "ham", "bread cider", "text"),
    Document("d3", "spam", "grape grape grape", "text"),
]


def counted(docs, **kw):
    table = CountTable(**kw)
    analyzer = Analyzer(AnalyzerOptions())
    datas = [d.data for d in docs]
    table.add(analyzer.analyze(datas, [d.kind for d in docs]), [d.label for d in docs], datas)
    return table


def terms(vocab) -> list[str]:
    return vocab.terms(np.arange(len(vocab)))


def test_the_table_counts_terms_and_documents_per_class():
    classes, class_count, vocab, tf, df = counted(DOCS, doc_freq=True).finish()
    assert classes == ["ham", "spam"] and class_count.tolist() == [2, 2]
    words = terms(vocab)
    assert sorted(words) == ["apple", "bread", "cider", "grape", "honey"]
    assert tf[:, words.index("apple")].tolist() == [2, 0]
    assert tf[:, words.index("grape")].tolist() == [0, 4]
    assert df[:, words.index("grape")].tolist() == [0, 2]  # two spam documents contain it
    assert df[:, words.index("bread")].tolist() == [2, 0]


def test_tables_of_parts_merged_are_the_table_of_the_whole():
    whole = counted(DOCS, doc_freq=True).finish()
    left = counted(DOCS[2:], doc_freq=True)  # another first-seen order of terms and classes
    left.merge(counted(DOCS[:2], doc_freq=True).state())
    merged = left.finish()
    assert merged[0] == whole[0] and np.array_equal(merged[1], whole[1])
    assert np.array_equal(merged[2].hashes, whole[2].hashes)
    assert np.array_equal(merged[3], whole[3]) and np.array_equal(merged[4], whole[4])


def test_the_record_entries_are_one_per_document_in_its_class_column():
    table = counted(DOCS, now=86400 * 100)
    table.finish()
    digest, labels, copies, message_id, when = table.record_entries
    assert len(digest) == 4 and labels.tolist() == [0, 1, 0, 1] and copies.tolist() == [1, 1, 1, 1]
    assert when.tolist() == [86400 * 100] * 4  # documents without a date: the run's time
    assert (table.last_seen == 100).all()  # every term last seen that day


def test_a_table_without_a_record_or_sample_keeps_none():
    table = counted(DOCS, record=False)
    table.finish()
    assert table.record_entries is None and table.last_seen is None
    table = CountTable()
    assert table.heldout is None and table.state()["sample"] is None


def test_count_corpus_reads_every_batch_and_reports_progress():
    seen = []
    table = count_corpus(DOCS, Analyzer(AnalyzerOptions()), False, progress=seen.append)
    classes, class_count, *_ = table.finish()
    assert sum(len(batch) for batch in seen) == 4
    assert class_count.tolist() == [2, 2]
