"""What identifies a learned document: its content digest, Message-ID and date.

No I/O. Used by the record of learned messages (`record`), by `eval
--online --order date`, and by `prune --unseen-since`.

- The content digest of a document is a 128-bit BLAKE2b digest of its
  term hashes in reading order (the analyzer's output). It is therefore a
  digest of exactly what learning the document adds to the counts: two
  inputs with the same digest contribute the same counts, so forgetting by
  digest is always the exact inverse of learning. And it
  ignores what the analyzer ignores: the `X-NB-Class` header `nbcli filter`
  adds, a mail client's Status flags, a From_ line, line endings.
- The Message-ID and Date are read from the header block only (at most
  HEADER_BYTES of it, one linear scan), so a crafted message costs no more
  here than its first 64 KB.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

HEADER_BYTES = 1 << 16
_FIELD = re.compile(rb"(?im)^(message-id|date)[ \t]*:[ \t]*([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)")
_ID_TEXT = re.compile(r"<([^<>\s]{1,500})>|(\S{1,500})")


def header_block(raw: bytes) -> bytes:
    """The header block of a message (up to the first empty line), at most
    HEADER_BYTES of it."""
    head = raw[:HEADER_BYTES]
    end = len(head)
    for sep in (b"\n\n", b"\n\r\n"):
        i = head.find(sep)
        if 0 <= i < end:
            end = i + 1
    return head[:end]


def message_fields(raw) -> tuple[str | None, float | None]:
    """(Message-ID without its angle brackets, Date as POSIX seconds) of a
    message, each None when absent or unreadable; (None, None) for text
    that is not bytes."""
    if not isinstance(raw, (bytes, bytearray)):
        return None, None
    message_id = date = None
    for name, value in _FIELD.findall(header_block(bytes(raw))):
        text = re.sub(r"\s+", " ", value.decode("ascii", "replace")).strip()
        if name.lower() == b"message-id" and message_id is None:
            found = _ID_TEXT.search(text)
            if found:
                message_id = found.group(1) or found.group(2)
        elif name.lower() == b"date" and date is None:
            date = parse_date(text)
    return message_id, date


def parse_date(text: str) -> float | None:
    """POSIX seconds of an RFC 5322 date ('Tue, 20 Aug 2002 10:21:23 +0100'),
    or None. A date without a zone is read as UTC."""
    import datetime
    from email.utils import parsedate_tz

    if len(text) > 200:
        return None
    try:
        parts = parsedate_tz(text)
        if parts is None:
            return None
        offset = parts[9] or 0
        when = datetime.datetime(*parts[:6], tzinfo=datetime.UTC)
        return when.timestamp() - offset
    except (ValueError, OverflowError, TypeError, IndexError):
        return None


def message_id_hash(message_id: str | None) -> int:
    """A 64-bit hash of a Message-ID (0 for none)."""
    if not message_id:
        return 0
    digest = hashlib.blake2b(message_id.encode("utf-8", "surrogateescape"), digest_size=8).digest()
    return int.from_bytes(digest, "little") or 1


def digests(hashes: np.ndarray, doc_ptr: np.ndarray) -> np.ndarray:
    """The content digest of each document of a token batch: (n_docs, 2)
    uint64, BLAKE2b-128 of its term hashes in reading order (little-endian).
    The analyzer is deterministic, so the same document always gives the
    same sequence; no sorting is needed (it cost a tenth of training)."""
    n_docs = len(doc_ptr) - 1
    out = np.empty((n_docs, 2), dtype=np.uint64)
    raw = np.ascontiguousarray(hashes, dtype="<u8").tobytes()
    starts = (np.asarray(doc_ptr, dtype=np.int64) * 8).tolist()
    blake2b = hashlib.blake2b
    for i in range(n_docs):
        out[i] = np.frombuffer(blake2b(raw[starts[i] : starts[i + 1]], digest_size=16).digest(), dtype="<u8")
    return out


def date_order(dates: list[float | None]) -> np.ndarray:
    """The order in which `eval --online --order date` takes documents: by
    date, ties and documents without a date in input order; a document
    without a date takes the date of the nearest dated one before it in
    the input (or stays first), so it keeps its place among its
    neighbours."""
    keyed = np.empty(len(dates), dtype=np.float64)
    last = -np.inf
    for i, when in enumerate(dates):
        if when is not None:
            last = when
        keyed[i] = last
    return np.argsort(keyed, kind="stable")


def run_time() -> int:
    """The date given to documents without one: now, or SOURCE_DATE_EPOCH
    when set to a number of seconds (the reproducible-builds convention:
    two trainings of a corpus with dateless documents then write the same
    arrays)."""
    import os
    import time

    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit() and int(epoch) < 1 << 40:
        return int(epoch)
    return int(time.time())


def document_entries(batch, datas: list, now: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(digests (n, 2), Message-ID hashes (n,), dates (n,) POSIX seconds) of
    the documents of a token batch, given their data; a document without a
    readable Date gets `now` (default: `run_time()`)."""
    now = run_time() if now is None else now
    message_ids = np.zeros(len(datas), dtype=np.uint64)
    when = np.full(len(datas), now, dtype=np.int64)
    for i, data in enumerate(datas):
        message_id, date = message_fields(data)
        if message_id is not None:
            message_ids[i] = message_id_hash(message_id)
        if date is not None and 0 <= date < 1 << 40:
            when[i] = int(date)
    return digests(batch.hashes, batch.doc_ptr), message_ids, when
