"""A `nbcli serve` worker's connections: accepting clients, reading their
requests and writing the replies without blocking, many at once, within
the limits below. What a complete request gets is the daemon's
(`daemon.Worker.respond`, a subclass of `Connections`); the bytes are
`spamd`'s.

Limits, so that slow or greedy clients cannot take the daemon down:
- `timeout` seconds per connection in all: request head, message and reply
  (not per read, so a client trickling a byte at a time is cut off too);
- `max_connections` connections per worker (256), `max_per_client` (32) of
  them from one TCP address. A new connection from an address at its limit
  replaces that address's connection idle longest; a full worker lets a new
  connection replace the one idle longest once that one has been idle
  `idle_evict` seconds (1), and while none has, stops watching the
  listening sockets (the clients wait in the backlog, or another worker
  takes them) instead of spinning on them;
- a request head is at most `spamd.MAX_HEAD` bytes; of a message, at most
  `max_size` + BODY_MARGIN (64 KB) bytes are held, in linear time: the rest
  is read and dropped as it arrives. A message larger than `max_size` is
  answered without scoring (as spamd does; PROCESS gives back the message
  unchanged when it was held whole); one larger than was held gets the
  unscored answer from CHECK, SYMBOLS and REPORT, and an EX_DATAERR line
  from PROCESS, HEADERS and TELL, on which spamc passes the message through
  (spamc's own rule for messages over its -s). A Content-length over
  HARD_LIMIT is refused at once;
- replies are written without blocking, within the same deadline: a client
  that never reads its reply holds a slot until then, never a worker.
"""

from __future__ import annotations

import socket
import time

from nbcli.spam import spamd
from nbcli.spam.settings import BODY_MARGIN, HARD_LIMIT, Settings


class Connections:
    """The connections of one worker process, on the listening `sockets`."""

    def __init__(self, settings: Settings, sockets):
        self.settings = settings
        self.sockets = sockets
        self.stop = False  # set by SIGTERM: finish what is in flight, take nothing new
        self.t = spamd.threshold(settings.spam_cutoff)
        self.outcome: tuple | None = None  # the request's (verdict, score, required), set while answering it

    def opened(self, count: int) -> None:
        """The connections held now (`daemon.Worker` counts them for --metrics)."""

    def logged(self, request: spamd.Request | None, body, size: int, started: float | None, error: str | None) -> None:
        """After each complete request: its log line (`daemon.Worker`'s);
        error: the EX_ name it was answered with; request None (and started
        None): one that never parsed."""

    def respond(self, request: spamd.Request, body: bytes | None) -> bytes | None:
        """The reply to one complete request (None: close without one)."""
        raise NotImplementedError

    def serve_connections(self) -> None:
        """Accept connections and read requests without blocking, many at
        once (so clients that connect and send nothing, or send slowly,
        hold a slot each, not the worker); a complete request is answered at
        once (`respond`), the reply written without blocking. Each
        connection has `timeout` seconds in all (request and reply). A
        worker holds at most `max_connections` connections, `max_per_client`
        from one TCP address: past that a new connection replaces the one
        idle longest (of that address; of all, once it has been idle
        `idle_evict` seconds), and a worker with no such connection to drop
        stops watching the listening sockets until it has. Once `stop` is
        set (SIGTERM): the listening sockets are closed; the requests in
        flight are read and answered (or time out), then it returns."""
        import selectors

        self.selector = selectors.DefaultSelector()
        self.pending: dict[int, Connection] = {}
        self.scratch = bytearray(1 << 20)
        listeners = list(self.sockets)
        watching = False
        while listeners or self.pending:
            now = time.monotonic()
            if self.stop and listeners:
                if watching:
                    for sock in listeners:
                        self.selector.unregister(sock)
                    watching = False
                for sock in listeners:
                    sock.close()
                listeners = []
                continue
            want = self._has_room(now) is not None
            if want != watching:
                for sock in listeners:
                    if want:
                        self.selector.register(sock, selectors.EVENT_READ, None)
                    else:
                        self.selector.unregister(sock)
                watching = want
            try:
                events = self.selector.select(timeout=0.25)
            except InterruptedError:
                continue
            now = time.monotonic()
            for key, _ in events:
                if key.data is None:
                    self._accept(key.fileobj, now)
                    continue
                connection = key.data
                if connection.closed:  # dropped earlier in this round
                    continue
                if connection.out is not None:
                    self._send(connection, now)
                    continue
                reply = self._receive(connection, now)
                if reply is not False:
                    self._finish(connection, reply, now)
            if events:
                self.settle()  # the replies are on their way: work they left, off their clients' clocks
            for connection in [c for c in self.pending.values() if c.deadline < now]:
                self._drop(connection, "timed out reading the request", "EX_TIMEOUT")
        self.selector.close()

    def settle(self) -> None:
        """Work the requests just answered left for later (nothing here; the
        worker lays a TELL's update over the model it holds: `Worker.settle`)."""

    def _has_room(self, now: float):
        """True when a slot is free, else the connection idle longest if it
        may be dropped for a new one, else None (the worker is full)."""
        if len(self.pending) < self.settings.max_connections:
            return True
        idlest = min(self.pending.values(), key=lambda c: c.last)
        return idlest if now - idlest.last >= self.settings.idle_evict else None

    def _accept(self, sock, now: float) -> None:
        import selectors

        room = self._has_room(now)
        if room is None:
            return
        try:
            conn, peer = sock.accept()
        except OSError:  # another worker took it (BlockingIOError), or the client left
            return
        if room is not True:
            self._drop(room, "too many connections; this one was idle longest")
        conn.setblocking(False)
        client = peer[0] if conn.family != socket.AF_UNIX else None
        connection = Connection(conn, now + self.settings.timeout, self.settings.max_size + BODY_MARGIN, client, now)
        if client is not None:
            same = [c for c in self.pending.values() if c.client == client]
            if len(same) >= self.settings.max_per_client:
                self._drop(min(same, key=lambda c: c.last), "too many connections from this address")
        self.pending[conn.fileno()] = connection
        self.opened(len(self.pending))
        self.selector.register(conn, selectors.EVENT_READ, connection)

    def _receive(self, connection: Connection, now: float):
        """Read what the client sent; the reply once the request is complete
        (None: close without one, as for SKIP), else False (wait for more)."""
        try:  # into one buffer of the worker's: no megabyte allocated (and fragmented) per read
            chunk = memoryview(self.scratch)[: connection.sock.recv_into(self.scratch)]
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return None
        connection.last = now
        logged = False
        try:
            if chunk:
                connection.feed(chunk)
            request = connection.request(eof=not chunk)
            if request is None:
                if not chunk:
                    raise spamd.ProtocolError("EX_PROTOCOL", "the client closed before the request was complete")
                return False
            head, body = request
            if head is None:
                return None
            started, self.outcome, logged = time.monotonic(), None, True
            try:
                reply = self._oversize(head, connection.received) if connection.dropped else self.respond(head, body)
            except spamd.ProtocolError as exc:
                self.logged(head, body, connection.received, started, exc.name)
                raise
            self.logged(head, body, connection.received, started, None)
            return reply
        except spamd.ProtocolError as exc:
            if not logged:  # a request that never parsed (a bad request line or header)
                self.logged(None, None, connection.received, None, exc.name)
            return exc.reply()

    def _oversize(self, head: spamd.Request, size: int) -> bytes:
        """The reply to a message too large to have been kept (over
        --max-size and BODY_MARGIN): the scoring verbs get their unscored
        answer; PROCESS, HEADERS and TELL, which need the message, an
        error, on which spamc passes the message through unchanged."""
        if head.verb in ("CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM"):
            return spamd.answer(head, spamd.unscored(), self.t)
        raise spamd.ProtocolError(
            "EX_DATAERR", f"message of {size} bytes is over --max-size ({self.settings.max_size}); not read"
        )

    def _finish(self, connection: Connection, reply, now: float) -> None:
        """Start writing the reply (nothing: close)."""
        import selectors

        if not reply:
            self._close(connection)
            return
        connection.out = memoryview(reply)
        self.selector.modify(connection.sock, selectors.EVENT_WRITE, connection)
        self._send(connection, now)

    def _send(self, connection: Connection, now: float) -> None:
        """Write what the socket takes of the reply; close when all is sent."""
        try:
            sent = connection.sock.send(connection.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(connection)
            return
        connection.last = now
        connection.out = connection.out[sent:]
        if not connection.out:
            self._close(connection)

    def _drop(self, connection: Connection, why: str, name: str = "EX_TEMPFAIL") -> None:
        """Close a connection before its time, with a one-line error if it
        is still being read and the line fits in the socket's buffer."""
        if connection.out is None:
            connection.say(spamd.error(name, why))
        self._close(connection)

    def _close(self, connection: Connection) -> None:
        sock = connection.sock
        try:
            self.selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        self.pending.pop(sock.fileno(), None)
        self.opened(len(self.pending))
        connection.closed = True
        sock.close()

    def handle(self, conn: socket.socket) -> None:
        """Serve one connection to its end, blocking: what `serve`'s loop
        does for many at once (for benchmarks and tests)."""
        conn.setblocking(True)
        conn.settimeout(self.settings.timeout)
        if getattr(self, "scratch", None) is None:
            self.scratch = bytearray(1 << 20)
        connection = Connection(conn, float("inf"), self.settings.max_size + BODY_MARGIN)
        reply = False
        while reply is False:
            reply = self._receive(connection, time.monotonic())
        if reply:
            try:
                conn.sendall(reply)
            except OSError:
                pass


class Connection:
    """A client's connection: the request head as it arrives, then the
    message (at most `keep` bytes of it held; the rest is counted and
    dropped), the reply being written, when it was last active and its
    deadline (for its whole request and reply)."""

    def __init__(self, sock: socket.socket, deadline: float, keep: int, client=None, now: float = 0.0):
        self.sock = sock
        self.deadline = deadline
        self.keep = keep
        self.client = client  # a TCP client's address, None on the Unix socket
        self.last = now
        self.buffer = bytearray()  # the head so far, then the message
        self.scanned = 0  # head bytes searched for its end already
        self.head: spamd.Request | None = None
        self.received = 0  # message bytes received, kept or not
        self.out: memoryview | None = None  # the reply, while it is written
        self.closed = False

    @property
    def dropped(self) -> bool:
        """The message was larger than `keep`: not all of it is held."""
        return self.received > self.keep

    def feed(self, chunk) -> None:
        if self.head is None:
            self.buffer += chunk
            return
        room = self.keep + 1 - len(self.buffer)  # one byte past `keep` tells it was larger
        if room > 0:
            self.buffer += chunk[:room]
        self.received += len(chunk)

    def say(self, line: bytes) -> None:
        """Send a one-line reply if the socket takes it now (never waits)."""
        try:
            self.sock.send(line)
        except OSError:
            pass

    def request(self, eof: bool = False):
        """(request, body) once complete; (request, None) for PING or a
        dropped message; (None, None) for SKIP; None while incomplete.
        ProtocolError for a bad one. eof: the client has finished sending
        (a bare request line then counts as a head: PING and SKIP need
        nothing more)."""
        if self.head is None:
            if eof and self.buffer.strip() and b"\n" not in self.buffer.rstrip():
                self.buffer = bytearray(self.buffer.rstrip() + b"\r\n\r\n")
            end = spamd.head_end(self.buffer, max(0, self.scanned - 3))
            self.scanned = len(self.buffer)
            if end > spamd.MAX_HEAD or (end < 0 and len(self.buffer) > spamd.MAX_HEAD):
                raise spamd.ProtocolError("EX_PROTOCOL", f"request head over {spamd.MAX_HEAD} bytes")
            if end < 0:
                return None
            self.head = spamd.parse_head(bytes(self.buffer[:end]))
            if self.head.verb == "SKIP":
                return None, None
            if self.head.verb == "PING":
                return self.head, None
            length = self.head.content_length()
            if length is None:
                raise spamd.ProtocolError("EX_PROTOCOL", f"{self.head.verb} needs a Content-length")
            if length > HARD_LIMIT:
                raise spamd.ProtocolError("EX_DATAERR", f"message of {length} bytes is over {HARD_LIMIT}")
            rest = bytes(self.buffer[end:])
            self.buffer = bytearray()
            self.feed(rest)
        if self.head.verb in ("PING", "SKIP"):
            return (None, None) if self.head.verb == "SKIP" else (self.head, None)
        length = self.head.content_length()
        if self.received > length:
            raise spamd.ProtocolError("EX_PROTOCOL", "more bytes than Content-length")
        if self.received < length:
            return None
        return self.head, (None if self.dropped else bytes(self.buffer))
