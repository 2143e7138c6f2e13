"""A small spamc-side client of the SPAMC/SPAMD protocol, for testing `nbcli serve`.

Written from SpamAssassin's protocol description (spamd/PROTOCOL, aiospamc's
docs/protocol.rst) and Exim's parser, independently of nbcli/spam/spamd.py, so the
two can check each other. A request is

    VERB SPAMC/1.5\\r\\n
    Name: value\\r\\n ...
    \\r\\n
    body (Content-length bytes)

and a reply is `SPAMD/<version> <code> <message>\\r\\n`, headers, a blank line,
then a body. spamd answers one request per connection and closes it, so a reply
is read to the end of the stream.
"""

from __future__ import annotations

import re
import socket
import time
from dataclasses import dataclass, field

# Where a server listens: a Unix socket path, or (host, port).
Address = str | tuple[str, int]

STATUS_LINE = re.compile(rb"SPAMD/(\d+\.\d+) (\d+) ([^\r\n]*)")
SPAM_VALUE = re.compile(r"(True|False|Yes|No) ; (-?\d+\.\d) / (-?\d+\.\d)")

# Exim's spam.c reads an old-layout (SPAMC/1.2) REPORT reply with
#   sscanf(buf, "SPAMD/%7s 0 EX_OK\r\nContent-length: %*u\r\n\r\n%lf/%lf\r\n%n", ...)
# In scanf, any white-space character of the format (space, \r, \n) matches any
# amount of white space, none included; %s, %u and %lf skip leading white space;
# other characters match themselves. %lf takes what strtod takes; the "/" right
# after the first %lf leaves no room for a space before it.
_WS = rb"[ \t\r\n\v\f]*"
_FLOAT = rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
EXIM_REPORT = re.compile(
    rb"SPAMD/([^ \t\r\n\v\f]{1,7})"
    + _WS
    + rb"0"
    + _WS
    + rb"EX_OK"
    + _WS
    + rb"Content-length:"
    + _WS
    + rb"\+?\d+"
    + _WS
    + _WS
    + rb"("
    + _FLOAT
    + rb")/"
    + _WS
    + rb"("
    + _FLOAT
    + rb")"
    + _WS
)


@dataclass
class Reply:
    """One parsed spamd reply. `headers` maps lower-cased names to values, in order."""

    version: str
    code: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    raw: bytes = b""

    def spam(self) -> tuple[bool, float, float, str, str]:
        """The Spam header as (is_spam, score, threshold, score text, threshold text)."""
        value = self.headers["spam"]
        m = SPAM_VALUE.fullmatch(value)
        if m is None:
            raise ValueError(f"bad Spam header: {value!r}")
        return m[1] in ("True", "Yes"), float(m[2]), float(m[3]), m[2], m[3]


def connect(address: Address, timeout: float = 10.0) -> socket.socket:
    """A connected stream socket to a Unix socket path or a (host, port)."""
    if isinstance(address, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(address)
    return sock


def build_request(
    verb: str,
    body: bytes | None = None,
    headers: list[tuple[str, str]] | None = None,
    version: str = "1.5",
) -> bytes:
    """The bytes of a request; a body gets its Content-length header first."""
    lines = [f"{verb} SPAMC/{version}\r\n".encode()]
    if body is not None:
        lines.append(b"Content-length: %d\r\n" % len(body))
    for name, value in headers or []:
        lines.append(f"{name}: {value}\r\n".encode("utf-8", "surrogateescape"))
    lines.append(b"\r\n")
    return b"".join(lines) + (body or b"")


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset ends the read too)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def exchange(address: Address, data: bytes, timeout: float = 10.0, half_close: bool = False) -> bytes:
    """Send raw bytes, then read the raw reply to the end of the stream.

    A server that refuses the request part way may close before it has read
    everything: a failed send is then ignored and what it answered is read.
    half_close shuts our sending side after the data, as libspamc does.
    """
    with connect(address, timeout) as sock:
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:  # a broken pipe, a reset, or (shutdown) no longer connected
            pass
        return read_all(sock)


def parse_reply(raw: bytes) -> Reply:
    """Parse a whole reply: status line, headers, blank line, body.

    A Content-length header must match the body's length. A reply of just a
    status line (spamd's error replies) has no headers and no body.
    """
    end = raw.find(b"\r\n")
    if end < 0:
        raise ValueError(f"no status line in {raw[:80]!r}")
    m = STATUS_LINE.fullmatch(raw[:end])
    if m is None:
        raise ValueError(f"bad status line {raw[:end]!r}")
    reply = Reply(m[1].decode(), int(m[2]), m[3].decode("latin-1"), raw=raw)
    pos = end + 2
    if pos == len(raw):
        return reply
    while True:
        end = raw.find(b"\r\n", pos)
        if end < 0:
            raise ValueError(f"unterminated header at {raw[pos : pos + 80]!r}")
        line = raw[pos:end]
        pos = end + 2
        if not line:
            break
        name, sep, value = line.partition(b":")
        if not sep:
            raise ValueError(f"header without a colon: {line!r}")
        reply.headers[name.strip().decode("latin-1").lower()] = value.strip().decode("latin-1")
    reply.body = raw[pos:]
    if "content-length" in reply.headers and int(reply.headers["content-length"]) != len(reply.body):
        raise ValueError(f"Content-length {reply.headers['content-length']} but a body of {len(reply.body)} bytes")
    return reply


def request(
    address: Address,
    verb: str,
    body: bytes | None = None,
    headers: list[tuple[str, str]] | None = None,
    version: str = "1.5",
    timeout: float = 10.0,
) -> Reply:
    """Send one request and parse its reply."""
    return parse_reply(exchange(address, build_request(verb, body, headers, version), timeout))


def exim_parse(raw: bytes) -> tuple[str, float, float, bytes] | None:
    """An old-layout REPORT reply as Exim reads it: (version, score, threshold, report), or None."""
    m = EXIM_REPORT.match(raw)
    if m is None:
        return None
    return m[1].decode(), float(m[2]), float(m[3]), raw[m.end() :]


def wait_closed(sock: socket.socket, limit: float) -> tuple[bytes, float]:
    """Wait up to `limit` seconds for the server to close; returns (bytes sent, seconds)."""
    start = time.monotonic()
    sock.settimeout(limit)
    try:
        data = read_all(sock)
    except TimeoutError:
        data = b"<still open>"
    return data, time.monotonic() - start


# -- the daemon's processes (Linux /proc) ---------------------------------------------


def child_pids(pid: int) -> list[int]:
    """The processes `pid` started (a supervisor's workers)."""
    with open(f"/proc/{pid}/task/{pid}/children") as fh:
        return [int(p) for p in fh.read().split()]


def rss_kb(pid: int) -> int:
    """The resident memory of process `pid`, in KB."""
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
