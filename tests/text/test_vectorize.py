"""Vocabularies, the hash index and count matrices."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

from nbcli.errors import NbcliError
from nbcli.text import vectorize
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.vectorize import HashIndex, Vocabulary, VocabularyBuilder, prune_mask

from conftest import make_docs
from vectorizer import Vectorizer


@settings(max_examples=60)
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=300), max_size=6))
def test_hash_index_assigns_first_seen_ids(batches):
    index = HashIndex(bits=2)  # tiny, so it has to grow and probe
    expected: dict[int, int] = {}
    for keys in batches:
        arr = np.array(keys, dtype=np.uint64)
        found = index.lookup(arr)
        assert found.tolist() == [expected.get(k, -1) for k in keys]
        new = sorted({k for k in keys if k not in expected})
        if new:
            ids = index.add(np.array(new, dtype=np.uint64))
            for k, i in zip(new, ids.tolist()):
                expected[k] = i
        assert index.lookup(arr).tolist() == [expected[k] for k in keys]
    assert index.keys().tolist() == sorted(expected, key=expected.get)


def test_vocabulary_lookup_and_terms():
    vocab = Vocabulary.from_terms(["zeta", "alpha", "mu", "naïve"])
    assert len(vocab) == 4
    assert np.all(np.diff(vocab.hashes.astype(object)) > 0)  # sorted by hash
    cols = [vocab.index_of(t) for t in ["alpha", "naïve", "zeta", "mu", "unknown"]]
    assert cols[-1] == -1 and sorted(cols[:-1]) == [0, 1, 2, 3]
    assert vocab.terms(cols[:-1]) == ["alpha", "naïve", "zeta", "mu"]


def _same_matrix(ours, ours_vocab, theirs, theirs_vocab):
    """Compare two doc-term matrices whose columns are ordered differently."""
    cols = [ours_vocab.index_of(t) for t in theirs_vocab]
    assert -1 not in cols and len(ours_vocab) == len(theirs_vocab)
    assert (ours[:, cols] != theirs).nnz == 0


@pytest.mark.parametrize("ngrams", [1, 2, 3])
def test_fit_transform_equals_scikit_learn_count_vectorizer(ngrams):
    texts, _ = make_docs(600, seed=3)
    ours = Vectorizer(Analyzer(AnalyzerOptions(ngrams=ngrams)))
    X = ours.fit_transform(texts, batch_docs=97)
    cv = CountVectorizer(ngram_range=(1, ngrams))
    Y = cv.fit_transform(texts)
    _same_matrix(X, ours.vocabulary, Y, cv.get_feature_names_out())
    # transform maps new documents onto the fixed vocabulary, skipping unknown terms
    new = ["w1x w1x brandnewterm", "nothing known here zzz", ""]
    _same_matrix(ours.transform(new), ours.vocabulary, cv.transform(new), cv.get_feature_names_out())


def test_builder_grows_across_batches_and_sorts_on_finish():
    a = Analyzer()
    builder = VocabularyBuilder()
    b1 = a.analyze(["red green", "green blue"])
    b2 = a.analyze(["blue violet red"])
    ids1, ids2 = builder.ids(b1), builder.ids(b2)
    red, green, blue = ids1[0], ids1[1], ids1[3]
    assert ids1.tolist() == [red, green, green, blue] and sorted({red, green, blue}) == [0, 1, 2]
    assert ids2.tolist() == [blue, 3, red]  # new terms get the next ids
    vocab, new_of_old = builder.finish()
    assert vocab.terms(new_of_old[[red, green, blue, 3]]) == ["red", "green", "blue", "violet"]


def test_pruning_matches_scikit_learn():
    texts, _ = make_docs(400, seed=5)
    for kwargs in ({"min_df": 3}, {"max_df": 0.5}, {"min_df": 0.01, "max_df": 40}, {"max_features": 50}):
        cv = CountVectorizer(**kwargs)
        cv.fit(texts)
        X = Vectorizer().fit_transform(texts)
        vocab = Vectorizer()
        vocab.fit_transform(texts)
        df = np.asarray((X > 0).sum(axis=0)).ravel()
        tf = np.asarray(X.sum(axis=0)).ravel()
        keep = prune_mask(tf, df, len(texts), **kwargs)
        kept = set(vocab.vocabulary.terms(np.flatnonzero(keep)))
        if "max_features" in kwargs:
            # ties at the cut may be broken differently; the counts must agree
            ours = sorted(tf[keep].tolist())
            theirs_cols = [vocab.vocabulary.index_of(t) for t in cv.get_feature_names_out()]
            assert ours == sorted(tf[theirs_cols].tolist())
        else:
            assert kept == set(cv.get_feature_names_out())


def test_pruning_everything_away_is_an_error_with_a_hint():
    with pytest.raises(
        NbcliError, match="no terms remain; try a lower min_df, a higher max_df or a larger max_features$"
    ):
        prune_mask(np.array([1, 2]), np.array([1, 1]), 10, min_df=5)


@pytest.mark.parametrize("n_terms", [1, 7, 5000])
def test_bucket_lookup_agrees_with_binary_search(n_terms):
    # big batches use the bucket index, small ones a binary search: the
    # columns must be the same, for known and unknown terms alike
    rng = np.random.default_rng(n_terms)
    hashes = np.unique(rng.integers(0, 2**63, n_terms * 2, dtype=np.int64).astype(np.uint64) * np.uint64(2))[:n_terms]
    vocab = Vocabulary(hashes, *vectorize._pack([f"t{i}" for i in range(len(hashes))]))
    known = hashes[rng.integers(0, len(hashes), 70_000)]
    unknown = rng.integers(0, 2**63, 30_000, dtype=np.int64).astype(np.uint64) * np.uint64(2) + np.uint64(
        1
    )  # odd: never in vocab
    queries = np.concatenate([known, unknown, hashes[:1] + np.uint64(2)])
    assert len(queries) >= vectorize._BUCKET_MIN_QUERIES
    want = np.concatenate([vocab.lookup(chunk) for chunk in np.array_split(queries, 64)])  # small: binary search
    got = vocab.lookup(queries)
    assert (got == want).all()
    assert (got[: len(known)] >= 0).all() and (got[len(known) : -1] == -1).all()
    assert (vocab.hashes[got[: len(known)]] == known).all()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=60),
    st.integers(0, 3000),
    st.sampled_from([np.uint64, np.int64]),
    st.integers(0, 2**32),
)
def test_distinct_inverse_is_np_unique(pool, n, dtype, seed):
    """The same distinct values and inverse as np.unique, by hashing once an
    array is long (the threshold lowered here so that small arrays take that
    path), with keys drawn from a small pool (many repeats) or not."""
    rng = np.random.default_rng(seed)
    values = np.array(pool, dtype=np.uint64)[rng.integers(0, len(pool), n)]
    if dtype is np.int64:
        values = (values >> np.uint64(1)).astype(np.int64)
    saved = vectorize._HASHED_DISTINCT_MIN
    vectorize._HASHED_DISTINCT_MIN = 16
    try:
        distinct, inverse = vectorize.distinct_inverse(values)
    finally:
        vectorize._HASHED_DISTINCT_MIN = saved
    expected, expected_inverse = np.unique(values, return_inverse=True)
    assert distinct.dtype == values.dtype
    assert np.array_equal(distinct, expected) and np.array_equal(inverse, expected_inverse.reshape(-1))


def test_distinct_inverse_of_colliding_keys_falls_back_to_a_sort():
    """Keys chosen so that every one hashes to the same slot (what an
    attacker who writes the text could aim for): the same answer, without
    probing them one by one (the probe rounds are bounded)."""
    n = 1 << 16
    inverse_of_fib = pow(int(vectorize._FIB), -1, 1 << 64)
    keys = np.array([(i * inverse_of_fib) % (1 << 64) for i in range(n)], dtype=np.uint64)  # key * FIB == i
    values = np.concatenate([keys, keys[::7]])
    distinct, inverse = vectorize.distinct_inverse(values)
    expected, expected_inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(distinct, expected) and np.array_equal(inverse, expected_inverse)


def test_the_bucket_index_is_built_once_big_batches_have_searched_as_many_hashes_as_the_vocabulary_has():
    # one big batch (a large message to a daemon's worker) does not build an index of the whole
    # vocabulary (16-32 bytes a term, kept); batches that have searched as many hashes do
    rng = np.random.default_rng(3)
    hashes = np.unique(rng.integers(0, 2**63, 250_000, dtype=np.int64).astype(np.uint64))[:200_000]
    vocab = Vocabulary(hashes, *vectorize._pack([f"t{i}" for i in range(len(hashes))]))
    built = []
    for _ in range(3):
        known = hashes[rng.integers(0, len(hashes), 50_000)]
        queries = np.concatenate([known, rng.integers(0, 2**63, 20_000).astype(np.uint64)])
        got = vocab.lookup(queries)
        want = np.concatenate([vocab.lookup(chunk) for chunk in np.array_split(queries, 8)])  # small: searched
        assert (got == want).all() and (got[:50_000] >= 0).all()
        built.append(vocab._buckets is not None)
    assert built == [False, False, True]  # 70k, 140k, then 210k >= 200k hashes searched
