"""Held-out scores for calibration: the counting pass's sample, and each
group's model as the corpus minus the group (see nbcli/fit/heldout.py)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from test_learning import KINDS, docs_of

from nbcli.fit.count_table import count_corpus
from nbcli.fit.exact_sums import FIT_SCALE
from nbcli.fit.heldout import heldout_problem, heldout_scores
from nbcli.fit.training import fit_part, train
from nbcli.fit.training_options import training_options
from nbcli.run import pipeline
from nbcli.text.analyzer import Analyzer
from nbcli.text.identity import digests
from nbcli.text.sources import Document, labeled_corpus

from conftest import make_docs

MAIL = "sample_corpora/mail/train"


def table_of(docs, fields, sample=2500, jobs=1):
    analyzer_options, options = training_options(**fields)
    analyzer = Analyzer(analyzer_options)
    if jobs == 1:
        table = count_corpus(docs, analyzer, options.needs_doc_freq, None, options.first_pass_transform, sample)
    else:
        table = pipeline.count_corpus(
            docs, analyzer, options.needs_doc_freq, None, jobs, options.first_pass_transform, sample
        )
    finished = table.finish()
    return table, finished, analyzer_options, options


def same_counts(a, b) -> bool:
    return all(np.array_equal(getattr(a, name), getattr(b, name)) for name in ("indptr", "indices", "data"))


def keys_of(analyzer, docs) -> np.ndarray:
    batch = analyzer.analyze([d.data for d in docs], [d.kind for d in docs])
    return digests(batch.hashes, batch.doc_ptr)[:, 0]


def test_the_sample_is_the_smallest_digests_per_class_whatever_the_order():
    texts, labels = make_docs(120, seed=3, classes=["a", "b"])
    docs = docs_of(list(zip(texts, labels)))
    tables = [table_of(order, {}, sample=10)[0] for order in (docs, docs[::-1], docs[1::2] + docs[::2])]
    analyzer = Analyzer(training_options()[0])
    keys = keys_of(analyzer, docs)
    for c, name in enumerate(["a", "b"]):
        mine = np.sort(keys[np.array(labels) == name])[:10]
        for table in tables:
            held = table.heldout
            assert np.array_equal(np.sort(held.keys[held.cls == c]), mine)
    first = tables[0].heldout
    for table in tables[1:]:
        assert np.array_equal(table.heldout.keys, first.keys)
        assert same_counts(table.heldout, first)


def test_copies_of_a_document_are_sampled_together_and_share_a_group():
    pairs = [(f"word{i} other{i % 3} thing", "a" if i % 2 else "b") for i in range(40)]
    pairs += [("word1 other1 thing", "a")] * 3  # three more copies of document 1
    table = table_of(docs_of(pairs), {}, sample=8)[0]
    held = table.heldout
    keys, counts = np.unique(held.keys, return_counts=True)
    groups = held.groups(5)
    for key in keys[counts > 1]:
        assert len(set(groups[held.keys == key].tolist())) == 1


def test_workers_sample_what_one_process_samples(tmp_path):
    opts = pytest.importorskip("nbcli.text.sources").ReadOptions()
    one = table_of(labeled_corpus([MAIL], [], opts), {}, sample=50)[0].heldout
    two = table_of(labeled_corpus([MAIL], [], opts), {}, sample=50, jobs=2)[0].heldout
    assert len(one) == 100
    assert np.array_equal(one.keys, two.keys) and np.array_equal(one.cls, two.cls)
    assert same_counts(one, two)


@pytest.mark.parametrize("kind", ["multinomial", "bernoulli", "complement", "complement-tflog-norm", "mail-model"])
def test_each_groups_scores_are_those_of_a_model_trained_without_the_group(kind):
    """The corpus minus group g, trained by `nbcli train`'s own code, scores
    group g's documents exactly as `heldout_scores` does."""
    if kind == "mail-model":
        opts = __import__("nbcli.text.sources", fromlist=["ReadOptions"]).ReadOptions()
        docs = list(labeled_corpus([MAIL], [], opts))[::4]
        fields = {}
    else:
        texts, labels = make_docs(90, seed=5, classes=["a", "b", "c"])
        docs = docs_of(list(zip(texts, labels)))
        fields = {k: v for k, v in KINDS[kind].items()}
    table, (classes, class_count, vocab, tf, df), analyzer_options, options = table_of(docs, fields)
    held = table.heldout
    assert len(held) == len(docs)  # a small corpus is sampled whole: plain K-fold cross-validation
    fit_one = functools.partial(fit_part, analyzer_options=analyzer_options, options=options)
    scores, truth = heldout_scores(
        held, classes, class_count, vocab, tf, df, table.fit, table.mail_docs, fit_one, table.transform, FIT_SCALE
    )
    keys = keys_of(Analyzer(analyzer_options), docs)
    group_of_key = dict(zip(held.keys.tolist(), held.groups(5).tolist()))
    groups = np.array([group_of_key[k] for k in keys.tolist()])
    assert sorted(set(groups.tolist())) == [0, 1, 2, 3, 4]
    row_of_key = {k: i for i, k in enumerate(held.keys.tolist())}
    for g in range(5):
        inside = [d for d, gg in zip(docs, groups) if gg == g]
        rest = [d for d, gg in zip(docs, groups) if gg != g]
        model = train(rest, analyzer_options, options)
        mine = model.score([d.data for d in inside], [d.kind for d in inside])
        rows = [row_of_key[k] for k in keys_of(Analyzer(analyzer_options), inside).tolist()]
        assert np.allclose(scores[rows], mine, rtol=1e-9, atol=1e-9)
        assert [classes[c] for c in truth[rows]] == [d.label for d in inside]


def test_a_class_with_one_document_cannot_be_cross_validated():
    docs = docs_of([("apple bread", "a"), ("apple cider", "a"), ("zebra", "b")])
    table, (classes, *_), _, _ = table_of(docs, {})
    assert heldout_problem(table.heldout, classes) == "class b has only one distinct document"
    copies = docs_of([("apple bread", "a"), ("apple cider", "a"), ("zebra", "b"), ("zebra", "b")])
    table, (classes, *_), _, _ = table_of(copies, {})
    assert heldout_problem(table.heldout, classes) == "class b has only one distinct document"


def test_documents_of_the_table_are_counted_whole_in_the_sample():
    docs = [Document("d0", "a", "apple apple bread", "text"), Document("d1", "b", "cider", "text")]
    table, (_, _, vocab, _, _), _, _ = table_of(docs, {})
    held = table.heldout
    _, _, data = held.rows(np.array([held.cls.tolist().index(0)]))
    assert sorted(data.tolist()) == [1.0, 2.0]
    assert len(vocab) == 3
