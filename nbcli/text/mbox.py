"""Cutting mail streams into messages: the mbox rule, in one place.

Pure bytes in, bytes out; no files are opened here (see `sources` for
reading inputs and `filtering` for writing mboxes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

# -- cutting mail streams into messages -----------------------------------------
#
# One cutter, `mbox_entries`, cuts every mbox nbcli reads (predict, train,
# eval, filter, files read whole or streamed). The rule, as mutt's and
# Python's mailbox readers apply it, made strict:
#
# - a new message starts at a line beginning "From " that is at the start of
#   the stream or follows a blank line ("\n" or "\r\n"), AND looks like a
#   From_ line: "From", an optional sender (quoted or not), then a date —
#   weekday, month, day, time, an optional time zone, year — e.g.
#   `From sender@host Mon Jan  1 00:00:00 2024`, `From - Tue Mar  3 ...`,
#   or the `From MAILER-DAEMON ...` lines nbcli writes itself. Only the
#   first 1,024 bytes of a line are looked at;
# - every other line stays in the message it is in: a body line "From here
#   on..." (not a From_ line), a From_ line not after a blank line, and
#   mboxo/mboxrd quoted ">From " lines (which nbcli never unquotes);
# - an input is an mbox (without --input-format mbox) if it starts with a
#   From_ line;
# - the entries are cut exactly: joined together they give back the stream
#   byte for byte (the blank line before a From_ line ends the message
#   before it);
# - an input holding a single entry is one message with the input's path as
#   its id; several are PATH:1, PATH:2, ...
#
# The cutter is linear in its input: one regular-expression search (starting
# with a literal line end, so the engine scans for it in C) finds a blank
# line followed by a From_ line, each check reading at most _FROM_SPAN bytes
# of that line; it searches on from where it stopped and never rescans
# (see `mbox_entries`); it holds one message plus what the last read
# returned. Reads are partial (one system call each), so a message
# on a pipe is passed on as soon as the next From_ line (or the end) comes.

_FROM_SPAN = 1024
_DAY = rb"(?i:mon|tue|wed|thu|fri|sat|sun)"
_MONTH = rb"(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
# Alternatives in each repetition are disjoint, so a failed match backtracks
# over each byte at most once; no repetition is longer than _FROM_SPAN.
_FROM = (
    rb"From [ \t]{0,1024}"
    # sender
    rb"(?:(?:[^\s\"\\]|\\.|\"(?:[^\"\\\r\n]|\\.){0,1024}\"){1,1024}[ \t]{1,1024}"
    rb"(?:at[ \t]{1,1024}\S{1,1024}[ \t]{1,1024})?)?"
    + _DAY
    + rb"\S{0,1024}[ \t]{1,1024}"
    + _MONTH
    + rb"\S{0,1024}[ \t]{1,1024}\d{1,2}[ \t]{1,1024}\d{1,2}:\d\d(?::\d\d)?[ \t]{1,1024}"  # day and time
    # time zone (up to two words), year
    rb"(?:[a-zA-Z+-]\S{0,1024}[ \t]{1,1024}(?:[a-zA-Z]\S{0,1024}[ \t]{1,1024})?)?\d{1,1024}"
)
_FROM_LINE = re.compile(_FROM)
# A blank line and a From_ line after it, found by one C-level search (its
# literal "\n" prefix keeps the scan fast); is_from_line confirms a hit.
_BOUNDARY = re.compile(rb"\n\r?\n(?=" + _FROM + rb")")


# What `partial_reader` asks for per read: a message on a pipe is passed on
# as soon as it is complete, and a big file is still read in few calls.
_READ_CHUNK = 1 << 20


def partial_reader(fh) -> Callable[[], bytes]:
    """read() for a stream, as `mbox_entries` takes it: one system call's
    worth (read1 on a buffered stream; an unbuffered one reads once anyway)."""
    read = getattr(fh, "read1", None) or fh.read
    return lambda: read(_READ_CHUNK)


def is_from_line(data, pos: int = 0, end: int | None = None) -> bool:
    """Whether data[pos:] starts with an mbox From_ line (see the rule
    above); only its first _FROM_SPAN bytes (or up to `end`) are read."""
    stop = pos + _FROM_SPAN if end is None else min(end, pos + _FROM_SPAN)
    return _FROM_LINE.match(data, pos, stop) is not None


def mbox_entries(
    read: Callable[[], bytes], head: bytes = b"", idle: Callable[[], bool] | None = None
) -> Iterator[bytes | None]:
    """The entries of an mbox stream, exactly as stored (the rule above):
    `head` is what was already read of it, `read()` reads more (b"" at its
    end). The first entry runs from the start of the stream to the first
    message boundary (so with a forced mbox reading, whatever comes before
    the first From_ line is an entry of its own).

    With `idle`, None is yielded before a read whenever idle() says the read
    would block: everything complete has then been yielded, so a consumer
    can pass on what it holds (filter on a long-lived pipe)."""
    buf = bytearray(b"\n")  # a line end before the stream: a blank first line counts as one
    buf += head
    start, scan = 1, 0  # the current entry starts at buf[start]; search for a boundary from scan
    eof = False
    while True:
        hit = _BOUNDARY.search(buf, scan)
        if hit is not None:
            line = hit.end()
            if is_from_line(buf, line):
                yield _slice(buf, start, line)
                start = line
            scan = line
            continue
        if eof:
            if start < len(buf):
                yield _slice(buf, start, len(buf))
            return
        # Search again only where a boundary's From_ line may not have been
        # read far enough to judge: in the last line, if it is short. So a
        # byte is searched at most twice, plus _FROM_SPAN bytes per read.
        nl = buf.rfind(b"\n", max(start, len(buf) - _FROM_SPAN - 3))
        scan = max(scan, start - 1, len(buf) - 3 if nl < 0 else min(len(buf) - 3, nl - 2))
        if start > 1 and start >= len(buf) // 2:  # drop what was yielded, now and then
            drop = start - 1
            del buf[:drop]
            scan, start = scan - drop, 1
        if idle is not None and idle():
            yield None
        more = read()
        if more:
            buf += more
        else:
            eof = True


def _slice(buf: bytearray, a: int, b: int) -> bytes:
    with memoryview(buf) as view:
        return view[a:b].tobytes()


def starts_mbox(head: bytes) -> bool:
    """Whether a stream that starts with `head` is read as an mbox (without
    --input-format mbox): it starts with a From_ line."""
    return head.startswith(b"From ") and is_from_line(head)


def read_first_line(read: Callable[[], bytes]) -> bytes:
    """Enough of a stream to judge its first line: up to a newline, the end,
    or _FROM_SPAN bytes (whatever one read returns past that is kept)."""
    head = b""
    while b"\n" not in head and len(head) < _FROM_SPAN:
        more = read()
        if not more:
            break
        head += more
    return head
