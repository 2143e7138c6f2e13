"""EM for Naive Bayes mixtures (nbcli.nb.em) against a hand-written dense reference,
its invariants (J never decreases, split-independent sums) and planted corpora."""

import numpy as np
import pytest
import scipy.sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbcli.errors import NbcliError
from nbcli.nb import clusters, em
from nbcli.text.vectorize import SparseCounts


def _token_form(dense: np.ndarray) -> SparseCounts:
    """`dense` counts as a SparseCounts of one entry per token (data None, duplicates)."""
    indptr, indices = [0], []
    for row in dense:
        for j, n in enumerate(row):
            indices += [j] * int(n)
        indptr.append(len(indices))
    return SparseCounts(np.array(indptr), np.array(indices, dtype=np.int64), None, dense.shape)


def planted(n_per=100, k=3, n_terms=60, length=30, overlap=0.6, seed=1):
    """k clusters of n_per documents; cluster c draws words from its own
    distribution, a mix of a shared one (weight `overlap`) and its own."""
    rng = np.random.default_rng(seed)
    shared = rng.dirichlet(np.ones(n_terms))
    own = [rng.dirichlet(np.full(n_terms, 0.2)) for _ in range(k)]
    rows, labels = [], []
    for c in range(k):
        p = overlap * shared + (1 - overlap) * own[c]
        for _ in range(n_per):
            rows.append(rng.multinomial(max(1, rng.poisson(length)), p))
            labels.append(c)
    order = rng.permutation(len(rows))
    return np.array(rows)[order], np.array(labels)[order]


# --- the dense reference: loops and the formulas of the module docstring ----------------------------------------


def ref_tables(XL, rL, XU, rU, weight, event, alpha, prior_alpha):
    if event == "bernoulli":
        XL, XU = (XL > 0).astype(float), (XU > 0).astype(float)
    M, V = rL.shape[1], XL.shape[1]
    N = np.zeros((M, V))
    W = np.zeros(M)
    for X, r, w in ((XL, rL, 1.0), (XU, rU, weight)):
        for d in range(X.shape[0]):
            for m in range(M):
                W[m] += w * r[d, m]
                for j in range(V):
                    N[m, j] += w * r[d, m] * X[d, j]
    theta = np.zeros((M, V))
    for m in range(M):
        for j in range(V):
            if event == "multinomial":
                theta[m, j] = (N[m, j] + alpha) / (N[m].sum() + alpha * V)
            else:
                theta[m, j] = (N[m, j] + alpha) / (W[m] + 2 * alpha)
    pi = np.array([(W[m] + prior_alpha) / (W.sum() + prior_alpha * M) for m in range(M)])
    return N, W, theta, pi


def ref_joint(X, theta, pi, event):
    out = np.zeros((X.shape[0], len(pi)))
    for d in range(X.shape[0]):
        for m in range(len(pi)):
            s = np.log(pi[m])
            for j in range(X.shape[1]):
                if event == "multinomial":
                    s += X[d, j] * np.log(theta[m, j])
                else:
                    s += np.log(theta[m, j]) if X[d, j] > 0 else np.log(1 - theta[m, j])
            out[d, m] = s
    return out


def ref_e_step(XL, yL, XU, theta, pi, comps, event, weight, alpha, prior_alpha):
    """Responsibilities (labelled restricted to their class's components) and J."""
    jl, ju = ref_joint(XL, theta, pi, event), ref_joint(XU, theta, pi, event)
    rL, rU = np.zeros_like(jl), np.zeros_like(ju)
    J = alpha * np.log(theta).sum() + prior_alpha * np.log(pi).sum()
    if event == "bernoulli":
        J += alpha * np.log(1 - theta).sum()
    for d in range(len(yL)):
        mine = comps == yL[d]
        total = np.log(np.exp(jl[d, mine]).sum())
        rL[d, mine] = np.exp(jl[d, mine] - total)
        J += total
    for d in range(XU.shape[0]):
        total = np.log(np.exp(ju[d]).sum())
        rU[d] = np.exp(ju[d] - total)
        J += weight * total
    return rL, rU, J


def _deal(yL, n_classes, K, seed):
    """The documented start: each class's labelled documents dealt at random to its K components."""
    start = yL * K
    rng = np.random.default_rng(seed)
    for c in range(n_classes):
        mine = np.flatnonzero(yL == c)
        start[rng.permutation(mine)] = c * K + np.arange(len(mine)) % K
    return start


@pytest.mark.parametrize("event", em.EVENT_MODELS)
@pytest.mark.parametrize("K", [1, 2])
def test_one_iteration_matches_the_dense_reference(event, K):
    rng = np.random.default_rng(7)
    V, C, weight, alpha, prior_alpha = 6, 2, 0.3, 0.5, 1.0
    XL = rng.integers(0, 4, size=(6, V))
    yL = np.array([0, 1, 0, 1, 0, 1])
    XU = rng.integers(0, 4, size=(5, V))
    comps = np.repeat(np.arange(C), K)
    M = C * K

    rL = np.zeros((6, M))
    rL[np.arange(6), _deal(yL, C, K, seed=3)] = 1.0
    _, _, theta0, pi0 = ref_tables(XL, rL, XU, np.zeros((5, M)), weight, event, alpha, prior_alpha)
    rL, rU, J0 = ref_e_step(XL, yL, XU, theta0, pi0, comps, event, weight, alpha, prior_alpha)
    N1, W1, theta1, pi1 = ref_tables(XL, rL, XU, rU, weight, event, alpha, prior_alpha)
    rL1, rU1, J1 = ref_e_step(XL, yL, XU, theta1, pi1, comps, event, weight, alpha, prior_alpha)

    fit = em.em(
        _token_form(XL), yL, scipy.sparse.csr_matrix(XU), C, event, alpha, prior_alpha, weight, K, max_iter=1, seed=3
    )
    mix = fit.mixture
    assert fit.iterations == 1
    np.testing.assert_array_equal(mix.components, comps)
    assert fit.objective == pytest.approx([J0, J1], rel=1e-9)
    np.testing.assert_allclose(mix.word_count, N1, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mix.doc_count, W1, rtol=1e-9)
    np.testing.assert_allclose(np.exp(mix.log_theta()), theta1, rtol=1e-9)
    np.testing.assert_allclose(np.exp(mix.log_weight), pi1, rtol=1e-9)
    np.testing.assert_allclose(em.e_step(mix, XL, yL), rL1, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(em.e_step(mix, XU), rU1, rtol=1e-9, atol=1e-12)
    # P(class | x): the class's components' posteriors summed
    by_class = np.stack([rU1[:, comps == c].sum(axis=1) for c in range(C)], axis=1)
    np.testing.assert_allclose(np.exp(mix.class_log_proba(XU)), by_class, rtol=1e-9)
    # the per-class parts
    B = XL if event == "multinomial" else (XL > 0).astype(np.int64)
    np.testing.assert_array_equal(fit.labelled_count, np.stack([B[yL == c].sum(axis=0) for c in range(C)]))
    np.testing.assert_array_equal(fit.labelled_docs, [3, 3])
    Bu = XU if event == "multinomial" else (XU > 0).astype(float)
    expected = weight * rU.T @ Bu
    np.testing.assert_allclose(fit.expected_count, [expected[comps == c].sum(axis=0) for c in range(C)], rtol=1e-9)
    np.testing.assert_allclose(fit.expected_docs, [weight * rU[:, comps == c].sum() for c in range(C)], rtol=1e-9)


@st.composite
def corpora(draw):
    n_terms = draw(st.integers(1, 8))
    n_docs = draw(st.integers(2, 14))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.poisson(draw(st.floats(0.2, 5.0)), size=(n_docs, n_terms))
    n_labelled = draw(st.integers(1, n_docs - 1))
    y = rng.integers(0, 2, size=n_labelled)
    return X[:n_labelled], y, X[n_labelled:], seed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpora(),
    st.floats(0.1, 1.0),
    st.sampled_from(em.EVENT_MODELS),
    st.integers(1, 2),
    st.floats(0.05, 2.0),
)
def test_the_objective_never_decreases(corpus, weight, event, K, alpha):
    XL, yL, XU, seed = corpus
    fit = em.em(
        scipy.sparse.csr_matrix(XL), yL, scipy.sparse.csr_matrix(XU), 2, event, alpha, 1.0, weight, K, 15, 0.0, seed
    )
    J = np.array(fit.objective)
    assert np.isfinite(J).all()
    assert (np.diff(J) >= -1e-9 * np.abs(J[1:])).all(), J


@pytest.mark.parametrize("event", em.EVENT_MODELS)
def test_weight_zero_gives_the_labelled_only_model(event):
    X, y = planted(n_per=10, seed=4)
    XL, XU = scipy.sparse.csr_matrix(X[:20]), scipy.sparse.csr_matrix(X[20:])
    yL = y[:20]
    fit = em.em(XL, yL, XU, 3, event, alpha=0.7, weight=0.0)
    assert (fit.iterations, fit.converged, len(fit.objective)) == (0, True, 1)
    B = X[:20] if event == "multinomial" else (X[:20] > 0).astype(np.int64)
    counts = np.stack([B[yL == c].sum(axis=0) for c in range(3)])
    docs = np.bincount(yL, minlength=3)
    np.testing.assert_array_equal(fit.labelled_count, counts)
    np.testing.assert_array_equal(fit.mixture.word_count, counts)
    np.testing.assert_array_equal(fit.mixture.doc_count, docs)
    assert not fit.expected_count.any() and not fit.expected_docs.any()
    if event == "multinomial":
        theta = (counts + 0.7) / (counts.sum(axis=1, keepdims=True) + 0.7 * X.shape[1])
    else:
        theta = (counts + 0.7) / (docs[:, None] + 1.4)
    np.testing.assert_allclose(np.exp(fit.mixture.log_theta()), theta, rtol=1e-12)
    np.testing.assert_allclose(np.exp(fit.mixture.log_weight), (docs + 1) / (docs.sum() + 3), rtol=1e-12)
    # so does a corpus without unlabelled documents
    none = em.em(XL, yL, XU[:0], 3, event, alpha=0.7, weight=0.5)
    np.testing.assert_array_equal(none.mixture.word_count, counts)


@pytest.mark.parametrize("event", em.EVENT_MODELS)
def test_sums_of_row_blocks_equal_the_one_block_sums_to_the_last_bit(event):
    X, _ = planted(n_per=50, seed=5)
    X = scipy.sparse.csr_matrix(X)
    mix = clusters.cluster(X, 3, event_model=event, restarts=1, max_iter=2).mixture
    resp, ll = em.posterior(mix, X)
    word, docs = em.m_step_sums(X, resp, event)
    for cuts in ([0, 150], [0, 1, 77, 100, 149, 150], [0, 50, 100, 150]):
        parts = [em.m_step_sums(X[a:b], em.e_step(mix, X[a:b]), event) for a, b in zip(cuts, cuts[1:])]
        for order in (parts, parts[::-1]):  # integer sums: any order
            np.testing.assert_array_equal(sum(p[0] for p in order), word)
            np.testing.assert_array_equal(sum(p[1] for p in order), docs)
        blocks_ll = np.concatenate([em.posterior(mix, X[a:b])[1] for a, b in zip(cuts, cuts[1:])])
        np.testing.assert_array_equal(blocks_ll, ll)
        assert em.objective(mix, ll[:0], blocks_ll[::-1], 1.0) == em.objective(mix, ll[:0], ll, 1.0)


def test_semi_supervised_em_beats_labelled_only_with_few_labels():
    X, y = planted(n_per=400, k=3, overlap=0.8, length=20, seed=11)
    rng = np.random.default_rng(0)
    labelled = np.concatenate([rng.choice(np.flatnonzero(y[:600] == c), 5, replace=False) for c in range(3)])
    unlabelled = np.setdiff1d(np.arange(600), labelled)[:500]
    test = np.arange(600, len(y))
    XS = scipy.sparse.csr_matrix(X)

    def accuracy(weight):
        fit = em.em(XS[labelled], y[labelled], XS[unlabelled], 3, weight=weight, max_iter=20)
        return float((fit.mixture.class_log_proba(XS[test]).argmax(axis=1) == y[test]).mean())

    alone, with_em = accuracy(0.0), accuracy(1.0)
    print(f"held-out accuracy: labelled-only {alone:.3f}, EM {with_em:.3f}")  # 0.647 and 0.820 when written
    assert with_em > alone + 0.05, f"EM {with_em:.3f} vs labelled-only {alone:.3f}"


@pytest.mark.filterwarnings("error")
def test_long_documents_and_bad_input():
    X = np.zeros((3, 4), dtype=np.int64)
    X[0, 0], X[1, 1], X[2, 2] = 10**4, 10**4, 10**4
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # underflow of exp to 0 is harmless
        fit = em.em(X[:2], [0, 1], X[2:], 2, weight=1.0)
        assert np.isfinite(fit.mixture.class_log_proba(X)).all()
        assert np.isfinite(clusters.cluster(X, 2, event_model="bernoulli").objective).all()
    with pytest.raises(NbcliError, match="whole term counts"):
        clusters.cluster(scipy.sparse.csr_matrix(np.array([[0.5, 1.0]])), 1)
    with pytest.raises(NbcliError, match="not 'complement'"):
        em.em(X[:2], [0, 1], X[2:], 2, event_model="complement")
    with pytest.raises(NbcliError, match="class index"):
        em.em(X[:2], [0, 2], X[2:], 2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpora(), st.sampled_from(em.EVENT_MODELS), st.integers(1, 2), st.sampled_from([0.5, 2.0, 4.0]))
def test_the_tempered_objective_never_decreases_from_the_tied_start(corpus, event, K, e_tokens):
    """J with the evidence cap (1 / beta_d) log sum_m exp(beta_d a_dm), from the tied start: coordinate ascent."""
    XL, yL, XU, seed = corpus
    XL = np.hstack([XL, np.zeros((XL.shape[0], 2), np.int64)])  # two terms no labelled document has
    XU = np.hstack([XU, np.ones((XU.shape[0], 2), np.int64)])
    fit = em.em(XL, yL, XU, 2, event, 0.5, 1.0, 1.0, K, 15, 0.0, seed, e_tokens=e_tokens)
    J = np.array(fit.objective)
    assert np.isfinite(J).all()
    assert (np.diff(J) >= -1e-9 * np.abs(J[1:])).all(), J


def test_the_evidence_cap_tempers_long_documents_only():
    X, y = planted(n_per=10, seed=4)
    mix = em.em(X[:20], y[:20], X[20:], 3, weight=1.0, max_iter=2).mixture
    a = mix.component_log_likelihood(X)
    length = X.sum(axis=1)
    capped = em.Mixture(**{**mix.__dict__, "e_tokens": 10.0})
    resp, ll = em.posterior(capped, X)
    beta = np.minimum(1.0, 10.0 / length)
    want = beta[:, None] * a
    want_ll = np.log(np.exp(want - want.max(1, keepdims=True)).sum(1)) + want.max(1)
    np.testing.assert_allclose(resp, np.exp(want - want_ll[:, None]), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ll, want_ll / beta, rtol=1e-12)
    short = np.flatnonzero(length <= 10)
    plain_resp, plain_ll = em.posterior(mix, X)
    np.testing.assert_array_equal(resp[short], plain_resp[short])  # beta = 1: the plain E step
    assert (resp.max(axis=1) <= plain_resp.max(axis=1) + 1e-12).all()  # softer, never harder


@pytest.mark.parametrize("event", em.EVENT_MODELS)
def test_the_start_gives_terms_no_labelled_document_has_no_say(event):
    """Class 0's labelled documents are long, class 1's short: smoothed over every term, a document of unseen
    terms would go to class 1 (alpha / (N_m + alpha V) is larger there); from the tied start a document's
    posterior is the labelled-only model's on the labelled terms (multinomial: the labelled prior for one of
    unseen terms only)."""
    XL = np.array([[20, 10, 0, 0, 0, 0], [15, 12, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 1, 0, 0, 0]])
    yL = np.array([0, 0, 1, 1])
    XU = np.array([[0, 0, 0, 0, 3, 2], [1, 0, 1, 0, 4, 4]])
    fit = em.em(XL, yL, XU, 2, event, alpha=1.0, prior_alpha=0.0, weight=1.0, max_iter=0)
    start = fit.mixture
    resp = em.e_step(start, XU)
    if event == "multinomial":  # (bernoulli: the absent labelled terms still speak)
        np.testing.assert_allclose(resp[0], [0.5, 0.5], rtol=1e-12)
        smoothed = em.em(XL, yL, XU, 2, event, alpha=1.0, prior_alpha=0.0, weight=0.0).mixture
        assert em.e_step(smoothed, XU)[0, 1] > 0.9
    seen = em.em(XL[:, :4], yL, XU[:, :4], 2, event, alpha=1.0, prior_alpha=0.0, weight=0.0).mixture
    np.testing.assert_allclose(resp, em.e_step(seen, XU[:, :4]), rtol=1e-9)
    # a point of the parameter space: every table a distribution
    log_p, log_q = start.log_tables()
    if event == "multinomial":
        np.testing.assert_allclose(np.exp(log_p).sum(axis=1), 1.0, rtol=1e-12)
    else:
        np.testing.assert_allclose(np.exp(log_p) + np.exp(log_q), 1.0, rtol=1e-12)


@pytest.mark.parametrize("event", em.EVENT_MODELS)
def test_weight_zero_with_the_evidence_cap_is_still_the_labelled_only_model(event):
    X, y = planted(n_per=10, seed=4)
    plain = em.em(X[:20], y[:20], X[20:], 3, event, alpha=0.7, weight=0.0)
    capped = em.em(X[:20], y[:20], X[20:], 3, event, alpha=0.7, weight=0.0, e_tokens=4.0)
    assert capped.iterations == 0 and capped.objective == plain.objective
    np.testing.assert_array_equal(capped.mixture.word_count, plain.mixture.word_count)
    np.testing.assert_array_equal(capped.labelled_count, plain.labelled_count)
    assert not capped.expected_count.any()
    with pytest.raises(NbcliError, match="evidence cap"):
        em.em(X[:20], y[:20], X[20:], 3, event, weight=1.0, e_tokens=-1.0)
