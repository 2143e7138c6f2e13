"""The model file's bytes: joblib's layout without joblib.

A model file is one uncompressed joblib file holding a dict of plain values
(str, int, float, bool, None, lists and dicts of them) and numpy arrays of
numeric types; see `FORMAT` below and docs/guide/model-file.md.

Writing produces exactly the bytes `joblib.dump` would (`_JoblibPickler`,
which a test checks byte for byte against joblib) without importing joblib
(~50 ms of a one-message `nbcli learn`).

Reading does not use joblib. `_SafeUnpickler` reads joblib's layout (a
pickle stream in which each array is a `NumpyArrayWrapper` record followed by
the raw array bytes) with a restricted unpickler that resolves only the three
globals such a file needs, to inert stand-ins, and maps every array straight
from the file (mmap) instead of copying it. So loading never runs code from
the file, costs no joblib import (~95 ms), and copies nothing. A test checks
that `joblib.load` and this reader agree. What a pickle can build beyond
what nbcli writes (cycles, deep nesting, huge integers) is refused by
`structure_problem`.

This module knows bytes and pickles only: opening files, checksums and
errors in nbcli's words are `integrity`'s.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable
from typing import cast

import numpy as np

FORMAT = "nbcli-model"
FORMAT_VERSION = 3
# Version 2 added the bernoulli and complement event models and the
# smoothing settings (estimate, m_estimate, prior_alpha, complement's
# transforms, the arrays `idf` and `fit_count`). A plain multinomial model
# with the posterior-mean estimate is still written as version 1, which
# older nbcli reads; every version up to FORMAT_VERSION loads.
_MAX_DEPTH = 32  # nesting of the plain values (nbcli's own files use 4)

_DTYPE_NAME = re.compile(r"[<>|=]?[biuf][1248]")


class _ArrayRecord:
    """Inert stand-in for joblib.numpy_pickle.NumpyArrayWrapper."""


class _NdarrayClass:
    """Inert stand-in for numpy.ndarray (joblib records the array's class)."""


def _dtype(name, align=False, copy=True):
    if not isinstance(name, str) or not _DTYPE_NAME.fullmatch(name):
        raise pickle.UnpicklingError(f"array type {name!r} is not allowed")
    return np.dtype(name)


_ALLOWED = {
    ("joblib.numpy_pickle", "NumpyArrayWrapper"): _ArrayRecord,
    ("numpy", "ndarray"): _NdarrayClass,
    ("numpy", "dtype"): _dtype,
}


class _BoundedReader:
    """The file as the unpickler sees it: asking for more bytes than are
    left is an EOFError up front, where a damaged length field (a frame of
    2^60 bytes) would otherwise be allocated before the read comes up short."""

    def __init__(self, fh, size: int):
        self._fh = fh
        self._size = size

    def read(self, n: int = -1) -> bytes:
        if n is not None and n > self._size - self._fh.tell():
            raise EOFError
        return self._fh.read(n)

    def readline(self) -> bytes:
        return self._fh.readline()


# pickle's dispatch table, as its stub types it: opcode -> a method of the base class
_Handler = Callable[[pickle.Unpickler], None]


class _SafeUnpickler(pickle._Unpickler):
    dispatch = pickle._Unpickler.dispatch.copy()
    stack: list  # pickle's own, set by load(); its stub does not declare it

    def __init__(self, fh, buffer, size: int):
        super().__init__(_BoundedReader(fh, size))
        self._fh = fh
        self._buffer = buffer
        self._size = size

    def find_class(self, module, name):
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}") from None

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed")

    def load_build(self) -> None:
        state = self.stack.pop()
        obj = self.stack[-1]
        if isinstance(obj, _ArrayRecord):
            self.stack[-1] = self._read_array(state)
        elif isinstance(obj, np.dtype):
            if not (isinstance(state, tuple) and len(state) > 1 and state[1] in "<>|="):
                raise pickle.UnpicklingError("bad array type record")
            self.stack[-1] = obj.newbyteorder(state[1]) if state[1] in "<>" else obj
        else:
            raise pickle.UnpicklingError("unexpected object state in model file")

    dispatch[pickle.BUILD[0]] = cast(_Handler, load_build)  # called on a _SafeUnpickler only

    def load_bytearray8(self) -> None:
        raise pickle.UnpicklingError("byte arrays are not allowed")  # nbcli never writes one; it would allocate first

    dispatch[pickle.BYTEARRAY8[0]] = cast(_Handler, load_bytearray8)

    def _read_array(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("bad array record")
        shape, order, dtype = state.get("shape"), state.get("order"), state.get("dtype")
        if not (
            set(state) <= _ARRAY_STATE_KEYS
            and state.get("subclass", _NdarrayClass) is _NdarrayClass
            and state.get("allow_mmap", True) in (True, False)
            and state.get("numpy_array_alignment_bytes") in (None, _ALIGNMENT)
            and isinstance(shape, tuple)
            and all(isinstance(n, int) and n >= 0 for n in shape)
            and order in ("C", "F")
            and isinstance(dtype, np.dtype)
        ):
            raise pickle.UnpicklingError("bad array record")
        pos = self._fh.tell()
        if state.get("numpy_array_alignment_bytes") is not None:
            pad = self._fh.read(1)
            if not pad:
                raise EOFError
            # joblib aligns the data to 16 bytes with 0xff; check them, so a flipped bit there is caught too
            padding = self._buffer[pos + 1 : pos + 1 + pad[0]]
            if pad[0] > _ALIGNMENT or len(padding) != pad[0] or any(b != 0xFF for b in bytes(padding)):
                raise pickle.UnpicklingError("bad array padding")
            pos += 1 + pad[0]
        count = 1
        for n in shape:
            count *= n
        nbytes = count * dtype.itemsize
        if pos + nbytes > self._size:
            raise EOFError
        if count == 0:
            array = np.zeros(shape, dtype=dtype, order=order)
        else:
            flat = np.frombuffer(self._buffer, dtype=dtype, count=count, offset=pos)
            array = flat.reshape(shape, order=order)
        self._fh.seek(pos + nbytes)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        return array


class _ArrayHeader:
    """What joblib pickles in an array's place (its NumpyArrayWrapper's
    attributes); the array's bytes follow it in the file."""

    def __init__(self, array: np.ndarray, order: str):
        self.subclass = np.ndarray
        self.shape = array.shape
        self.order = order
        self.dtype = array.dtype
        self.allow_mmap = True
        self.numpy_array_alignment_bytes = _ALIGNMENT


_ALIGNMENT = 16  # joblib's NUMPY_ARRAY_ALIGNMENT_BYTES
# what joblib records of an array (its NumpyArrayWrapper's attributes); anything else is damage
_ARRAY_STATE_KEYS = {"subclass", "shape", "order", "dtype", "allow_mmap", "numpy_array_alignment_bytes"}


class _JoblibPickler(pickle._Pickler):
    """joblib.dump's layout for a dict of plain values and numeric arrays,
    as joblib's NumpyPickler writes it: each array is pickled as a
    `joblib.numpy_pickle.NumpyArrayWrapper` record, the pickle frame is
    committed, and the array's bytes follow: one byte giving the padding to
    a 16-byte boundary, the padding (0xff), then the data in the record's
    order. The record's class is named, not imported."""

    def __init__(self, fh):
        super().__init__(fh, protocol=pickle.DEFAULT_PROTOCOL)
        self._fh = fh

    def save_global(self, obj, name=None):
        if obj is _ArrayHeader:
            self.save("joblib.numpy_pickle")
            self.save("NumpyArrayWrapper")
            self.write(pickle.STACK_GLOBAL)
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def save(self, obj, save_persistent_id=True):
        if type(obj) is not np.ndarray or obj.dtype.hasobject:
            super().save(obj, save_persistent_id)
            return
        order = "F" if (obj.flags.f_contiguous and not obj.flags.c_contiguous) else "C"
        super().save(_ArrayHeader(obj, order))
        self.framer.commit_frame(force=True)
        pad = _ALIGNMENT - (self._fh.tell() + 1) % _ALIGNMENT
        self._fh.write(bytes([pad]) + b"\xff" * pad)
        if order == "C" and obj.flags.c_contiguous and obj.size:
            self._fh.write(memoryview(obj).cast("B"))
        elif obj.size:
            self._fh.write(obj.tobytes(order))


def dump_payload(payload: dict, fh) -> None:
    """Write `payload` to the binary file `fh` as `joblib.dump` would."""
    if pickle.DEFAULT_PROTOCOL < 4:
        raise RuntimeError("nbcli writes model files with pickle protocol 4 or later")
    _JoblibPickler(fh).dump(payload)


def load_payload(stream, buffer, size: int):
    """The object pickled in `stream` (a binary file positioned at its
    start, `size` bytes long) whose bytes are also `buffer` (an mmap or
    bytes: arrays are views of it). Raises what a damaged stream raises
    (EOFError, pickle.UnpicklingError, ValueError, ...)."""
    return _SafeUnpickler(stream, buffer, size).load()


def structure_problem(payload: dict) -> str | None:
    """What makes a payload more than string keys mapping to numpy arrays
    and plain values (None, bool, int, float, str, lists, dicts with string
    keys), or None. A pickle can build what nbcli never writes: a list that
    contains itself (which recursion over it never finishes), nesting
    thousands deep, a shared sub-list repeated 2^n times, integers of a
    million digits, inert stand-in objects; refuse them all here, in one
    walk that visits each container once."""
    if not all(isinstance(key, str) for key in payload):
        return "a key that is not a string"
    seen: set[int] = set()
    stack = [(key, value, 0) for key, value in payload.items() if not isinstance(value, np.ndarray)]
    while stack:
        key, value, depth = stack.pop()
        kind = type(value)
        if value is None or kind in (bool, float, str):
            continue
        if kind is int:
            if not -(1 << 63) <= value < (1 << 64):
                return f"an integer out of range in '{key}'"
            continue
        if kind not in (list, dict):
            return f"a value of type {kind.__name__} in '{key}'"
        if depth >= _MAX_DEPTH:
            return f"'{key}' is nested too deeply"
        if id(value) in seen:
            return f"'{key}' contains itself, or the same list or dict twice"
        seen.add(id(value))
        if kind is dict:
            if not all(type(k) is str for k in value):
                return f"a key that is not a string in '{key}'"
            value = value.values()
        stack.extend((key, item, depth + 1) for item in value)
    return None
