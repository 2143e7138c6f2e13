"""What is read is what nbcli wrote: checksums, the checked read and the
atomic, locked write of a model file.

Writing goes to a temporary file in the target's folder that is flushed,
fsynced and renamed over the target, under a lock file (`.NAME.lock`) so
concurrent writers take turns: a reader sees the old model or the new one,
never half of one. A model path that is a symbolic link is resolved first
(`target`): the link's target is locked and replaced, the link stays. The
lock file is opened without following links and must be a regular file.

Damage: the payload carries a checksum of everything in it
(`payload_checksum`), checked on every read, so a file changed after nbcli
wrote it (a flipped byte, a bad sector) is refused instead of loaded with
negative counts. What reading costs is this checksum, one pass over the
mapped bytes (23 ms for a 105 MB model of 1.77M terms). A checksum is no
defence against a crafted file (its author can recompute it, or drop it:
files written before checksums have none and still load), so every read
also checks the payload's structure (`codec.structure_problem`), and every
load the model's invariants (`modelfile.from_payload`).
"""

from __future__ import annotations

import errno
import io
import json
import mmap
import os
import pickle
import re
import stat
import struct
import tempfile
import zlib
from contextlib import contextmanager
from typing import Any, BinaryIO

import numpy as np

from nbcli.errors import ModelFileError, NbcliError
from nbcli.store.codec import FORMAT, FORMAT_VERSION, dump_payload, load_payload, structure_problem

# The checksum is an extra key, which every nbcli ignores unless it knows
# it, so adding it needed no new format version: older nbcli still reads
# the files, and files without one (written before it) load with the
# invariant checks alone. It is for damage, not tampering, and it must not
# make loading slow: a one-message predict maps the arrays and reads only
# the pages it needs, and checking means reading every byte. So the arrays'
# bytes are read as 64-bit words and summed with numpy, each word weighted
# by its place (`word_sum`): 18 ms for a 105 MB model of 1.77M terms, where
# zlib's CRC-32 took 44 ms and blake2b would take ~110 ms. Damage to one
# word always changes the sum (the weights are odd, so invertible mod 2^64),
# and so does moving words about; random damage elsewhere leaves it
# unchanged with odds of about 2^-64. The plain values and the arrays'
# names, types and shapes go through CRC-32 (they are small).
CHECKSUM_KEY = "checksum"
_CHECKSUM = re.compile(r"sum64:[0-9a-f]{24}")
SUM_MIX = 0x9E3779B97F4A7C15  # odd: folds each block's (and array's) sum into the total by place
_SUM_BLOCK = 8192  # words (64 KB): a block and its weighted copy stay in the cache


def read_payload(path: str, copy: bool = False) -> dict:
    """The raw dict stored in a model file (arrays memory-mapped, read-only;
    copy=True: read into memory instead, so that nothing done to the file
    afterwards, not even truncating it in place, can reach them: what
    `nbcli serve` does with small models)."""
    try:
        # O_NONBLOCK: opening a named pipe waits for a writer, and `nbcli predict FIFO` hung for ever
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ModelFileError(
            f"{path}: no such model file", hint="train one with 'nbcli train CORPUS -o MODEL'"
        ) from None
    except IsADirectoryError:
        raise ModelFileError(f"{path} is a folder, not a model file", hint="give the model file (MODEL.nb)") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {path}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise ModelFileError(f"{path} is a folder, not a model file", hint="give the model file (MODEL.nb)")
        raise ModelFileError(
            f"{path} is {kind_of(mode)}, not a model file", hint="give a file written by 'nbcli train'"
        )
    os.set_blocking(fd, True)
    fh = os.fdopen(fd, "rb")
    buffer: bytes | mmap.mmap
    stream: BinaryIO
    with fh:
        if copy:
            buffer = fh.read()
            size, stream = len(buffer), io.BytesIO(buffer)
        else:
            size, stream = os.fstat(fh.fileno()).st_size, fh
        head = stream.read(2)
        if len(head) == 0:
            raise ModelFileError(f"{path} is empty", hint="the model file was truncated; train it again")
        if head[:1] != b"\x80":
            raise ModelFileError(f"{path} is not an nbcli model file", hint="give a file written by 'nbcli train'")
        stream.seek(0)
        if not copy:
            buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            payload = load_payload(stream, buffer, size)
        except (EOFError, ValueError, struct.error) as exc:
            raise ModelFileError(
                f"{path} is truncated or corrupt ({type(exc).__name__})",
                hint="train the model again",
            ) from None
        except pickle.UnpicklingError as exc:
            raise ModelFileError(
                f"{path} is not an nbcli model file ({exc})", hint="give a file written by 'nbcli train'"
            ) from None
        except Exception as exc:  # anything else a damaged stream can raise
            raise ModelFileError(
                f"{path} is corrupt ({type(exc).__name__}: {exc})", hint="train the model again"
            ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ModelFileError(f"{path} is not an nbcli model file", hint="give a file written by 'nbcli train'")
    version = payload.get("format_version")
    if not isinstance(version, int):
        raise ModelFileError(f"{path} has no format version", hint="train the model again")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path} was written by a newer nbcli (model format {version}, this nbcli reads up to {FORMAT_VERSION})",
            hint="upgrade nbcli",
        )
    problem = structure_problem(payload)
    if problem:
        raise ModelFileError(f"{path} is corrupt ({problem})", hint="train the model again")
    stored = payload.get(CHECKSUM_KEY)
    if stored is not None:
        if not (isinstance(stored, str) and _CHECKSUM.fullmatch(stored)):
            raise ModelFileError(f"{path} is corrupt (bad checksum record)", hint="train the model again")
        if stored != payload_checksum(payload):
            raise ModelFileError(
                f"{path} is corrupt (checksum mismatch)",
                hint="the file changed after nbcli wrote it; train the model again",
            )
    return payload


def release_pages(array: np.ndarray) -> int:
    """Drop the resident pages of an array mapped from a model file
    (`read_payload` without copy): madvise(MADV_DONTNEED) over the whole
    pages inside it. They stay in the page cache and come back from the
    file on the next read, so the array reads the same; until then the
    process's resident set no longer counts them. The checksum and the
    loader's checks read every page of a model file, so without this a
    reader holds the whole file resident whatever it reads afterwards.
    Returns the bytes released (0 for an array in memory, or where the
    platform has no madvise)."""
    owner: Any = array
    while owner is not None and not isinstance(owner, mmap.mmap):
        owner = owner.obj if isinstance(owner, memoryview) else getattr(owner, "base", None)
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if owner is None or advice is None or owner.closed or array.nbytes == 0:
        return 0
    start = array.__array_interface__["data"][0] - np.frombuffer(owner, np.uint8).__array_interface__["data"][0]
    page = mmap.PAGESIZE
    first, end = -(-start // page) * page, (start + array.nbytes) // page * page
    if end <= first:
        return 0
    owner.madvise(advice, first, end - first)
    return end - first


def payload_checksum(payload: dict) -> str:
    """'sum64:' and 24 hex digits over everything in the payload but the
    checksum (see CHECKSUM_KEY): a CRC-32 of a canonical JSON text of the
    plain values (sorted keys) and of each array's name, type and shape,
    and a 64-bit sum of the arrays' little-endian bytes as words (the last
    few bytes of an array padded with zeros), each array's sum folded in by
    its place. Arrays are read straight from the mapped file. The payload
    must have passed `codec.structure_problem`."""
    plain = {k: v for k, v in payload.items() if k != CHECKSUM_KEY and not isinstance(v, np.ndarray)}
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=True)
    crc = zlib.crc32(text.encode("ascii"))
    total = 0
    for key in sorted(k for k, v in payload.items() if isinstance(v, np.ndarray)):
        array = payload[key]
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))  # no copy on little-endian machines
        crc = zlib.crc32(f"{key}:{array.dtype.str}:{array.shape}".encode("ascii"), crc)
        total = (total * SUM_MIX + word_sum(array.reshape(-1).view(np.uint8))) % (1 << 64)
    return f"sum64:{crc:08x}{total:016x}"


def word_sum(raw: np.ndarray) -> int:
    """A place-sensitive 64-bit sum of bytes: the little-endian 64-bit words
    (the last few bytes padded with zeros), block by block, each word w_i
    counted as w_i (2i + 1) within its block (an odd weight, so any change
    to one word changes the sum) and the blocks folded in by their place;
    then the length."""
    whole = len(raw) // 8 * 8
    words = raw[:whole].view("<u8")
    total, weights = 0, None
    for start in range(0, len(words), _SUM_BLOCK):
        block = words[start : start + _SUM_BLOCK]
        if weights is None or len(weights) != len(block):
            weights = np.arange(len(block), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        total = (total * SUM_MIX + int(np.add.reduce(block * weights, dtype=np.uint64))) % (1 << 64)
    tail = int.from_bytes(raw[whole:].tobytes(), "little")
    return (total * SUM_MIX + tail + len(raw)) % (1 << 64)


def with_checksum(payload: dict) -> dict:
    """`payload` with its checksum (re)computed (`write_payload` does this)."""
    payload = {k: v for k, v in payload.items() if k != CHECKSUM_KEY}
    return {**payload, CHECKSUM_KEY: payload_checksum(payload)}


_locked_as: dict[str, str] = {}  # the locks this process holds: a model path as given -> the file locked


def target(path: str) -> str:
    """The file that writing model `path` replaces, and whose lock it takes:
    a symbolic link is followed to its final target (a user's `mail.nb ->
    /srv/shared.nb` learns into the shared file, which every user of it
    then reads; the link stays a link). Every writer resolves the link
    alike, so writers through the link and to the target take turns.
    While this process holds the lock of `path` (`locked`), it is the file
    that lock was taken on, resolved once: a link re-pointed meanwhile
    does not send the rest of the change (its journal, its checkpoint) to
    a file whose lock is not held, and a spamd TELL does not resolve the
    link a dozen times (about 0.1 ms)."""
    key = _locked_as.get(path)
    return key if key is not None else os.path.realpath(path)


@contextmanager
def locked(path: str):
    """Hold the lock of model file `path` (`.NAME.lock` beside it) for a
    read-modify-write: every writer takes it, so updates take turns and none
    is lost. It is an flock(2) lock, which the kernel drops when its holder
    dies (even by kill -9), so a crashed writer never leaves a stale lock;
    the lock file itself stays, empty, and means nothing by existing.
    Re-entrant within a process (write_payload inside it does not wait on
    itself). Temporary files of writers that were killed are removed here,
    since no other writer can be running."""
    import fcntl
    import stat

    key = target(path)
    if key in _locked_as.values():  # this process holds it (through this path or another)
        yield
        return
    folder, name = os.path.split(key)
    lock_path = os.path.join(folder, f".{name}.lock")
    try:  # never through a link: a dangling .NAME.lock link would make every learner create its target
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NbcliError(
                f"cannot lock model file {path}: its lock file {lock_path} is a symbolic link",
                hint=f"remove {lock_path}; nbcli makes it again",
            ) from None
        if exc.errno == errno.ENOENT and not os.path.isdir(folder or "."):  # as `check_writable` says it
            raise NbcliError(f"cannot write {path}: folder {folder} does not exist", hint="create it first") from None
        raise NbcliError(f"cannot lock model file {path}: {exc.strerror} ({lock_path})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NbcliError(
            f"cannot lock model file {path}: its lock file {lock_path} is not a regular file",
            hint=f"remove {lock_path}; nbcli makes it again",
        )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _locked_as[path] = key
        _remove_stale_temporaries(folder, name)
        yield
    finally:
        _locked_as.pop(path, None)
        os.close(fd)


_cleaned: dict[str, float] = {}  # model file -> when this process last removed its stale temporaries
CLEAN_EVERY = 60.0  # seconds: a daemon takes the lock per TELL, and listing a folder of many models costs


def _remove_stale_temporaries(folder: str, name: str) -> None:
    import time

    now = time.monotonic()
    key = os.path.join(folder, name)
    if now - _cleaned.get(key, -CLEAN_EVERY) < CLEAN_EVERY:
        return
    _cleaned[key] = now
    prefix = f".{name}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for entry in names:
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            try:
                os.unlink(os.path.join(folder, entry))
            except OSError:
                pass


def _new_file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def special_kind(path: str) -> str | None:
    """What `path` is where it is there and is neither a regular file nor a
    folder ("a device", "a named pipe", "a socket"), else None. A writer
    renames a new file over its path: over /dev/null (as root) that would
    replace the device itself for every program on the machine."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else kind_of(mode)


def kind_of(mode: int) -> str:
    """What a file of `mode` that is neither a regular file nor a folder is."""
    return "a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"


def check_writable(path: str) -> None:
    """Refuse a model path that cannot be written: a folder, a device, pipe
    or socket (`special_kind`), or a file in a folder that does not exist
    (checked again when writing; commands check first, before reading their
    input)."""
    folder = os.path.dirname(target(path))
    if os.path.isdir(path):
        raise NbcliError(f"{path} is a folder", hint="give a file name for the model, such as model.nb")
    kind = special_kind(path)
    if kind is not None:
        raise NbcliError(f"{path} is {kind}, not a model file", hint="give a file name for the model, such as model.nb")
    if not os.path.isdir(folder):
        raise NbcliError(f"cannot write {path}: folder {folder} does not exist", hint="create it first")


def write_payload(payload: dict, path: str, checksum: bool = True) -> None:
    """Write `payload` to `path` atomically (temp file, fsync, rename),
    with its checksum computed afresh (checksum=False: with none, as nbcli
    wrote files before checksums; for tests)."""
    payload = with_checksum(payload) if checksum else {k: v for k, v in payload.items() if k != CHECKSUM_KEY}

    check_writable(path)
    resolved = target(path)
    try:
        with locked(path):
            replace_atomically(resolved, lambda fh: dump_payload(payload, fh), _new_file_mode(resolved))
    except OSError as exc:
        raise NbcliError(f"cannot write model file {path}: {exc.strerror}") from None


def replace_atomically(path: str, write, mode: int, prefix: str | None = None) -> None:
    """Replace the file `path` (no link) by what `write(fh)` writes: into a
    temporary file `.NAME.*.tmp` in its folder (`prefix`: another start of
    that name), flushed, fsynced, given `mode`, renamed over `path`, and the
    folder fsynced. Call it holding the lock of the model file it belongs to
    (`locked` removes what a killed writer left)."""
    kind = special_kind(path)
    if kind is not None:  # never renamed over: see `special_kind`
        raise OSError(errno.EINVAL, f"it is {kind}, not a file to replace")
    folder, name = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=prefix or f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_folder(folder)


def fsync_folder(folder: str) -> None:
    """Make a folder's entries (a file renamed or linked into it) durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
