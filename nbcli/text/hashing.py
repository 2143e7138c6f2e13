"""64-bit term hashes, computed for many tokens at once with numpy.

A term is identified by the polynomial hash of its Unicode code points:

    H(s) = sum_k ord(s[k]) * P**k   (mod 2**64)

with P a fixed odd constant. Because the hash is a pure function of the
term's text, the same term gets the same hash whatever produced it (the fast
tokenizer, a regular expression, a header prefix or an n-gram joiner), and
concatenation has a closed form:

    H(x + y) = H(x) + P**len(x) * H(y)

which is how prefixed tokens ("subject:" + word) and n-grams ("a b") are
hashed without building their strings.

Spans of a code-point array are hashed with prefix sums: with
C[i] = sum_{k<i} code[k] * P**k, the span [s, e) hashes to
(C[e] - C[s]) * P**-s, and P is invertible modulo 2**64 because it is odd.
All arithmetic is on numpy uint64 arrays, which wrap modulo 2**64.

Two different terms share a hash with probability about 2**-58 per pair
(the polynomial loses a few bits when code-point differences are even), so a
vocabulary of a million terms has a collision with probability ~1e-6.

`TokenBatch`, the hashes of a batch's tokens grouped by document, lives
here rather than in `analyzer` (which makes it): the vectorizer, training
and the pipeline read it without importing the analyzer and the mail
parser behind it (issue 26: text modules stay at most 3 imports high).
"""

from __future__ import annotations

import numpy as np

P = 0x9E3779B97F4A7C15  # odd, so invertible modulo 2**64
_MASK = (1 << 64) - 1
_P_INV = pow(P, -1, 1 << 64)

# Spans are hashed in windows of this many code points, which bounds the
# size of the cached power tables (16 bytes per entry, 2 * _WINDOW entries).
_WINDOW = 1 << 18

_pow = np.ones(1, dtype=np.uint64)
_inv = np.ones(1, dtype=np.uint64)


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Arrays of P**k and P**-k for k < n (cached, grown by doubling)."""
    global _pow, _inv
    while len(_pow) < n:
        m = len(_pow)
        _pow = np.concatenate([_pow, _pow * np.uint64(pow(P, m, 1 << 64))])
        _inv = np.concatenate([_inv, _inv * np.uint64(pow(_P_INV, m, 1 << 64))])
    return _pow, _inv


def pow_p(lengths: np.ndarray) -> np.ndarray:
    """P**n for every n in `lengths` (array of non-negative ints)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        return np.zeros(0, dtype=np.uint64)
    top = int(lengths.max())
    if top < 2 * _WINDOW:
        return _powers(top + 1)[0][lengths]
    return np.array([pow(P, int(n), 1 << 64) for n in lengths], dtype=np.uint64)


def _hash_window(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    pw, inv = _powers(len(codes) + 1)
    prefix = np.empty(len(codes) + 1, dtype=np.uint64)
    prefix[0] = 0
    np.multiply(codes, pw[: len(codes)], out=prefix[1:])
    np.cumsum(prefix[1:], out=prefix[1:])
    # np.take: faster than fancy indexing for these gathers
    return (np.take(prefix, ends) - np.take(prefix, starts)) * np.take(inv, starts)


def _hash_long(codes: np.ndarray, start: int, end: int) -> int:
    h, shift = 0, 0
    for a in range(start, end, _WINDOW):
        b = min(end, a + _WINDOW)
        piece = int(_hash_window(codes[a:b], np.array([0]), np.array([b - a]))[0])
        h = (h + pow(P, shift, 1 << 64) * piece) & _MASK
        shift += b - a
    return h


def hash_spans(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Hashes of the spans codes[starts[i]:ends[i]] (uint64 array).

    `codes` holds code points (uint8 for ASCII text, uint32 otherwise);
    `starts` must be non-decreasing.
    """
    n_tok = len(starts)
    out = np.empty(n_tok, dtype=np.uint64)
    if n_tok == 0:
        return out
    lengths = ends - starts
    long_ = lengths > _WINDOW
    for i in np.flatnonzero(long_):
        out[i] = _hash_long(codes, int(starts[i]), int(ends[i]))
    short = ~long_
    if long_.any():
        idx = np.flatnonzero(short)
        s_all, e_all = starts[idx], ends[idx]
    else:
        idx, s_all, e_all = None, starts, ends
    if len(s_all) == 0:
        return out
    # Window w covers tokens starting in [w0, w0 + _WINDOW); each is at most
    # _WINDOW long, so codes[w0 : w0 + 2 * _WINDOW] holds all of them.
    bounds = np.searchsorted(s_all, np.arange(0, int(s_all[-1]) + _WINDOW + 1, _WINDOW))
    for j in range(len(bounds) - 1):
        lo, hi = bounds[j], bounds[j + 1]
        if lo == hi:
            continue
        w0 = j * _WINDOW
        s, e = s_all[lo:hi] - w0, e_all[lo:hi] - w0
        h = _hash_window(codes[w0 : w0 + int(e.max())], s, e)
        if idx is None:
            out[lo:hi] = h
        else:
            out[idx[lo:hi]] = h
    return out


def codes_of(text: str) -> np.ndarray:
    """The code points of `text` as a numpy array (uint8 if ASCII)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def hash_strings(strings: list[str]) -> np.ndarray:
    """H(s) for every string in `strings` (uint64 array)."""
    if not strings:
        return np.zeros(0, dtype=np.uint64)
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    return hash_spans(codes_of("".join(strings)), starts, ends)


class TokenBatch:
    """The tokens of a batch of documents.

    hashes: uint64 array of shape (n_tokens,), the term hash of each token,
        documents one after another.
    doc_ptr: int64 array of shape (n_docs + 1,); the tokens of document i are
        hashes[doc_ptr[i]:doc_ptr[i + 1]].
    mail_docs: how many of the documents were read as mail (training's
        defaults depend on whether most of a corpus is mail).
    """

    def __init__(self, hashes, doc_ptr, strings_of, mail_docs: int = 0):
        self.hashes = hashes
        self.doc_ptr = doc_ptr
        self._strings_of = strings_of
        self.mail_docs = mail_docs

    @property
    def n_docs(self) -> int:
        return len(self.doc_ptr) - 1

    def strings(self, idx) -> list[str]:
        """The text of the tokens at positions `idx`."""
        return self._strings_of(np.asarray(idx, dtype=np.int64))

    def doc_tokens(self, i: int) -> list[str]:
        return self.strings(np.arange(self.doc_ptr[i], self.doc_ptr[i + 1]))
