"""Vocabularies and count matrices.

A vocabulary maps term hashes (see `hashing`) to column numbers. A fitted
`Vocabulary` keeps its terms sorted by hash, so a lookup is one
`searchsorted` and the model file can store it as three flat arrays (hashes,
UTF-8 text, offsets) that load without building a Python object per term.
While a corpus is being read, a `VocabularyBuilder` grows the vocabulary in
first-seen order through a numpy open-addressing hash table; `finish` sorts
it.

The same code turns token batches into CSR count matrices (documents x
terms) for fitting and for mapping new documents onto a fixed vocabulary,
where unknown terms are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nbcli.errors import ParameterError
from nbcli.text import hashing
from nbcli.text.hashing import TokenBatch

_FIB = np.uint64(0x9E3779B97F4A7C15)
_BUCKET_MIN_QUERIES = 1 << 16  # Vocabulary.lookup: batches this big use the bucket index
_HASHED_DISTINCT_MIN = 1 << 15  # distinct_inverse: arrays this long are deduplicated by hashing
_HASHED_DISTINCT_ROUNDS = 64  # ... unless their probing runs this long (colliding keys): then by a sort


def distinct_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True) of a 1-D array of non-negative
    integers (a batch's token hashes): (the distinct values ascending, each
    value's index among them), the same arrays.

    A long array is deduplicated by open addressing first (one occurrence
    of each value claims a slot of a table twice its length, the others
    find it there), and only the distinct values are sorted: 336k token
    hashes of 83k terms take 14 ms instead of np.unique's 28, which sorts
    them all. Keys colliding on purpose (an attacker writes the text, so
    chooses the hashes) cannot make it quadratic: past
    _HASHED_DISTINCT_ROUNDS probing rounds it falls back to np.unique."""
    values = np.asarray(values)
    hashable = len(values) >= _HASHED_DISTINCT_MIN and values.dtype.kind in "iu"
    first = _claimed(values) if hashable and (values.dtype.kind == "u" or values.min() >= 0) else None
    if first is None:
        distinct, inverse = np.unique(values, return_inverse=True)
        return distinct, inverse.reshape(-1)
    owners = np.flatnonzero(first == np.arange(len(values)))
    order = np.argsort(values[owners])
    rank = np.empty(len(values), dtype=np.int64)
    rank[owners[order]] = np.arange(len(owners), dtype=np.int64)
    return values[owners[order]], np.take(rank, first)


def _claimed(values: np.ndarray) -> np.ndarray | None:
    """For each value, the position of the equal value that claimed its slot
    (`distinct_inverse`), or None past _HASHED_DISTINCT_ROUNDS rounds."""
    keys = np.ascontiguousarray(values).view(np.uint64) if values.itemsize == 8 else values.astype(np.uint64)
    bits = int(2 * len(keys)).bit_length()
    mask = (1 << bits) - 1
    table = np.full(1 << bits, -1, dtype=np.int64)  # slot -> position of the value that claimed it
    slot = ((keys * _FIB) >> np.uint64(64 - bits)).astype(np.intp)
    first = np.empty(len(keys), dtype=np.int64)
    todo = np.arange(len(keys), dtype=np.int64)
    for _ in range(_HASHED_DISTINCT_ROUNDS):
        held = np.take(table, slot)
        free = held < 0
        if free.any():
            table[slot[free]] = todo[free]  # several may claim one slot: one of them wins
            held = np.take(table, slot)
        found = np.take(keys, held) == np.take(keys, todo)
        first[todo[found]] = held[found]
        todo, slot = todo[~found], (slot[~found] + 1) & mask
        if not len(todo):
            return first
    return None


def _text(term: bytes) -> str:
    try:
        return term.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return term.decode("utf-8", "replace")


class Vocabulary:
    """A fixed vocabulary: terms sorted by hash, column i = i-th hash.

    hashes: uint64 array of shape (n_terms,), strictly increasing.
    blob, offsets: the terms' UTF-8 text; term i is
        blob[offsets[i]:offsets[i + 1]].
    """

    def __init__(self, hashes: np.ndarray, blob: np.ndarray, offsets: np.ndarray):
        self.hashes = hashes
        self.blob = blob
        self.offsets = offsets
        self._buckets: HashIndex | None = None  # a HashIndex of the hashes, for big lookups
        self._searched = 0  # hashes big batches have looked up (`lookup` builds the index past len(self))

    def __len__(self) -> int:
        return len(self.hashes)

    @classmethod
    def from_terms(cls, terms: list[str]) -> Vocabulary:
        hashes = hashing.hash_strings(list(terms))
        order = np.argsort(hashes, kind="stable")
        hashes = hashes[order]
        if len(hashes) > 1 and (np.diff(hashes) == 0).any():
            raise ValueError("duplicate terms")
        return cls(hashes, *_pack([terms[i] for i in order.tolist()]))

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """Column of each hash, or -1 where the term is unknown (int64).

        A binary search (searchsorted) per hash; for big batches, a hash
        table (`HashIndex`, at most half full) where a lookup is a couple of
        array reads instead of ~17 cache-missing steps. The table is built
        once big batches have searched as many hashes as the vocabulary has
        terms (a batch that big builds it at once): its build costs about
        what searching that many costs (1.41M terms: 150-300 ms; 150k
        hashes searched in 15 ms, looked up in 7), and it holds 16 to 32
        bytes a term (64 MB at 1.41M terms), which one big message to a
        daemon's worker (a 490 KB CHECK: 150k 3-gram tokens) built and kept
        before, taking a worker from 73 to 166 MB. Small batches, such as
        the one message of a procmail call, never pay for building it;
        their hashes are searched in ascending
        order (numpy narrows each search to above the last one found, and
        neighbouring searches share cache lines): a spamd CHECK of a
        SpamAssassin message (2,700 3-gram tokens) on 1.4M terms does its
        work in 0.89 ms instead of 1.00 (median of 5 x 400 messages); on
        108k terms (900 tokens) the two are within 2%."""
        if len(self.hashes) == 0:
            return np.full(len(hashes), -1, dtype=np.int64)
        if len(hashes) >= _BUCKET_MIN_QUERIES:
            self._searched += len(hashes)
            if self._buckets is not None or self._searched >= len(self.hashes):
                return self._bucket_lookup(hashes)
        hashes = np.asarray(hashes, dtype=np.uint64)
        order = np.argsort(hashes)
        ascending = hashes[order]
        pos = np.searchsorted(self.hashes, ascending)
        pos[pos == len(self.hashes)] = 0
        out = np.empty(len(hashes), dtype=np.int64)
        out[order] = np.where(self.hashes[pos] == ascending, pos, -1)
        return out

    def _bucket_lookup(self, hashes: np.ndarray) -> np.ndarray:
        if self._buckets is None:
            index = HashIndex(bits=int(len(self.hashes)).bit_length() + 1)
            index.add(np.ascontiguousarray(self.hashes))  # ids 0, 1, ... = columns
            self._buckets = index
        return self._buckets.lookup(hashes)

    def terms(self, ids) -> list[str]:
        """The text of the terms in columns `ids` (bytes that are not UTF-8,
        which only a damaged or crafted model file has, shown as U+FFFD)."""
        ids = np.asarray(ids, dtype=np.int64)
        starts, ends = self.offsets[ids].tolist(), self.offsets[ids + 1].tolist()
        blob = self.blob.tobytes() if len(ids) > 256 else None
        return [_text(blob[a:b] if blob is not None else self.blob[a:b].tobytes()) for a, b in zip(starts, ends)]

    def index_of(self, term: str) -> int:
        """Column of `term`, or -1."""
        return int(self.lookup(hashing.hash_strings([term]))[0])

    def subset(self, keep: np.ndarray) -> Vocabulary:
        """The vocabulary restricted to the columns `keep` (sorted int array)."""
        keep = np.asarray(keep, dtype=np.int64)
        starts = self.offsets[keep]
        lengths = self.offsets[keep + 1] - starts
        offsets = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        # each kept term's bytes, gathered without decoding them: byte i of the new blob is
        # byte (start of its term + its place in the term) of the old one
        take = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
        return Vocabulary(self.hashes[keep], np.asarray(self.blob)[take], offsets)


def _pack(terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [t.encode("utf-8", "surrogatepass") for t in terms]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return blob, offsets


class HashIndex:
    """Map distinct uint64 keys to ids 0, 1, 2, ... in insertion order.

    Open addressing with linear probing, kept at most half full, with every
    operation vectorised over an array of keys.
    """

    def __init__(self, bits: int = 12):
        self._bits = bits
        self._keys = np.zeros(1 << bits, dtype=np.uint64)
        self._ids = np.full(1 << bits, -1, dtype=np.int64)
        self._chunks: list[np.ndarray] = []
        self.size = 0

    def keys(self) -> np.ndarray:
        """All keys, in id order."""
        if len(self._chunks) != 1:
            self._chunks = [np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.uint64)]
        return self._chunks[0]

    def _slots(self, keys: np.ndarray) -> np.ndarray:
        return ((keys * _FIB) >> np.uint64(64 - self._bits)).astype(np.intp)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Id of each key, or -1 (int64 array).

        The first probe is done for all keys at once; only the keys that
        met another key in their slot (about a quarter at half load) go on
        probing. np.take rather than fancy indexing: several times faster
        for these gathers."""
        mask = (1 << self._bits) - 1
        slot = self._slots(keys)
        ids = np.take(self._ids, slot)
        hit = np.take(self._keys, slot) == keys
        out = np.where(hit, ids, -1)
        hit |= ids < 0  # an empty slot ends the search too
        todo = np.flatnonzero(~hit)
        while len(todo):
            slot_t = (np.take(slot, todo) + 1) & mask
            slot[todo] = slot_t
            ids = np.take(self._ids, slot_t)
            hit = np.take(self._keys, slot_t) == np.take(keys, todo)
            out[todo[hit]] = ids[hit]
            todo = todo[~(hit | (ids < 0))]
        return out

    def _place(self, keys: np.ndarray, ids: np.ndarray) -> None:
        mask = (1 << self._bits) - 1
        slot = self._slots(keys)
        while len(keys):
            free = self._ids[slot] < 0
            self._ids[slot[free]] = ids[free]  # several may claim one slot ...
            won = np.zeros(len(keys), dtype=bool)
            won[free] = self._ids[slot[free]] == ids[free]  # ... one of them wins
            self._keys[slot[won]] = keys[won]
            lost = ~won
            keys, ids, slot = keys[lost], ids[lost], (slot[lost] + 1) & mask

    def add(self, keys: np.ndarray) -> np.ndarray:
        """Insert distinct keys that are not present yet; return their ids."""
        while 2 * (self.size + len(keys)) > (1 << self._bits):
            self._grow()
        ids = np.arange(self.size, self.size + len(keys), dtype=np.int64)
        self._place(keys, ids)
        self._chunks.append(keys)
        self.size += len(keys)
        return ids

    def _grow(self) -> None:
        keys = self.keys()
        self._bits += 1
        self._keys = np.zeros(1 << self._bits, dtype=np.uint64)
        self._ids = np.full(1 << self._bits, -1, dtype=np.int64)
        self._place(keys, np.arange(len(keys), dtype=np.int64))


class VocabularyBuilder:
    """A vocabulary growing as documents are read (ids in first-seen order)."""

    def __init__(self):
        self._index = HashIndex()
        self._terms: list[str] = []

    def __len__(self) -> int:
        return self._index.size

    def ids(self, batch: TokenBatch) -> np.ndarray:
        """Column of every token of `batch`, adding the terms not seen yet."""
        hashes = batch.hashes
        ids = self._index.lookup(hashes)
        missing = np.flatnonzero(ids < 0)
        if len(missing):
            # The distinct new hashes (np.sort: several times faster than the
            # stable argsort of np.unique(return_index=True)), then one
            # occurrence of each for its text: any will do, same hash, same
            # text.
            missing_hashes = hashes[missing]
            ordered = np.sort(missing_hashes)
            first = np.ones(len(ordered), dtype=bool)
            np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
            base = self._index.size
            self._index.add(ordered[first])
            ids[missing] = new_ids = self._index.lookup(missing_hashes)
            where = np.empty(self._index.size - base, dtype=np.int64)
            where[new_ids - base] = missing
            self._terms.extend(batch.strings(where))
        return ids

    def add_terms(self, keys: np.ndarray, terms: list[str]) -> np.ndarray:
        """Ids of distinct term hashes `keys` (with their texts `terms`),
        adding those not present yet: merges another builder's vocabulary."""
        ids = self._index.lookup(keys)
        missing = np.flatnonzero(ids < 0)
        if len(missing):
            ids[missing] = self._index.add(keys[missing])
            self._terms.extend(terms[i] for i in missing.tolist())
        return ids

    def state(self) -> tuple[np.ndarray, list[str]]:
        """(term hashes in id order, their texts)."""
        return self._index.keys(), self._terms

    def finish(self) -> tuple[Vocabulary, np.ndarray]:
        """The sorted Vocabulary, and the new column of every old id."""
        hashes = self._index.keys()
        order = np.argsort(hashes, kind="stable")
        new_of_old = np.empty(len(order), dtype=np.int64)
        new_of_old[order] = np.arange(len(order))
        terms = self._terms
        vocab = Vocabulary(hashes[order], *_pack([terms[i] for i in order.tolist()]))
        return vocab, new_of_old


@dataclass
class SparseCounts:
    """A CSR matrix (documents x terms) without scipy.

    data may be None, meaning every stored entry is 1 (one entry per token
    occurrence, duplicates allowed); `canonical()` sums duplicates.
    unknown, if given, counts each row's tokens outside the vocabulary.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray | None
    shape: tuple[int, int]
    unknown: np.ndarray | None = None

    def canonical(self) -> SparseCounts:
        """The same matrix with sorted, unique column indices per row."""
        n_rows, n_cols = self.shape
        rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(self.indptr))
        key = rows * max(n_cols, 1) + self.indices
        weights = self.data
        data: np.ndarray
        uniq, inverse = np.unique(key, return_inverse=True)
        if weights is None:
            data = np.bincount(inverse, minlength=len(uniq)).astype(np.float64)
        else:
            data = np.bincount(inverse, weights=weights, minlength=len(uniq))
        urows = uniq // max(n_cols, 1)
        indptr = np.searchsorted(urows, np.arange(n_rows + 1))
        return SparseCounts(indptr.astype(np.int64), uniq % max(n_cols, 1), data, self.shape)

    def to_scipy(self):
        import scipy.sparse

        c = self.canonical()
        return scipy.sparse.csr_matrix((c.data, c.indices, c.indptr), shape=self.shape)


def known_counts(batch: TokenBatch, ids: np.ndarray, n_terms: int) -> SparseCounts:
    """CSR (token-occurrence form) of the tokens whose id is known (>= 0),
    with the number of unknown tokens of each document."""
    known = ids >= 0
    if known.all():
        return SparseCounts(batch.doc_ptr, ids, None, (batch.n_docs, n_terms), np.zeros(batch.n_docs, np.int64))
    cum = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(known, out=cum[1:])
    indptr = cum[batch.doc_ptr]
    unknown = np.diff(batch.doc_ptr) - np.diff(indptr)
    return SparseCounts(indptr, ids[known], None, (batch.n_docs, n_terms), unknown)


def prune_mask(
    term_count: np.ndarray,
    doc_freq: np.ndarray | None,
    n_docs: int,
    min_df: float = 1,
    max_df: float = 1.0,
    max_features: int | None = None,
) -> np.ndarray:
    """Which terms survive min_df, max_df and max_features (bool).

    term_count, doc_freq: arrays of shape (n_terms,) summed over classes.
    min_df / max_df: an int is a number of documents, a float a proportion.
    max_features keeps the most frequent terms (ties by column).
    """
    keep = np.ones(len(term_count), dtype=bool)
    low = min_df if isinstance(min_df, int) else min_df * n_docs
    high = max_df if isinstance(max_df, int) else max_df * n_docs
    if doc_freq is not None:
        keep &= (doc_freq >= low) & (doc_freq <= high)
    if max_features is not None and keep.sum() > max_features:
        candidates = np.flatnonzero(keep)
        order = np.argsort(-term_count[candidates], kind="stable")[:max_features]
        keep[:] = False
        keep[candidates[order]] = True
    if not keep.any():
        raise ParameterError(
            "min_df",
            "after pruning, no terms remain",
            hint="try a lower {min_df}, a higher {max_df} or a larger {max_features}",
        )
    return keep
