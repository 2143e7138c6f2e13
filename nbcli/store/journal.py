"""A model's journal: the file `MODEL.journal` beside a model file, which
learn, forget and the daemon's TELL append their updates to instead of
writing the whole model again. This module is its bytes; what an update
holds is `nb.updates.Update`, and `modelfile` reads the model through it
(`load`), appends to it (`save(..., since=)`) and compacts it (`compact`).

The file:

    header   b"nbcli-journal 1 " + the base model file's checksum + b"\\n"; or, started anew
             at a checkpoint (`roll`), b"nbcli-journal 2 " + the checksum + b" " + START + b" " +
             BEFORE + b"\\n" (in decimal: where its first record stands among the journal's
             updates, and the update records before it)
    record   b"NBJR" | u64 length | u32 CRC-32 of the length's 8 bytes and the body | body
    body     u32 n | n bytes of JSON (the plain values, and the arrays' names, types, shapes) | the arrays' bytes

(little-endian). A record is appended with one write(2) and fsynced under
the model's lock (`integrity.locked`), so writers take turns.

Checkpoints: a record of magic b"NBJC" holds one update that stands for
every update before it (the terms they touched, as they left them, and
the record's net changes: `nb.overlay.JournalView.as_checkpoint`). A
reader starts at the last checkpoint: it steps over the records before it
by their lengths alone (a pread(2) of each 16-byte head: never their
bodies, never their checksums) and decodes the checkpoint and what follows
it, each in a buffer of its own: the checkpoint's arrays, which a view
keeps, point into its buffer alone, so the records after it are freed
once the view has merged them (a daemon's worker held 12 MB of dead records
at 1.41M terms with 1,000 updates). The checkpoint is mapped from the file
(`_mapped_checkpoint`), so that once the view is made the pages of what
scoring does not read leave the resident set (`release`): a bulk predict
through 1,000 updates at 1.41M terms, 187 -> 180 MB at its peak (a
worker's, which inherits the view). So reading a journal costs its last
checkpoint and the records after it, not its whole length; a writer
appends a checkpoint when the records after the last one reach half its
length (`journal_updates.CHECKPOINT_TAIL`, `CHECKPOINT_MIN_BYTES`), so
that is at most about one and a half checkpoints. A reader following the journal from
an end it has (`read`'s since) has every update a checkpoint stands for,
and skips it.

Rolls: the writer whose update makes a checkpoint due starts the journal
anew (`roll`): the update and the checkpoint under a header saying where
they stand, written aside and renamed over the journal. The journal on
disk is then its last checkpoint and the records after it, and positions
(`Snapshot.end`, `checkpoint`, a follower's since) count as if it had only
grown (`Snapshot.origin`), so a follower whose end is the update's start
reads on, and one whose end lies before it reads the journal whole (not
`following`: `modelfile.followed` then lays it over the model file's
classifier it holds). Read whole from its start (`read_records`), a
rolled journal begins at its checkpoint, the one copy of the updates
before it: damage in it leaves the model file alone as the last good
state.

A damaged checkpoint is damage like any record's; a reader
that meets damage after stepping over records reads the journal whole, so
that its error counts every good update. nbcli before checkpoints reports
a journal holding one as damaged (`nbcli compact` with the newer nbcli
folds it into the model).

Binding: the header names the checksum of the model file the records apply
to (`integrity.payload_checksum`, over everything in the file). A journal
whose header names another checksum belongs to a model that has since been
replaced, by a compaction or another writer: it is ignored, never applied,
and the next writer replaces it. Every full write of a model that has a
journal stores a random `journal_nonce` in the file (`modelfile.save`), so
no two bases share a checksum even if their counts agree.

Damage: a record cut short (kill -9 or a power cut part-way through an
append: its length runs past the end, or it is the last record and fails
its checksum, or the tail is zeros) is a torn tail, which readers ignore
and the next writer cuts off. A torn tail is a prefix of the last record
appended: it never holds a complete record after its start. So a record
whose length runs past the end (or that fails its checksum at the end)
with a complete record after its start (its magic, a length that fits,
its checksum right: `_record_after`) is corruption, not a torn tail: a
bit flipped in a length field, which would otherwise hide every good
record after it and have the next writer cut them off. A record that
fails its checksum with more records after it, or that is not a record at
all, is corruption too: readers stop with a one-line error naming the
journal (`JournalError`), and `nbcli compact MODEL --drop-bad-tail` keeps
the updates before it. A record whose checksum is right but whose content
is not an update that fits the model is damage too
(`store.journal_records`).

The journal must be a regular file (or a link to one): a named pipe there
would block every reader's open, a device (a link to /dev/zero) would be
read without end. Every open of it (`_opened`) refuses anything else with
a one-line error naming it, without blocking.
"""

from __future__ import annotations

import errno
import json
import math
import mmap
import os
import re
import secrets
import stat
import struct
import zlib

import numpy as np

from nbcli.errors import ModelFileError
from nbcli.store.integrity import kind_of, replace_atomically, target

SUFFIX = ".journal"
_MAGIC = b"nbcli-journal 1 "
_ROLLED = b"nbcli-journal 2 "  # a journal started anew at a checkpoint (`roll`): nbcli before it reports it damaged
_RECORD = b"NBJR"
_CHECKPOINT = b"NBJC"
_HEAD = struct.Struct("<4sQI")  # record magic, body length, CRC-32
_HEADS = re.compile(re.escape(_RECORD) + b"|" + re.escape(_CHECKPOINT))  # where a record may start
_DTYPES = {name: np.dtype(name) for name in ("<u8", "<i8", "<f8", "<i4", "|u1")}  # parsed once, not per array
_MAX_BODY = 1 << 34


class JournalError(ModelFileError):
    """A journal that is not what nbcli wrote: where, and how many good
    updates come before the damage (`good`)."""

    def __init__(self, message: str, hint: str | None = None, good: int = 0):
        super().__init__(message, hint=hint)
        self.good = good


def path_of(model: str) -> str:
    """The journal of model file `model` (beside the file a link points to)."""
    return target(model) + SUFFIX


def stamp(model: str) -> tuple | None:
    """What changes when the journal of `model` changes (appended to,
    replaced, removed): None when there is none."""
    try:
        st = os.stat(path_of(model))
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def new_nonce() -> str:
    return secrets.token_hex(16)


def header(base: str, start: int = 0, before: int = 0) -> bytes:
    """The header of a journal bound to `base`; start: of a rolled one
    (`roll`), the position its first record has in the journal's updates
    (the byte offset it would have had, had the journal never been rolled),
    and before: how many update records came before it."""
    if not start:
        return _MAGIC + base.encode("ascii") + b"\n"
    return _ROLLED + f"{base} {start} {before}".encode("ascii") + b"\n"


def is_header(first: bytes) -> bool:
    """Whether a file's first bytes start a journal's header (`header`)."""
    return first.startswith(_MAGIC) or first.startswith(_ROLLED)


def _header_of(line: bytes) -> tuple[str, int, int] | None:
    """(base, origin, before) of a header's line (its newline left off):
    origin, what to add to a byte offset of the file to have its position
    in the journal's updates (0 but for a rolled journal); before, the
    update records before its first. None: not a header nbcli writes."""
    try:
        if line.startswith(_MAGIC):
            return line[len(_MAGIC) :].decode("ascii"), 0, 0
        fields = line[len(_ROLLED) :].decode("ascii").split(" ") if line.startswith(_ROLLED) else []
        if len(fields) == 3 and fields[1].isdigit() and fields[2].isdigit() and int(fields[1]) > len(line):
            return fields[0], int(fields[1]) - len(line) - 1, int(fields[2])
    except (UnicodeDecodeError, ValueError):
        pass
    return None


class Snapshot:
    """The journal as one read found it: the base it is bound to (None: no
    journal), the records' bodies, the byte offset where the good records
    end (`end`), its size, and the damage found (`torn`: a torn tail;
    `problem`: corruption, what and where)."""

    def __init__(
        self,
        model: str,
        data: bytes | bytearray | None,
        skipped: int = 0,
        following: bool = False,
        stepped: int = 0,
        rest: list | None = None,
        gap: int = 0,
        whole: bool = False,
    ):
        self.model = model
        self.path = path_of(model)
        self.base: str | None = None
        self.bodies: list[memoryview] = []
        self.end = 0
        self.skipped = skipped  # bytes of records after the header not in `data` (`read`'s since, or stepped over)
        self.size = 0 if data is None else len(data) + skipped + sum(len(part) for part in rest or [])
        self.torn = False
        self.problem: str | None = None
        self.rolled = False  # a journal started anew at a checkpoint (`roll`)
        # following (`read`'s since): checkpoints are skipped, not started from
        self.following = following
        # following, but read from the start (`read_records`): a rolled journal starts at its checkpoint
        self.whole = whole
        self.origin = 0  # what to add to a byte offset in the file to have its position (`end`'s, `checkpoint`'s)
        self.updates = stepped  # update records in the journal up to `end` (checkpoints not counted)
        self.checkpoint: tuple[int, int] | None = None  # (byte offset, length) of the last checkpoint seen
        self.starts_with_checkpoint = False  # bodies[0] is a checkpoint, standing for every update before it
        self.stands_for = 1  # the updates bodies[0] stands for (a checkpoint: those before it)
        if data is not None:
            self._parse(data, rest, gap)

    def _parse(self, data: bytes | bytearray, rest: list | None = None, gap: int = 0) -> None:
        """Parse the header and the records of `data` (`gap` filler bytes
        between them, not the journal's: `skipped` counts them out), then
        those of each buffer of `rest` in turn (the journal's bytes after
        `data`'s, in buffers of their own: `read`'s from a checkpoint, so
        that the records after it can be freed once decoded while the
        checkpoint's arrays, which a view keeps, point into the
        checkpoint's buffer alone: `data`, or the checkpoint mapped from
        the file, `rest[0]`)."""
        stop = data.find(b"\n", 0, 200)
        if not is_header(bytes(data[: len(_MAGIC)])) or stop < 0:
            if _MAGIC.startswith(data[: len(_MAGIC)]) and stop < 0 and len(data) < 200:
                self.torn = True  # a header cut short: a journal never written to (a rolled one is renamed in whole)
                return
            self.problem = "it is not an nbcli journal"
            return
        parsed = _header_of(bytes(data[:stop]))
        if parsed is None:
            self.problem = "its header is damaged"
            return
        self.base, self.origin, before = parsed
        self.rolled = data.startswith(_ROLLED)
        if not self.following or self.whole:
            self.updates += before
        self._parse_records(data, stop + 1 + gap, rest)
        self.end += self.origin  # positions in the journal's updates, which a rolled journal keeps counting
        if self.checkpoint is not None:
            self.checkpoint = (self.checkpoint[0] + self.origin, self.checkpoint[1])

    def _parse_records(self, data: bytes | bytearray, pos: int, rest: list | None) -> None:
        self.end = pos + self.skipped
        parts = rest or []
        good = self._records(data, pos, self.skipped, not parts)
        shift = self.skipped + len(data)
        for i, part in enumerate(parts):
            if not good or not len(part):
                break
            good = self._records(part, 0, shift, i == len(parts) - 1)
            shift += len(part)

    def _records(self, data: bytes | bytearray, pos: int, shift: int, last: bool) -> bool:
        """Parse the records of `data` from `pos` (byte `pos + shift` of the
        journal); last: `data` ends where the journal read ends (a record cut
        short or failing its checksum there is a torn tail). Whether every
        record was good to the end of `data`."""
        view = memoryview(data)
        while pos < len(data):  # no slice of the rest per record: linear in the journal
            if len(data) - pos < _HEAD.size:
                self.torn = True
                return False
            magic, length, crc = _HEAD.unpack_from(data, pos)
            body_end = pos + _HEAD.size + length
            if magic != _RECORD and magic != _CHECKPOINT:
                if last and not bytes(view[pos:]).strip(b"\0"):  # zeros to the end: a torn tail
                    self.torn = True
                else:
                    self.problem = f"byte {pos + shift} does not start an update"
                return False
            if body_end > len(data):
                self._cut_short(data, pos, shift, "runs past the end of the journal")
                return False
            body = view[pos + _HEAD.size : body_end]  # no copy: the arrays decoded from it point into `data`
            if zlib.crc32(body, zlib.crc32(view[pos + 4 : pos + 12])) != crc:
                if body_end == len(data) and last:
                    self._cut_short(data, pos, shift, "fails its checksum")
                else:
                    self.problem = f"the update at byte {pos + shift} fails its checksum"
                return False
            if magic == _CHECKPOINT:
                self.checkpoint = (pos + shift, body_end - pos)
                # it stands for every update before it (read whole, a rolled journal's first: the rest are gone)
                if not self.following or (self.whole and self.rolled and not self.starts_with_checkpoint):
                    self.bodies, self.starts_with_checkpoint, self.stands_for = [body], True, self.updates
            else:
                # not a rolled journal's first update (its checkpoint has it), but to a follower
                if not self.rolled or self.starts_with_checkpoint or (self.following and not self.whole):
                    self.bodies.append(body)
                self.updates += 1
            pos = body_end
            self.end = pos + shift
        return True

    def _cut_short(self, data: bytes | bytearray, pos: int, shift: int, what: str) -> None:
        """The record at `pos` of `data` (byte `pos + shift` of the journal)
        is cut short by the end of `data`: a torn tail, unless a complete
        record starts after it (`_record_after`), which no torn tail holds:
        then it is damage (a bit flipped in its length), `what` it is."""
        after = _record_after(data, pos + 1)
        if after is None:
            self.torn = True
        else:
            self.problem = f"the update at byte {pos + shift} {what}, and a good one at byte {after + shift} follows"

    def bound_to(self, base: str | None) -> bool:
        """Whether the records apply to a model file of checksum `base`."""
        return base is not None and self.base == base

    def error(self) -> JournalError:
        good = 0 if self.rolled and self.checkpoint is None else self.updates  # damaged at or before its only copy
        return JournalError(f"{self.path} is corrupt ({self.problem})", hint=self.recovery_hint(good), good=good)

    def recovery_hint(self, good: int | None) -> str:
        """How to read the model again past damage after `good` updates
        (None: after an unknown number of good ones)."""
        kept = "the good updates" if good is None else f"the {good} update(s)"
        return (
            f"'nbcli compact {self.model} --drop-bad-tail' keeps {kept} before it "
            f"(or move {self.path} away to read the model without its updates)"
        )


def _record_after(data: bytes | bytearray, start: int) -> int | None:
    """The offset of the first complete record in `data` at or after
    `start` (its magic, a length that fits in `data`, its checksum right),
    or None. Only on a record cut short (a torn tail, or damage), never on
    a good journal's path. Linear in the bytes after `start` whatever they
    are: the checksums verified cover at most twice those bytes in all (a
    head whose record would take more than is left of that is passed over),
    enough for a head that happens to lie inside the damaged record's own
    bytes and the good record after it, however long each is."""
    if not isinstance(data, (bytes, bytearray)):
        data = bytes(data)  # (a mapped checkpoint is a memoryview; never the last part in practice)
    view = memoryview(data)
    budget = 2 * max(0, len(data) - start)
    for found in _HEADS.finditer(data, start):
        at = found.start()
        if len(data) - at < _HEAD.size:
            break
        _, length, crc = _HEAD.unpack_from(data, at)
        end = at + _HEAD.size + length
        if end > len(data) or length + 8 > budget:
            continue
        budget -= length + 8
        if zlib.crc32(view[at + _HEAD.size : end], zlib.crc32(view[at + 4 : at + 12])) == crc:
            return at
    return None


def _opened(path: str, flags: int) -> int:
    """A descriptor of the journal `path` opened with `flags`, a regular
    file (or a link to one): anything else there is a one-line error naming
    it (ModelFileError), found without blocking (O_NONBLOCK: opening a named
    pipe waits for its other end). A folder is IsADirectoryError, which the
    callers report as a file they cannot read or write; no file at all,
    FileNotFoundError."""
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # a named pipe opened to write with no reader (or a device gone)
            raise
        mode = os.stat(path).st_mode
    else:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            return fd
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    raise ModelFileError(
        f"{path} is {kind_of(mode)}, not a journal",
        hint="move it away: nbcli keeps a model's updates in a regular file of that name",
    )


def _open_for_reading(model: str):
    return os.fdopen(_opened(path_of(model), os.O_RDONLY), "rb")


def read(model: str, since: tuple[str, int] | None = None, mapped: bool = True) -> Snapshot:
    """The journal of `model` as it is now (a Snapshot; read it before the
    model file: see `modelfile.load`). since (base, end): only what follows
    byte `end` of a journal bound to `base` that was read before, so that a
    writer checking for updates made meanwhile, or the daemon following its
    journal, reads the new records, not the whole journal (its `bodies` are
    those; `end` and positions count from the start of the file). A journal
    no longer bound to `base` is read whole. mapped False: the checkpoint
    read into memory, never mapped (`_mapped_checkpoint`; a reader that
    must not touch a mapping of a file someone may rewrite in place, as
    `read_payload`'s copy)."""
    try:
        with _open_for_reading(model) as fh:
            if since is not None and since[1] > 0:
                start = fh.read(200)
                stop = start.find(b"\n")
                bound = _header_of(start[:stop]) if stop > 0 else None
                at = since[1] - bound[1] if bound is not None and bound[0] == since[0] else -1  # its byte offset
                if stop < at <= os.fstat(fh.fileno()).st_size:
                    head = start[: stop + 1]
                    tail = Snapshot(model, _read_after(fh, head, at), at - len(head), following=True)
                    if tail.problem is None:
                        return tail
                # damage, or rolled past `end` (`roll`): read whole, which a follower reads again from
                # (`modelfile.followed`: not `following`), and whose error counts every good update
                fh.seek(0)
            else:
                start = fh.read(200)
                stop = start.find(b"\n")
                if is_header(start) and stop > 0:
                    at, stepped = _last_checkpoint(fh.fileno(), stop + 1)
                    if at > stop + 1:  # from the last checkpoint: the records before it stepped over
                        parts = _mapped_checkpoint(fh, at) if mapped else None
                        if parts is not None:
                            found = Snapshot(model, start[: stop + 1], at - stop - 1, stepped=stepped, rest=parts)
                        else:
                            first, rest, gap = _read_checkpoint(fh, start[: stop + 1], at)
                            parts = None if rest is None else [rest]
                            found = Snapshot(model, first, at - stop - 1 - gap, stepped=stepped, rest=parts, gap=gap)
                        if found.problem is None:
                            return found
                fh.seek(0)  # none, or damage: read whole, so that its error counts every good update
            data = fh.read()
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path_of(model)}: {exc.strerror}") from None
    return Snapshot(model, data)


def read_records(model: str) -> Snapshot:
    """The journal of `model` read whole, its `bodies` every update record
    up to the first damage (the checkpoints left out: the records each
    stands for are there; but a rolled journal's first, which stands for
    records no longer there, is its first body): what `nbcli compact
    --drop-bad-tail` keeps."""
    try:
        with _open_for_reading(model) as fh:
            return Snapshot(model, fh.read(), following=True, whole=True)
    except FileNotFoundError:
        return Snapshot(model, None)
    except OSError as exc:
        raise ModelFileError(f"cannot read {path_of(model)}: {exc.strerror}") from None


def _read_after(fh, head: bytes, at: int) -> bytearray:
    """`head` followed by the file's bytes from offset `at` on, read into
    one buffer (no second copy of what may be megabytes of records)."""
    size = os.fstat(fh.fileno()).st_size
    data = bytearray(len(head) + max(0, size - at))
    data[: len(head)] = head
    fh.seek(at)
    got = fh.readinto(memoryview(data)[len(head) :])
    del data[len(head) + (got or 0) :]  # a journal cut short meanwhile: what was there
    return data


def _mapped_checkpoint(fh, at: int) -> list | None:
    """[the checkpoint record at offset `at`, mapped from the file (a
    memoryview); the records after it, read into a buffer of their own],
    or None where the checkpoint cannot be mapped (cut short since its head
    was read, or no mmap here): then `_read_checkpoint`. Mapped, its pages
    are the page cache's: once a view is made of it, the pages of what
    scoring does not read (the terms' texts, last-seen days, the tables
    other than the weights' source) are released (`release`) and come back
    from the file where something reads them, as a model file's are. The
    file is never cut below a good record (`append` cuts a torn tail only;
    a compaction renames and unlinks), so the mapping stays readable."""
    fd = fh.fileno()
    raw = os.pread(fd, _HEAD.size, at)
    if len(raw) < _HEAD.size:
        return None
    _, length, _ = _HEAD.unpack(raw)
    size = os.fstat(fd).st_size
    end = at + _HEAD.size + length
    if end > size:
        return None
    start = at - at % mmap.ALLOCATIONGRANULARITY
    try:
        mapped = mmap.mmap(fd, end - start, access=mmap.ACCESS_READ, offset=start)
    except (OSError, ValueError, OverflowError):
        return None
    return [memoryview(mapped)[at - start :], _read_after(fh, b"", end)]


def release(snapshot: Snapshot) -> None:
    """Release the resident pages of the checkpoint `snapshot` mapped
    (`_mapped_checkpoint`), now that a view has been made of it: what it
    reads comes back from the page cache, the rest no longer counts in the
    process's resident set (the checksum's pass read every page)."""
    for body in snapshot.bodies[:1] if snapshot.starts_with_checkpoint else []:
        owner = body.obj
        if isinstance(owner, mmap.mmap) and not owner.closed and hasattr(mmap, "MADV_DONTNEED"):
            owner.madvise(mmap.MADV_DONTNEED)


def _read_checkpoint(fh, head: bytes, at: int) -> tuple[bytearray, bytearray | None, int]:
    """(`head`, `gap` filler bytes and the checkpoint at offset `at`; the
    records after it; gap), each read into a buffer of its own (see
    `Snapshot._parse`), the checkpoint at an 8-aligned address. None for
    the second where the first came up short (a journal cut short
    meanwhile: what was there, parsed as a torn tail)."""
    raw = os.pread(fh.fileno(), _HEAD.size, at)
    if len(raw) < _HEAD.size:  # cut short since its head was read
        return _read_after(fh, head, at), None, 0
    _, length, _ = _HEAD.unpack(raw)
    size = os.fstat(fh.fileno()).st_size
    end = min(size, at + _HEAD.size + length)
    first = bytearray(len(head) + 7 + max(0, end - at))
    gap = -(np.frombuffer(first, np.uint8).ctypes.data + len(head)) % 8  # the record 8-aligned (see `encode`)
    first[: len(head)] = head
    fh.seek(at)
    got = fh.readinto(memoryview(first)[len(head) + gap : len(head) + gap + end - at]) or 0
    del first[len(head) + gap + got :]  # at most 7 bytes: not reallocated (the alignment is for speed only)
    if got < end - at or end < at + _HEAD.size + length:
        return first, None, gap
    return first, _read_after(fh, b"", end), gap


def _last_checkpoint(fd: int, pos: int) -> tuple[int, int]:
    """(the byte offset of the last checkpoint whose record fits in the
    file, else `pos`; the update records before it), stepping from `pos`
    over the records' heads alone. Stops at anything that is not a
    record's head: the parse from the offset returned meets it."""
    size = os.fstat(fd).st_size
    found, updates, seen = pos, 0, 0
    while pos + _HEAD.size <= size:
        head = os.pread(fd, _HEAD.size, pos)
        if len(head) < _HEAD.size:
            break
        magic, length, _ = _HEAD.unpack(head)
        end = pos + _HEAD.size + length
        if magic not in (_RECORD, _CHECKPOINT) or end > size:
            break
        if magic == _CHECKPOINT:
            found, updates = pos, seen
        else:
            seen += 1
        pos = end
    return found, updates


def encode(plain: dict, arrays: dict[str, np.ndarray], checkpoint: bool = False) -> bytes:
    """One record (checkpoint: a checkpoint record): plain values (JSON) and arrays."""
    # widest items first, and the JSON text padded with spaces (which JSON ignores) to a multiple of
    # 8 bytes from the record's start: every array then starts 8-aligned within the record (each
    # array before the byte arrays is a multiple of 8 bytes long, or of 4 before the 4-byte ones),
    # and a reader that places a record 8-aligned (`_read_checkpoint`) decodes aligned arrays in
    # place; a search or gather over an unaligned copy of a checkpoint's hashes took twice as long.
    # Records written before this decode the same (the order and the padding are the record's own).
    body = _body(plain, arrays)
    length = struct.pack("<Q", len(body))
    magic = _CHECKPOINT if checkpoint else _RECORD
    return magic + length + struct.pack("<I", zlib.crc32(body, zlib.crc32(length))) + body


def _body(plain: dict, arrays: dict[str, np.ndarray]) -> bytes:
    specs, chunks = [], []
    for name, array in sorted(arrays.items(), key=lambda item: -item[1].dtype.itemsize):
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        specs.append([name, array.dtype.str, list(array.shape)])
        chunks.append(array.tobytes())
    text = json.dumps({**plain, "arrays": specs}, sort_keys=True, allow_nan=False).encode("ascii")
    text += b" " * (-(_HEAD.size + 4 + len(text)) % 8)
    return struct.pack("<I", len(text)) + text + b"".join(chunks)


PACKED_RATIO = 64  # packed parts are at most this many times their compressed bytes (and 64 KB): reading stays linear


def packed(parts: list[bytes]) -> bytes | None:
    """Byte strings one after another, compressed (zlib), to be held in a
    record's array (`nb.deltas.Delta`'s records, whose plain values say
    how long each part is); None where they would expand past what
    `unpacked` accepts."""
    data = zlib.compress(b"".join(parts), 1)  # level 1: 5% more bytes than 6, a third of the time (a TELL waits for it)
    return data if sum(len(p) for p in parts) <= PACKED_RATIO * len(data) + (64 << 10) else None


def unpacked(data: bytes | memoryview, sizes: list[int]) -> list[bytes]:
    """The parts of a `packed` array, of the byte lengths `sizes`; ValueError
    if it is not one, or if they add up past PACKED_RATIO times its bytes
    (a crafted record: never more memory than that for reading it)."""
    total = sum(sizes)
    if total > PACKED_RATIO * len(data) + (64 << 10):
        raise ValueError("packed parts too long for their bytes")
    inflate = zlib.decompressobj()
    try:
        whole = inflate.decompress(bytes(data), total + 1)
    except zlib.error:
        raise ValueError("packed parts that do not inflate") from None
    if len(whole) != total or not inflate.eof or inflate.unconsumed_tail or inflate.unused_data:
        raise ValueError("packed parts too long or cut short")
    out, at = [], 0
    for size in sizes:
        out.append(whole[at : at + size])
        at += size
    return out


def decode(body: bytes | memoryview) -> tuple[dict, dict[str, np.ndarray]]:
    """(plain values, arrays) of a record's body; ValueError if it is not one."""
    if len(body) < 4:
        raise ValueError("a record too short")
    (n,) = struct.unpack_from("<I", body)
    try:
        plain = json.loads(bytes(body[4 : 4 + n]).decode("ascii"))
    except RecursionError:  # arrays nested deeper than JSON's parser goes: not what nbcli writes
        raise ValueError("a head nested too deep") from None
    if not isinstance(plain, dict) or not isinstance(plain.get("arrays"), list):
        raise ValueError("a record without arrays")
    pos, arrays, end = 4 + n, {}, len(body)
    for spec in plain.pop("arrays"):
        if not (isinstance(spec, list) and len(spec) == 3 and isinstance(spec[2], list)):
            raise ValueError("a bad array")
        name, dtype, shape = spec
        if not (isinstance(dtype, str) and dtype in _DTYPES):  # a list there is not even hashable
            raise ValueError("a bad array")
        if len(shape) > 2 or not all(type(d) is int and 0 <= d < _MAX_BODY for d in shape):
            raise ValueError(f"a bad shape of {name}")
        dtype = _DTYPES[dtype]
        count = math.prod(shape)
        size = count * dtype.itemsize
        if pos + size > end:
            raise ValueError(f"{name} runs past the record")
        array = np.frombuffer(body, dtype=dtype, count=count, offset=pos)
        arrays[str(name)] = array if len(shape) == 1 else array.reshape(shape)
        pos += size
    if pos != len(body):
        raise ValueError("bytes after the arrays")
    return plain, arrays


def append(snapshot: Snapshot, base: str, record: bytes) -> tuple[int, int]:
    """Append `record` to the journal of `snapshot.model`, bound to the
    model file of checksum `base`: under the model's lock, with `snapshot`
    read under it. A journal bound to another base (or none) is replaced
    by a fresh one first (written aside, fsynced and renamed); a torn tail
    is cut off. Returns (the journal's end after, as `Snapshot.end`
    counts; its size in bytes)."""
    jpath = snapshot.path
    if snapshot.problem is not None:
        raise snapshot.error()
    if not snapshot.bound_to(base):
        model = target(snapshot.model)
        mode = os.stat(model).st_mode & 0o666  # readable by whoever reads the model
        prefix = f".{os.path.basename(model)}.journal-"  # what `integrity.locked` tidies up after a kill
        replace_atomically(jpath, lambda fh: fh.write(header(base)), mode, prefix)
        end, origin = len(header(base)), 0
    else:
        end, origin = snapshot.end - snapshot.origin, snapshot.origin
    fd = _opened(jpath, os.O_WRONLY)
    try:
        if os.fstat(fd).st_size != end:
            os.ftruncate(fd, end)  # a torn tail: what a killed writer left
        _write_at(fd, end, record)
        return origin + end + len(record), end + len(record)
    finally:
        os.close(fd)


def _write_at(fd: int, at: int, record: bytes) -> None:
    """Write `record` at byte `at` of the journal open as `fd`, whole, and fsync it."""
    os.lseek(fd, at, os.SEEK_SET)
    view = memoryview(record)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def append_at(model: str, base: str, end: int, record: bytes) -> tuple[int, int] | None:
    """`append`'s, where the journal of `model` is still as a reader left
    it: bound to `base` and ending at `end` (nothing appended since, no
    torn tail), found by its header and size alone, in one open: the usual
    case of a writer holding the model's lock (a spamd TELL: reading the
    journal's tail first took 0.1 ms). None where it is not so (no journal,
    another binding, records or a torn tail after `end`): `read` it from
    `end` and `append`, which see what it is."""
    try:
        fd = _opened(path_of(model), os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        first = os.pread(fd, 200, 0)
        stop = first.find(b"\n")
        found = _header_of(first[:stop]) if stop > 0 else None
        if found is None or found[0] != base or size != end - found[1] or size <= stop:
            return None
        _write_at(fd, size, record)
        return end + len(record), size + len(record)
    finally:
        os.close(fd)


def roll(snapshot: Snapshot, base: str, record: bytes, checkpoint: bytes) -> tuple[int, int]:
    """`append`'s, for an update `record` followed by the `checkpoint` it
    makes due: the journal started anew with them (written aside, fsynced
    and renamed over it, under the model's lock), its header saying where
    its first record stands in the journal's updates and how many update
    records came before it (`header`), so that what every reader holds of
    the journal (`Snapshot.end`) keeps its meaning: a follower that has
    read up to the update reads on from it, one that had not reads the
    journal whole (`modelfile.followed`). The records the checkpoint stands for are no longer on
    disk (a journal is its last checkpoint and the records after it,
    whatever its length); a crash before the rename leaves the journal as
    it was, without the update."""
    if snapshot.problem is not None:
        raise snapshot.error()
    if not snapshot.bound_to(base) or snapshot.end <= len(header(base)):
        return append(snapshot, base, record + checkpoint)
    jpath = snapshot.path
    with _open_for_reading(snapshot.model) as fh:  # the update records before the record: the new header counts them
        first = fh.read(200)
        stop = first.find(b"\n")
        found = _header_of(first[:stop])
        if found is None:
            raise ModelFileError(f"{jpath} changed under the model's lock", hint="run the command again")
        before = found[2] + _records_between(fh.fileno(), stop + 1, snapshot.end - found[1])
    head = header(base, snapshot.end, before)
    if snapshot.end <= len(head):  # (never: a record is longer than the numbers the header gains)
        return append(snapshot, base, record + checkpoint)
    model = target(snapshot.model)
    mode = os.stat(model).st_mode & 0o666
    replace_atomically(
        jpath,
        lambda fh: [fh.write(part) for part in (head, record, checkpoint)],
        mode,
        f".{os.path.basename(model)}.journal-",
    )
    return snapshot.end + len(record) + len(checkpoint), len(head) + len(record) + len(checkpoint)


def _records_between(fd: int, pos: int, end: int) -> int:
    """The update records from byte `pos` to byte `end` of the file, stepping over their heads."""
    count = 0
    while pos + _HEAD.size <= end:
        raw = os.pread(fd, _HEAD.size, pos)
        if len(raw) < _HEAD.size:
            break
        magic, length, _ = _HEAD.unpack(raw)
        count += magic == _RECORD
        pos += _HEAD.size + length
    return count


def remove(model: str) -> None:
    """Remove the journal of `model` (it was compacted into the model file,
    whose new checksum already disowns it: this only tidies up)."""
    try:
        os.unlink(path_of(model))
    except FileNotFoundError:
        pass
