"""Clustering documents (nbcli.nb.clusters): planted topics recovered, no
empty cluster for any seed and k, reproducible by seed, the tempered
objective never decreasing, k chosen by held-out likelihood, and the
spherical k-means start checked against scikit-learn's k-means on unit
vectors."""

import numpy as np
import pytest
import scipy.sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score
from test_em import _token_form, planted

from nbcli.errors import NbcliError
from nbcli.nb import clusters, em


def test_clustering_recovers_planted_clusters_reproducibly():
    X, labels = planted()
    fit = clusters.cluster(scipy.sparse.csr_matrix(X), 3, seed=0)
    found = fit.mixture.class_log_proba(X).argmax(axis=1)
    assert adjusted_rand_score(labels, found) >= 0.9
    np.testing.assert_array_equal(found, fit.assignments)
    again = clusters.cluster(_token_form(X), 3, seed=0)
    assert again.objective == fit.objective
    np.testing.assert_array_equal(again.mixture.word_count, fit.mixture.word_count)
    np.testing.assert_array_equal(fit.expected_count, fit.mixture.word_count)
    assert not fit.labelled_count.any() and fit.expected_docs.sum() == pytest.approx(len(X), abs=1e-6)
    one = [clusters.cluster(X, 3, restarts=1, seed=s, max_iter=3).objective for s in (0, 1)]
    assert one[0] != one[1]  # another seed, other starts


def test_bernoulli_clustering_recovers_planted_clusters():
    X, labels = planted(length=60, overlap=0.4)
    fit = clusters.cluster(scipy.sparse.csr_matrix(X), 3, event_model="bernoulli", seed=0)
    assert adjusted_rand_score(labels, fit.mixture.class_log_proba(X).argmax(axis=1)) >= 0.9


def test_the_bernoulli_default_keeps_every_cluster_where_alpha_one_empties_them():
    """With alpha 1 a Bernoulli cluster of few documents smooths every absent term towards 1 / its size, and a
    vocabulary of absent terms outvotes a document's present ones: EM drains the small clusters (every
    document in one cluster on 20 Newsgroups). The clustering default, 0.01, keeps them."""
    X, labels = planted(n_per=60, k=4, n_terms=400, length=40, overlap=0.5, seed=9)
    fit = clusters.cluster(X, 4, event_model="bernoulli", seed=0)
    assert fit.mixture.alpha == clusters.DEFAULT_ALPHA["bernoulli"]
    assert np.bincount(fit.assignments, minlength=4).min() >= 30 and fit.pinned == 0
    assert adjusted_rand_score(labels, fit.assignments) >= 0.9


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 10**6),
    st.integers(2, 12),
    st.sampled_from(em.EVENT_MODELS),
    st.sampled_from([1, 3]),
)
def test_no_clustering_has_an_empty_cluster(seed, k, event, n_topics):
    """Any seed, any k up to the distinct documents, one topic or several: every cluster is some document's
    most responsible cluster, and has expected documents, so the model classifies into every cluster."""
    X, _ = planted(n_per=8, k=n_topics, n_terms=30, length=6, seed=seed % 1000)
    k = min(k, clusters.distinct_rows(em.prepare(X, "multinomial")))
    fit = clusters.cluster(X, k, event_model=event, restarts=2, seed=seed, max_iter=30)
    assert np.bincount(fit.assignments, minlength=k).min() >= 1
    assert (fit.expected_docs > 0.5).all(), fit.expected_docs
    assert fit.pinned <= k
    J = np.array(fit.objective)
    assert (np.diff(J) >= -1e-9 * np.abs(J[1:])).all(), J  # the tempered objective never decreases


def test_an_emptied_cluster_is_reseeded_with_a_pinned_document_reproducibly():
    """Sixteen clusters of 60 documents of three topics: EM merges extra clusters away; each is re-seeded with
    the document its cluster explains worst and holds it, and the same seed gives the same re-seeding."""
    X, _ = planted(n_per=20, k=3, seed=3)
    fit = clusters.cluster(X, 16, restarts=3, seed=5)
    sizes = np.bincount(fit.assignments, minlength=16)
    assert sizes.min() >= 1 and 1 <= fit.pinned <= 16
    again = clusters.cluster(X, 16, restarts=3, seed=5)
    np.testing.assert_array_equal(again.assignments, fit.assignments)
    assert again.objective == fit.objective and again.pinned == fit.pinned


@pytest.mark.parametrize("e_tokens", [2.0, 4.0])
def test_the_tempered_objective_never_decreases_in_a_clustering(e_tokens):
    """Both stages: tempered EM from the k-means start (J_beta, seen through `log`), then plain EM (the fit's J)."""
    X, _ = planted(n_per=50, length=80, seed=12)
    seen = []
    fit = clusters.cluster(X, 3, restarts=1, e_tokens=e_tokens, max_iter=40, tol=0.0, log=lambda i, J: seen.append(J))
    J = np.array(fit.objective)
    assert len(J) > 3 and (np.diff(J) >= -1e-9 * np.abs(J[1:])).all(), J
    assert fit.mixture.e_tokens == 0.0  # the model is plain EM's
    tempered = np.array(seen[: len(seen) - (len(J) - 1)])
    assert len(tempered) > 3 and (np.diff(tempered) >= -1e-9 * np.abs(tempered[1:])).all(), tempered


def test_spherical_kmeans_agrees_with_kmeans_on_unit_vectors():
    """On unit vectors squared distance is 2 - 2 cos, so k-means' optimum is spherical k-means' up to the
    centres' lengths: on well-separated topics both find the same partition."""
    from sklearn.cluster import KMeans

    X, labels = planted(n_per=40, overlap=0.3, seed=2)
    Z = clusters.unit_tfidf(X)
    np.testing.assert_allclose(scipy.sparse.linalg.norm(Z, axis=1), 1.0)
    ours = clusters.spherical_kmeans(Z, 3, np.random.default_rng(0))
    theirs = KMeans(3, n_init=10, random_state=0).fit_predict(Z.toarray())
    assert adjusted_rand_score(theirs, ours) == 1.0 and adjusted_rand_score(labels, ours) >= 0.95


def test_unit_tfidf_is_scikit_learns():
    from sklearn.feature_extraction.text import TfidfTransformer

    X, _ = planted(n_per=10, seed=4)
    want = TfidfTransformer(smooth_idf=True, norm="l2").fit_transform(X).toarray()
    np.testing.assert_allclose(clusters.unit_tfidf(X).toarray(), want, rtol=1e-12, atol=1e-15)


def test_kmeanspp_seeds_are_distinct_documents():
    X, _ = planted(n_per=5, seed=6)
    Z = clusters.unit_tfidf(X)
    for seed in range(20):
        seeds = clusters.kmeanspp(Z, 15, np.random.default_rng(seed))
        assert len(set(seeds)) == 15


def test_choose_k_picks_the_planted_k_by_heldout_likelihood():
    X, _ = planted()
    k, rows = clusters.choose_k(scipy.sparse.csr_matrix(X), range(1, 7), restarts=3)
    assert k == 3, rows
    assert [r["k"] for r in rows] == list(range(1, 7))
    assert all(set(r) == {"k", "heldout_log_likelihood", "standard_error"} for r in rows)
    ll = [r["heldout_log_likelihood"] for r in rows]
    assert ll[0] < ll[1] < ll[2]  # each real topic found raises the held-out likelihood
    best = max(rows, key=lambda r: r["heldout_log_likelihood"])
    assert best["standard_error"] == 0.0 and all(r["standard_error"] > 0 for r in rows if r is not best)


def test_one_standard_error_takes_the_smallest_k_within_the_noise_of_the_best():
    """By hand: k = 3 is best (-32); k = 2 falls 1.0 short, and its
    per-document shortfalls (0, 1, 0, 0) have sd 0.5, so a standard error
    of 0.5 x sqrt(4) = 1.0: within it, k = 2 is chosen; k = 1 falls 8 short
    with a standard error of 0."""
    k1, k3 = np.full(4, -10.0), np.full(4, -8.0)
    k, errors = clusters.one_standard_error([1, 2, 3], [k1, np.array([-8.0, -9.0, -8.0, -8.0]), k3])
    assert k == 2 and errors == pytest.approx([0.0, 1.0, 0.0])
    # shortfalls (0.5, 1, 0.5, 0.5): 2.5 short against a standard error of 0.25 x 2 = 0.5: the best stays
    k, errors = clusters.one_standard_error([1, 2, 3], [k1, np.array([-8.5, -9.0, -8.5, -8.5]), k3])
    assert k == 3 and errors == pytest.approx([0.0, 0.5, 0.0])
    # the best is the smallest of equal totals
    assert clusters.one_standard_error([2, 3], [k3, k3.copy()])[0] == 2


def test_bad_requests_are_refused():
    X, _ = planted(n_per=2, seed=1)
    with pytest.raises(NbcliError, match="7 clusters of 6 documents"):
        clusters.cluster(X, 7)
    with pytest.raises(NbcliError, match="no documents"):
        clusters.cluster(X[:0], 2)
    with pytest.raises(NbcliError, match="at least one restart"):
        clusters.cluster(X, 2, restarts=0)
