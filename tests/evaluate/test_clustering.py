"""evaluate.clustering: ARI and NMI against scikit-learn (the oracle), a
hand-computed example, the edge cases, purity and the report."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from nbcli.evaluate.clustering import (
    adjusted_rand_index,
    cells,
    clustering_report,
    dense,
    normalized_mutual_info,
    purity,
)


def _purity(labels, clusters):
    """Purity the slow way: each cluster's majority label, by a loop."""
    total = 0
    for c in set(clusters):
        members = [lab for lab, k in zip(labels, clusters) if k == c]
        total += max(members.count(lab) for lab in set(members))
    return total / len(labels)


partitions = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 6), min_size=n, max_size=n),
        st.lists(st.integers(0, 9), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None)
@given(partitions)
def test_random_partitions_agree_with_scikit_learn(pair):
    labels, clusters = [f"l{x}" for x in pair[0]], [f"cluster{x}" for x in pair[1]]
    assert adjusted_rand_index(labels, clusters) == pytest.approx(skm.adjusted_rand_score(labels, clusters), abs=1e-12)
    assert normalized_mutual_info(labels, clusters) == pytest.approx(
        skm.normalized_mutual_info_score(labels, clusters), abs=1e-12
    )
    assert purity(labels, clusters) == pytest.approx(_purity(labels, clusters))


@pytest.mark.parametrize("seed", range(5))
def test_large_seeded_partitions_agree_with_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    n = 20_000 + 10_000 * seed
    labels = rng.integers(0, 5, n)
    clusters = np.where(rng.random(n) < 0.7, labels, rng.integers(0, 8, n))  # related, not equal
    assert adjusted_rand_index(labels, clusters) == pytest.approx(skm.adjusted_rand_score(labels, clusters), rel=1e-12)
    assert normalized_mutual_info(labels, clusters) == pytest.approx(
        skm.normalized_mutual_info_score(labels, clusters), rel=1e-12
    )
    assert 0.2 < adjusted_rand_index(labels, clusters) < 0.9


def test_beyond_int64_pair_products():
    """The pair counts' products pass 2**63 at some 50,000 documents."""
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 3, 120_000)
    clusters = rng.integers(0, 3, 120_000)
    assert adjusted_rand_index(labels, clusters) == pytest.approx(skm.adjusted_rand_score(labels, clusters), abs=1e-12)


def test_hand_computed_example():
    """a a a b b b in clusters 1 1 2 2 3 3: pairs together in both 2 (of
    15), in the labels 6, in the clusters 3, so expected 6·3/15 = 1.2, max
    (6 + 3)/2 = 4.5, ARI (2 − 1.2)/(4.5 − 1.2) = 8/33; I = (2/3) ln 2,
    H(L) = ln 2, H(C) = ln 3, NMI = (2/3) ln 2 / ((ln 2 + ln 3)/2);
    purity (2 + 1 + 2)/6."""
    labels, clusters = list("aaabbb"), ["1", "1", "2", "2", "3", "3"]
    assert adjusted_rand_index(labels, clusters) == pytest.approx(8 / 33)
    assert normalized_mutual_info(labels, clusters) == pytest.approx((4 / 3) * np.log(2) / np.log(6))
    assert purity(labels, clusters) == pytest.approx(5 / 6)
    assert dense(cells(labels, clusters)).tolist() == [[2, 1, 0], [0, 1, 2]]


@pytest.mark.parametrize(
    "labels, clusters, ari, nmi, pur",
    [
        (list("aabbcc"), list("xxxxxx"), 0.0, 0.0, 2 / 6),  # one cluster
        (list("aabbcc"), list("uvwxyz"), 0.0, None, 1.0),  # all singletons
        (list("aabbcc"), list("zzyyxx"), 1.0, 1.0, 1.0),  # identical up to names
        (list("aaaa"), list("xxxx"), 1.0, 1.0, 1.0),  # one label, one cluster
        (list("abcd"), list("wxyz"), 1.0, 1.0, 1.0),  # all singletons on both sides
        (list("abcd"), list("xxxx"), 0.0, 0.0, 0.25),  # singleton labels, one cluster
        (list("aaaa"), list("wxyz"), 0.0, 0.0, 1.0),  # one label, singleton clusters
        (["a"], ["x"], 1.0, 1.0, 1.0),  # one document
        (list("aabb"), list("xyxy"), -0.5, 0.0, 0.5),  # worse than chance
    ],
)
def test_edge_cases_as_scikit_learn_defines_them(labels, clusters, ari, nmi, pur):
    assert adjusted_rand_index(labels, clusters) == pytest.approx(ari, abs=1e-15)
    assert adjusted_rand_index(labels, clusters) == pytest.approx(skm.adjusted_rand_score(labels, clusters), abs=1e-15)
    sk_nmi = skm.normalized_mutual_info_score(labels, clusters)
    assert normalized_mutual_info(labels, clusters) == pytest.approx(sk_nmi if nmi is None else nmi, abs=1e-15)
    assert normalized_mutual_info(labels, clusters) == pytest.approx(sk_nmi, abs=1e-15)
    assert purity(labels, clusters) == pytest.approx(pur)


def test_all_singletons_nmi_is_two_h_over_h_plus_log_n():
    labels = list("aabbcc")
    h = np.log(3)
    assert normalized_mutual_info(labels, list("uvwxyz")) == pytest.approx(2 * h / (h + np.log(6)))


def test_symmetry_of_ari_and_nmi_not_purity():
    labels, clusters = list("aaabbbccd"), list("xxyyyzzzz")
    assert adjusted_rand_index(labels, clusters) == pytest.approx(adjusted_rand_index(clusters, labels))
    assert normalized_mutual_info(labels, clusters) == pytest.approx(normalized_mutual_info(clusters, labels))
    assert purity(labels, clusters) != purity(clusters, labels)


def test_no_documents_and_lengths_that_differ_are_errors():
    with pytest.raises(ValueError, match="no documents"):
        adjusted_rand_index([], [])
    with pytest.raises(ValueError, match="3 labels for 2"):
        purity(["a", "b", "c"], ["x", "y"])


def test_cells_hold_no_dense_table():
    """All singletons: n cells, not an n × n table."""
    n = 50_000
    ids = np.arange(n)
    table = cells(ids, ids)
    assert len(table.counts) == n and table.counts.max() == 1
    assert adjusted_rand_index(ids, ids) == 1.0 and purity(ids, ids) == 1.0


def test_report_orders_columns_as_the_model_and_names_empty_clusters():
    labels = ["sport", "sport", "space", "space", "space", "food"]
    clusters = ["cluster3", "cluster3", "cluster1", "cluster1", "cluster3", "cluster10"]
    report = clustering_report(labels, clusters, ["cluster1", "cluster2", "cluster3", "cluster10"])
    assert report["contingency"] == {
        "labels": ["food", "space", "sport"],
        "clusters": ["cluster1", "cluster3", "cluster10"],
        "matrix": [[0, 0, 1], [2, 1, 0], [0, 2, 0]],
    }
    assert report["empty_clusters"] == ["cluster2"]
    assert (report["documents"], report["labels"], report["clusters"]) == (6, 3, 3)
    assert report["adjusted_rand_index"] == pytest.approx(skm.adjusted_rand_score(labels, clusters))
    assert report["normalized_mutual_info"] == pytest.approx(skm.normalized_mutual_info_score(labels, clusters))
    assert report["purity"] == pytest.approx(5 / 6)
    assert report["purity"] == purity(labels, clusters)
