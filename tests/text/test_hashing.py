"""The term hash: a pure function of the term's text, however computed."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.text import hashing

MOD = 1 << 64


def reference(s: str) -> int:
    """H(s) = sum ord(s[k]) * P**k mod 2**64, computed with Python ints."""
    h, p = 0, 1
    for ch in s:
        h = (h + ord(ch) * p) % MOD
        p = (p * hashing.P) % MOD
    return h


@given(st.lists(st.text(max_size=30), max_size=40))
def test_hash_strings_matches_the_definition(strings):
    assert hashing.hash_strings(strings).tolist() == [reference(s) for s in strings]


@given(st.text(max_size=20), st.text(max_size=20))
def test_concatenation_has_a_closed_form(x, y):
    """H(x + y) = H(x) + P**len(x) H(y): what n-gram hashes are built on."""
    hx, hy = hashing.hash_strings([x, y])
    combined = np.array([hx]) + hashing.pow_p(np.array([len(x)])) * np.array([hy])
    assert int(combined[0]) == reference(x + y)


def test_distinct_terms_get_distinct_hashes():
    terms = [f"term{i}" for i in range(200_000)] + ["ab", "ba", "aab", "aba", "baa"]
    assert len(np.unique(hashing.hash_strings(terms))) == len(terms)


def test_tokens_longer_than_a_window_and_across_windows():
    w = hashing._WINDOW
    long_token = "ab" * w + "c"  # longer than a window: hashed piecewise
    spanning = ["x" * (w - 3), "yyyyyyyy", "z" * 10]  # second crosses a window edge
    strings = spanning + [long_token, "tail"]
    got = hashing.hash_strings(strings)
    assert int(got[3]) == reference(long_token)
    assert [int(h) for h in got[:3]] == [reference(s) for s in spanning]
    assert int(got[4]) == reference("tail")


@settings(max_examples=50)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=50))
def test_non_ascii_and_surrogates(s):
    assert int(hashing.hash_strings([s])[0]) == reference(s)


def test_token_batch_groups_hashes_by_document():
    """A TokenBatch gives each document its own tokens, in order, with
    their texts and hashes (what the vocabulary and `explain` read)."""
    words = ["spam", "eggs", "ham", "spam"]
    hashes = hashing.hash_strings(words)
    doc_ptr = np.array([0, 2, 2, 4], dtype=np.int64)  # the second document is empty
    batch = hashing.TokenBatch(hashes, doc_ptr, lambda idx: [words[i] for i in idx], mail_docs=1)
    assert batch.n_docs == 3
    assert [batch.doc_tokens(i) for i in range(3)] == [["spam", "eggs"], [], ["ham", "spam"]]
    assert batch.strings([3, 0]) == ["spam", "spam"]
    assert batch.hashes[3] == batch.hashes[0] != batch.hashes[2]  # the same term, the same hash
    assert batch.mail_docs == 1
