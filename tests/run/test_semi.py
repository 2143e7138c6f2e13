"""`run/semi.py`: semi-supervised EM (`train --unlabeled`) and clustering
(`nbcli cluster`) as library calls: what they refuse in one line, and the
models they make."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.cli.options import in_flag_terms
from nbcli.errors import NbcliError
from nbcli.run import semi
from nbcli.text.analyzer import AnalyzerOptions
from nbcli.text.sources import Document

from conftest import make_docs


def docs_of(texts, labels=None):
    return [
        Document(str(i), None if labels is None else labels[i], text.encode(), "text") for i, text in enumerate(texts)
    ]


def test_em_refuses_an_event_model_without_a_mixture():
    # the library names the parameters; the command line their flags (tests/cli/test_cli_cluster.py too)
    with pytest.raises(
        NbcliError, match="unlabeled works with kind='multinomial' or bernoulli, not complement"
    ) as info:
        semi.train_em([], [], AnalyzerOptions(), "complement", None, 0.1, 5, 1e-4)
    assert "--" not in str(info.value)
    assert str(in_flag_terms(info.value)) == (
        "--unlabeled works with --model multinomial or bernoulli, not complement; "
        "add --model multinomial (the mail default, complement, has no mixture EM)"
    )


def test_em_needs_labelled_documents_of_two_classes():
    texts, _ = make_docs(20, seed=1, classes=["a", "b"])
    labelled = docs_of(texts[:10], ["a"] * 10)
    with pytest.raises(NbcliError, match=r"the corpus has only one class \(a\)"):
        semi.train_em(labelled, docs_of(texts[10:]), AnalyzerOptions(), "multinomial", None, 0.1, 5, 1e-4)


def test_em_skips_unlabelled_copies_of_labelled_documents_and_records_the_run():
    texts, labels = make_docs(80, seed=4, classes=["a", "b"])
    labelled = docs_of(texts[:20], labels[:20])
    unlabelled = docs_of(texts[:5] + texts[20:])  # five copies of labelled documents
    model, fit = semi.train_em(labelled, unlabelled, AnalyzerOptions(), "multinomial", None, 0.5, 10, 1e-6)
    em = model.meta["em"]
    assert em["unlabelled_skipped_as_labelled"] == 5 and em["unlabelled_documents"] == 60
    assert em["iterations"] == fit.iterations >= 1 and model.classes == ["a", "b"]
    assert np.all(np.diff(em["objective"]) >= -1e-6)  # EM never lowers its objective


def test_clusters_are_refused_for_identical_documents_and_too_many_clusters():
    same = docs_of(["one and the same text"] * 6)
    with pytest.raises(NbcliError, match="the 6 documents are all the same: nothing to cluster"):
        semi.cluster_docs(same, AnalyzerOptions(), "multinomial", 2, 1.0, 1, 0)
    three = docs_of(["apples and pears", "apples and pears", "ships and sails", "trains and rails"])
    with pytest.raises(NbcliError, match=r"^k 4: give 2 to 3 clusters \(4 documents, 3 distinct") as info:
        semi.cluster_docs(three, AnalyzerOptions(), "multinomial", 4, 1.0, 1, 0, min_df=1, max_df=1.0)
    assert str(in_flag_terms(info.value)).startswith("-k 4: give 2 to 3 clusters (4 documents, 3 distinct")


def test_the_refusals_name_the_parameters_and_the_command_line_their_flags(monkeypatch):
    with pytest.raises(NbcliError, match="^kind complement: clusters are multinomial or bernoulli mixtures$") as info:
        semi.cluster_docs(docs_of(["a b", "c d"]), AnalyzerOptions(), "complement", 2, 1.0, 1, 0)
    assert str(in_flag_terms(info.value)) == "--model complement: clusters are multinomial or bernoulli mixtures"
    monkeypatch.setattr(semi, "available_memory", lambda: 2**20)
    with pytest.raises(NbcliError, match=r"^k 8: 8 clusters of 100 documents .*; give a smaller k \(at most") as info:
        semi.check_cluster_memory("multinomial", 8, 100, 10**6)
    said = str(in_flag_terms(info.value))
    assert said.startswith("-k 8: 8 clusters of 100 documents") and "; give a smaller -k (at most about" in said


def test_clustering_makes_a_model_of_named_clusters():
    texts = [f"alpha beta gamma {i % 3}" for i in range(10)] + [f"delta epsilon zeta {i % 3}" for i in range(10)]
    model, fit, table = semi.cluster_docs(docs_of(texts), AnalyzerOptions(), "multinomial", 2, 1.0, 3, 7)
    assert model.classes == ["cluster1", "cluster2"] and table is None
    assert model.meta["clusters"]["k"] == 2 and model.meta["n_documents"] == 20
    assigned = np.argmax(model.score([t.encode() for t in texts], ["text"] * 20), axis=1)
    assert len(set(assigned[:10])) == 1 and len(set(assigned[10:])) == 1 and assigned[0] != assigned[10]


def test_digests_among_others():
    these = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.uint64)
    those = np.array([[3, 4], [2, 1]], dtype=np.uint64)
    assert semi._among(these, those).tolist() == [False, True, False]
