"""The sum of term digests a model id is computed from (`term_sum`). No I/O.

A model id (`store.payload.compute_model_id`) covers a model's terms as a
sum, mod 2^64, of one digest per term, so that the sum is independent of
the terms' order and can be taken apart: a model read through its journal
(`nb.overlay.JournalView.terms`) has the sum of a state it knows (its base
file's stored `term_sum`, or the one a journal checkpoint carries) less
the digests of the terms changed since, as that state had them, plus their
digests as they are now: O(the terms changed since), never O(model).
"""

from __future__ import annotations

import numpy as np

_FMIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))  # MurmurHash3's 64-bit finaliser


def term_sum(hashes, tf, df=None) -> tuple[int, int]:
    """(sum mod 2^64 of one digest per term, number of terms): a term's
    digest mixes its hash with each of its counts per class (term counts,
    then document frequencies; as float64, so integer and float tables
    agree), one MurmurHash3 finaliser round per value, so that terms and
    counts moved about change the sum, while their order does not."""
    digests = np.array(hashes, dtype=np.uint64)
    shift = np.uint64(33)
    for table in (tf, df):
        if table is None:
            continue
        for row in np.asarray(table, dtype=np.float64):
            digests ^= np.ascontiguousarray(row).view(np.uint64)
            for factor in _FMIX:
                digests ^= digests >> shift
                digests *= factor
            digests ^= digests >> shift
    return int(np.add.reduce(digests, dtype=np.uint64)), len(digests)


def moved(start: tuple[int, int], old: tuple[int, int], new: tuple[int, int]) -> tuple[int, int]:
    """The term sum `start` with the terms summed in `old` taken out and
    those in `new` put in (each a `term_sum`)."""
    return (start[0] - old[0] + new[0]) % (1 << 64), start[1] - old[1] + new[1]
