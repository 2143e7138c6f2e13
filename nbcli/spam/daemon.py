"""`nbcli serve`: a spamd-protocol daemon (see `spamd` for the protocol).

One supervisor process binds the sockets (a Unix socket and/or TCP on
loopback unless told otherwise), then forks `workers` processes that each
read many connections at once without blocking and answer a request as soon
as it is complete. The supervisor restarts a worker that dies (a crash of
one never takes the others down), forwards SIGHUP (reload the models) and
on SIGTERM or SIGINT closes the listening sockets (new clients are refused
at once, and spamc passes their mail through), lets every worker finish the
requests in flight, then exits.

Each worker keeps its models loaded and, before every request, checks the
model file's identity (device, inode, size, mtime): a file replaced by
`nbcli learn`, `nbcli train -o` or a TELL in another worker is read again,
so the next request uses it; SIGHUP drops them all. Models up to
COPY_LIMIT are read into memory (a copy per worker), larger ones mapped;
see `Worker.model` for why (a file rewritten in place). Per-user models
(--models-dir) are kept for the --model-cache most recently used, so a
worker's memory and descriptors do not grow with the number of users.

TELL (with --allow-tell) decisions: a Remove without Message-class (what
`spamc -L forget` sends) forgets the message from the class the record
holds it in; a Set learns a message of at most --max-size, into a model
that stays under --max-model-size (else refused with how to prune); with
--models-dir only a user's own model learns: a TELL for a user without one,
or naming no user, is refused (EX_NOPERM), since it would change the
shared model every such user is scored with (a later issue may add a
choice). Any failure while answering a request is that request's error
reply (`Worker.respond`), never the worker's end.

The socket file: `--socket PATH` removes only a socket that refuses
connections (left by a daemon that died); any other file there is an
error, and at exit the path is removed only if it is still this daemon's
socket. The socket is made mode 0660 by bind (under a umask; no chmod,
which would follow a link). The default folder ($XDG_RUNTIME_DIR/nbcli,
else /tmp/nbcli-UID) is made 0700, or used only if it is a real folder
(lstat) of this uid with no group or other access (`private_folder`).

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
Nothing here loses mail: a message that cannot be scored gets an EX_ error
line, on which spamc passes the message through unchanged.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import stat
import time
from collections import OrderedDict
from dataclasses import dataclass

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.errors import NbcliError
from nbcli.spam import spamd

HARD_LIMIT = 64 << 20
DEFAULT_MAX_SIZE = 500 * 1024  # spamc's default
BODY_MARGIN = 64 << 10  # message bytes held past --max-size (PROCESS gives such a message back unchanged)
SPAMD_PORT = 783
DEFAULT_MODEL_CACHE = 16  # per-user models a worker keeps loaded (--model-cache)
DEFAULT_MAX_MODEL_SIZE = 128 << 20  # a TELL may not grow a model past this (--max-model-size)
COPY_LIMIT = 64 << 20  # models up to this size are read into memory, not mapped (see Worker.model)
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def default_socket() -> str:
    """Where the Unix socket goes by default: $XDG_RUNTIME_DIR/nbcli/spamd.sock,
    else /tmp/nbcli-<uid>/spamd.sock (its folder must be private: see
    `private_folder`)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = os.path.join(base, "nbcli") if base else f"/tmp/nbcli-{os.getuid()}"
    return os.path.join(folder, "spamd.sock")


def private_folder(folder: str) -> None:
    """Make `folder` with mode 0700, or accept it only if it is a real folder
    (not a link: lstat) owned by this uid with no group or other access, as
    OpenSSH and Dovecot treat their runtime folders. Anything else could be
    another local user's, who could put their own socket in ours' place."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise NbcliError(f"cannot make {folder}: {exc.strerror}", hint="give --socket PATH") from None
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        what = (
            "a link"
            if stat.S_ISLNK(st.st_mode)
            else "not a folder"
            if not stat.S_ISDIR(st.st_mode)
            else f"owned by uid {st.st_uid}"
            if st.st_uid != os.getuid()
            else f"open to others (mode {stat.S_IMODE(st.st_mode):04o})"
        )
        raise NbcliError(
            f"refusing the socket folder {folder}: it is {what}; it must be a folder of uid {os.getuid()} "
            "with mode 0700",
            hint="remove it (nbcli makes it again), or give --socket PATH",
        )


@dataclass
class Settings:
    model: str
    socket_path: str | None
    port: int | None
    listen: list
    workers: int
    max_size: int = DEFAULT_MAX_SIZE
    timeout: float = 30.0  # seconds a connection has for its whole request and reply
    max_connections: int = 256  # connections a worker holds at once
    max_per_client: int = 32  # of them from one TCP client address
    idle_evict: float = 1.0  # a full worker drops a connection idle this long for a new one
    private_socket_folder: bool = False  # the socket's folder is checked by `private_folder`
    allow_tell: bool = False
    models_dir: str | None = None
    spam_class: str = "spam"
    spam_cutoff: float = DEFAULT_SPAM_CUTOFF
    ham_cutoff: float = DEFAULT_HAM_CUTOFF
    explain: int = 5
    model_cache: int = DEFAULT_MODEL_CACHE
    max_model_size: int = DEFAULT_MAX_MODEL_SIZE


# -- the supervisor ---------------------------------------------------------------


def bind(settings: Settings) -> list[socket.socket]:
    """The listening sockets (non-blocking), Unix socket first."""
    sockets = []
    if settings.socket_path:
        sockets.append(_bind_unix(settings.socket_path, settings.private_socket_folder))
    if settings.port is not None:
        for address in settings.listen:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind((address, settings.port))
            except OSError as exc:
                sock.close()
                if address == "::1" and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    continue  # no IPv6 loopback here
                raise NbcliError(f"cannot listen on {address} port {settings.port}: {exc.strerror}") from None
            sockets.append(sock)
    for sock in sockets:
        sock.listen(128)
        sock.setblocking(False)
    return sockets


def _bind_unix(path: str, private: bool) -> socket.socket:
    """A Unix socket bound at `path`, mode 0660. Only a socket that refuses
    connections (a daemon died) is removed to make room; any other file is
    left alone and named in the error."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        if private:
            private_folder(folder)
        else:
            os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise _cannot_listen(path, exc) from None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _cannot_listen(path, exc) from None
    if st is not None:
        if not stat.S_ISSOCK(st.st_mode):
            raise NbcliError(
                f"{path} exists and is not a socket; nbcli serve replaces only a socket left by a daemon that died",
                hint="give --socket a path of its own",
            )
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            os.unlink(path)  # a socket left by a daemon that died
        except OSError as exc:
            raise _cannot_listen(path, exc) from None
        else:
            raise NbcliError(f"{path}: another server is listening there", hint="stop it, or give --socket")
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o117)  # the socket is made 0660 by bind itself: no chmod, which would follow a link
    try:
        sock.bind(path)
    except OSError as exc:
        sock.close()
        raise _cannot_listen(path, exc) from None
    finally:
        os.umask(mask)
    return sock


def _cannot_listen(path: str, exc: OSError) -> NbcliError:
    return NbcliError(f"cannot listen on {path}: {exc.strerror}", hint="give --socket a writable place")


def _identity(path: str):
    """(device, inode) of the socket at `path`, None if it is not a socket."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISSOCK(st.st_mode) else None


def _remove_socket(path: str, identity) -> None:
    """Unlink `path` only if it is still the socket this daemon bound."""
    if identity is not None and _identity(path) == identity:
        try:
            os.unlink(path)
        except OSError:
            pass


def addresses(sockets) -> list[str]:
    out = []
    for sock in sockets:
        if sock.family == socket.AF_UNIX:
            out.append(f"unix:{sock.getsockname()}")
        else:
            host, port = sock.getsockname()[:2]
            out.append(f"tcp:{host}:{port}" if ":" not in host else f"tcp:[{host}]:{port}")
    return out


def run(settings: Settings, say) -> int:
    """Serve until SIGTERM/SIGINT; `say(line)` writes to stderr."""
    from nbcli.store import modelfile

    first = modelfile.load(settings.model)  # refuse a bad model before binding anything
    _check_spam_model(first, settings, settings.model)
    sockets = bind(settings)
    ours = _identity(settings.socket_path) if settings.socket_path else None
    where = " and ".join(addresses(sockets))
    stopping = False
    children: dict[int, int] = {}

    def spawn(slot: int) -> None:
        # Signals wait while a worker is made: a SIGTERM then finds it in
        # `children` (or stops the spawn), never a worker nobody signals.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            if stopping:
                return
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    Worker(settings, sockets).serve()
                except BaseException:  # noqa: B036 (a worker never returns into the supervisor's code)
                    code = 70
                finally:
                    os._exit(code)
            children[pid] = slot
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def on_stop(signum, frame):
        nonlocal stopping
        stopping = True
        for sock in sockets:  # new clients are refused at once (spamc passes their mail through)
            sock.close()
        if settings.socket_path:
            _remove_socket(settings.socket_path, ours)
        for pid in list(children):
            _kill(pid, signal.SIGTERM)

    def on_hup(signum, frame):
        for pid in list(children):
            _kill(pid, signal.SIGHUP)

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, on_hup)
    for slot in range(settings.workers):
        spawn(slot)
    say(f"serving {settings.model} on {where} with {settings.workers} worker(s)")
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        slot = children.pop(pid, None)
        if slot is not None and not stopping:
            say(f"warning: worker {pid} ended ({_how(status)}); starting another")
            time.sleep(0.1)
            spawn(slot)  # not if a SIGTERM came meanwhile
    for sock in sockets:
        sock.close()
    if settings.socket_path:
        _remove_socket(settings.socket_path, ours)
    for sig in (signal.SIGTERM, signal.SIGINT):  # stopped: another stop signal while Python exits is not a death
        signal.signal(sig, signal.SIG_IGN)
    say("stopped")
    return 0


def _kill(pid: int, sig) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _check_spam_model(classifier, settings: Settings, path: str) -> None:
    classifier.check_ready(path)
    if getattr(classifier.model, "kind", None) == "table":
        raise NbcliError(
            f"{path} is a table model; a spamd server classifies mail", hint="serve a model trained on mail"
        )
    if len(classifier.classes) != 2 or settings.spam_class not in classifier.classes:
        raise NbcliError(
            f"{path} has classes {', '.join(classifier.classes)}; a spamd server needs a two-class model with a "
            f"{settings.spam_class!r} class",
            hint="name the spam class with --spam-class",
        )


# -- a worker ------------------------------------------------------------------------


class Worker:
    def __init__(self, settings: Settings, sockets):
        self.settings = settings
        self.sockets = sockets
        self.stop = False
        # path -> (file identity, classifier, verdicts, model id, copied), least recently used first
        self.models: OrderedDict[str, tuple] = OrderedDict()
        self.t = spamd.threshold(settings.spam_cutoff)

    def serve(self) -> None:
        """Accept connections and read requests without blocking, many at
        once (so clients that connect and send nothing, or send slowly,
        hold a slot each, not the worker); a complete request is answered at
        once, the reply written without blocking. Each connection has
        `timeout` seconds in all (request and reply). A worker holds at most
        `max_connections` connections, `max_per_client` from one TCP
        address: past that a new connection replaces the one idle longest
        (of that address; of all, once it has been idle `idle_evict`
        seconds), and a worker with no such connection to drop stops
        watching the listening sockets until it has. On SIGTERM: the
        listening sockets are closed; the requests in flight are read and
        answered (or time out), then the worker ends."""
        import selectors

        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, self._on_hup)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked while the supervisor forked
        try:  # workers die with the supervisor (Linux)
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
        except (OSError, AttributeError):
            pass
        try:
            self.model(self.settings.model)  # loaded before the first request, not during it
        except (NbcliError, OSError):
            pass  # said when a request needs it
        self.selector = selectors.DefaultSelector()
        self.pending: dict[int, _Connection] = {}
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
            for connection in [c for c in self.pending.values() if c.deadline < now]:
                self._drop(connection, "timed out reading the request", "EX_TIMEOUT")
        self.selector.close()

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
        connection = _Connection(conn, now + self.settings.timeout, self.settings.max_size + BODY_MARGIN, client, now)
        if client is not None:
            same = [c for c in self.pending.values() if c.client == client]
            if len(same) >= self.settings.max_per_client:
                self._drop(min(same, key=lambda c: c.last), "too many connections from this address")
        self.pending[conn.fileno()] = connection
        self.selector.register(conn, selectors.EVENT_READ, connection)

    def _receive(self, connection: _Connection, now: float):
        """Read what the client sent; the reply once the request is complete
        (None: close without one, as for SKIP), else False (wait for more)."""
        try:  # into one buffer of the worker's: no megabyte allocated (and fragmented) per read
            chunk = memoryview(self.scratch)[: connection.sock.recv_into(self.scratch)]
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return None
        connection.last = now
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
            if connection.dropped:
                return self._oversize(head, connection.received)
            return self.respond(head, body)
        except spamd.ProtocolError as exc:
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

    def _finish(self, connection: _Connection, reply, now: float) -> None:
        """Start writing the reply (nothing: close)."""
        import selectors

        if not reply:
            self._close(connection)
            return
        connection.out = memoryview(reply)
        self.selector.modify(connection.sock, selectors.EVENT_WRITE, connection)
        self._send(connection, now)

    def _send(self, connection: _Connection, now: float) -> None:
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

    def _drop(self, connection: _Connection, why: str, name: str = "EX_TEMPFAIL") -> None:
        """Close a connection before its time, with a one-line error if it
        is still being read and the line fits in the socket's buffer."""
        if connection.out is None:
            connection.say(spamd.error(name, why))
        self._close(connection)

    def _close(self, connection: _Connection) -> None:
        sock = connection.sock
        try:
            self.selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        self.pending.pop(sock.fileno(), None)
        connection.closed = True
        sock.close()

    def handle(self, conn: socket.socket) -> None:
        """Serve one connection to its end, blocking: what `serve`'s loop
        does for many at once (for benchmarks and tests)."""
        conn.setblocking(True)
        conn.settimeout(self.settings.timeout)
        if getattr(self, "scratch", None) is None:
            self.scratch = bytearray(1 << 20)
        connection = _Connection(conn, float("inf"), self.settings.max_size + BODY_MARGIN)
        reply = False
        while reply is False:
            reply = self._receive(connection, time.monotonic())
        if reply:
            try:
                conn.sendall(reply)
            except OSError:
                pass

    def _on_stop(self, signum, frame):
        self.stop = True

    def _on_hup(self, signum, frame):
        self.models.clear()

    # -- one request -----------------------------------------------------------------

    def respond(self, request: spamd.Request, body: bytes | None) -> bytes | None:
        """The reply to one complete request. Whatever goes wrong while
        answering it (a model file gone, a full disk, a bug) is that
        request's error reply: the worker and the other connections it
        holds go on."""
        try:
            if request.verb == "PING":
                return spamd.pong()
            compress = request.headers.get("compress", "").strip().lower()
            if compress:
                body = _inflate(body, compress, self.settings.max_size + BODY_MARGIN)
            if request.verb == "TELL":
                return self.tell(request, body)
            return self.score(request, body, self.model_path(request))
        except spamd.ProtocolError:
            raise
        except NbcliError as exc:
            raise spamd.ProtocolError("EX_SOFTWARE", f"cannot answer {request.verb}: {exc}") from None
        except OSError as exc:
            raise spamd.ProtocolError("EX_IOERR", f"cannot answer {request.verb}: {exc.strerror or exc}") from None
        except Exception as exc:  # noqa: BLE001 (one request's failure, never the worker's)
            raise spamd.ProtocolError(
                "EX_SOFTWARE", f"cannot answer {request.verb}: {type(exc).__name__}: {exc}"
            ) from None

    def own_model(self, request: spamd.Request) -> str | None:
        """The model of the request's User in --models-dir, when that user
        has one of their own; else None."""
        user = request.headers.get("user")
        folder = self.settings.models_dir
        if user is None or folder is None:
            return None
        if not spamd.valid_user(user):
            raise spamd.ProtocolError("EX_NOUSER", "bad user name")
        candidate = os.path.join(folder, f"{user}.nb")
        return candidate if os.path.isfile(candidate) else None

    def model_path(self, request: spamd.Request) -> str:
        return self.own_model(request) or self.settings.model

    def model(self, path: str):
        """(classifier, verdicts, model id) of the model file at `path`, read
        again if the file was replaced.

        A model of up to COPY_LIMIT bytes is read into memory, not mapped,
        so a file rewritten in place (`cp new.nb mail.nb` truncates it
        first) cannot take the worker down with SIGBUS: the copy keeps
        serving until the new file reads whole. A larger model is mapped;
        once its file changes in place (same inode, another size or mtime)
        the old mapping is never touched again, and requests get an error
        reply until the file reads whole. Models other than the served one
        (--models-dir) are kept for the --model-cache most recently used."""
        from nbcli.errors import ModelFileError
        from nbcli.spam.filtering import Verdicts
        from nbcli.store import modelfile

        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise ModelFileError(f"{path}: no such model file (removed?)") from None
        identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        held = self.models.pop(path, None)  # put back last: the most recently used
        if held is not None and held[0] != identity and not held[4] and held[0][:2] == identity[:2]:
            held = None  # mapped, and changed in place: its pages may be gone
        if held is None or held[0] != identity:
            copy = st.st_size <= COPY_LIMIT
            try:
                classifier = modelfile.load(path, copy=copy)
                _check_spam_model(classifier, self.settings, path)
            except NbcliError:
                if held is None:
                    raise
                classifier = None  # a damaged replacement: keep serving the last good model
            if classifier is not None:
                s = self.settings
                verdicts = Verdicts(classifier.classes, s.spam_class, s.spam_cutoff, s.ham_cutoff)
                held = (identity, classifier, verdicts, modelfile.model_id(classifier), copy)
        self.models[path] = held
        self._evict()
        return held[1:4]

    def _evict(self) -> None:
        """Release the least recently used models beyond --model-cache (the
        served model is never released)."""
        others = [p for p in self.models if p != self.settings.model]
        for path in others[: max(0, len(others) - self.settings.model_cache)]:
            self.models.pop(path, None)

    def score(self, request: spamd.Request, body: bytes, path: str) -> bytes:
        from nbcli.spam.filtering import header_value

        if len(body) > self.settings.max_size or not body.strip():
            verdict = spamd.unscored()
            return spamd.answer(request, verdict, self.t, body)
        try:
            classifier, verdicts, model_id = self.model(path)
            explain = self.settings.explain if request.verb in ("REPORT", "REPORT_IFSPAM", "SYMBOLS") else 0
            result = classifier.score([body], ["mail"], explain)
            log_proba, whys = result if explain else (result, None)
            row = log_proba[0]
            name, label, p = verdicts.of(row)
            s = verdicts.spam_index
            log_odds = float(row[s] - row[1 - s])
            evidence, unit = [], ""
            if whys:
                why = whys[0]
                sign = 1.0 if label == verdicts.spam_class or why["versus"] != verdicts.spam_class else -1.0
                evidence = [(t["term"], sign * t["contribution"]) for t in why["terms"]]
                unit = why["unit"]  # raw log-odds for a calibrated model: not the score's units
            # spamd's "is spam" is the one verdict (filtering.Verdicts), as filter and predict give it
            verdict = spamd.Verdict(name, label, p, log_odds, name == "spam", evidence, model_id, unit=unit)
        except (NbcliError, OSError, ValueError, MemoryError) as exc:
            raise spamd.ProtocolError("EX_SOFTWARE", f"cannot score the message: {exc}") from None
        processed = None
        if request.verb in ("PROCESS", "HEADERS"):
            processed = spamd.marked(body, verdict, self.t, header_value(label, p, model_id))
        return spamd.answer(request, verdict, self.t, processed)

    def tell_path(self, request: spamd.Request) -> str:
        """The model a TELL teaches: MODEL, or with --models-dir the
        request's user's own model. A user without one (or a TELL naming no
        user) is refused: one user's TELL must not change what every user
        without a model of their own is scored with."""
        if self.settings.models_dir is None:
            return self.settings.model
        own = self.own_model(request)
        if own is None:
            user = request.headers.get("user")
            who = f"user {user} has no model of their own" if user else "the TELL names no User"
            raise spamd.ProtocolError(
                "EX_NOPERM",
                f"{who} in --models-dir, and a TELL does not teach the shared model; "
                "give the user a model (copy MODEL to DIR/USER.nb) to let them teach it",
            )
        return own

    def tell(self, request: spamd.Request, body: bytes) -> bytes:
        """Learn or forget the message (`Set: local` / `Remove: local`) with
        the learning loop's machinery: the record, the lock, the atomic
        replace, durable before the reply. A Remove without a
        Message-class (what `spamc -L forget` sends) forgets the message
        from whichever class the record holds it in. What one TELL may add
        is bounded: a message over --max-size is not learned, the model's
        analysis cap applies as in training, and a model that would grow
        past --max-model-size is refused (prune it)."""
        from nbcli.fit import learning
        from nbcli.fit.analysed import analyse_for_learning
        from nbcli.store import modelfile
        from nbcli.text.sources import Document

        if not self.settings.allow_tell:
            raise spamd.ProtocolError("EX_UNAVAILABLE", "TELL commands are not enabled; start with --allow-tell")
        kind = request.headers.get("message-class", "").strip().lower()
        do_set = "local" in request.headers.get("set", "").lower()
        do_remove = "local" in request.headers.get("remove", "").lower()
        if do_set == do_remove:
            raise spamd.ProtocolError("EX_PROTOCOL", "TELL needs one of Set: local and Remove: local")
        if kind not in ("spam", "ham") and not (do_remove and not kind):
            raise spamd.ProtocolError("EX_PROTOCOL", "TELL needs Message-class: spam or ham")
        if do_set and len(body) > self.settings.max_size:
            raise spamd.ProtocolError(
                "EX_DATAERR",
                f"the message has {len(body)} bytes, over --max-size ({self.settings.max_size}); not learned",
            )
        path = self.tell_path(request)
        try:
            _, verdicts, _ = self.model(path)
            label = None if not kind else verdicts.spam_class if kind == "spam" else verdicts.ham_name
            docs = [Document("-", label, body, "mail")]
            if do_set:
                self._check_model_size(path, os.stat(path).st_size)
            with modelfile.locked(path):
                current = self.model(path)[0]  # as it is now (read again only if it was replaced)
                analysed = analyse_for_learning(current.analyzer, docs)
                if do_set:
                    updated, outcome = learning.learn(current, analysed)
                    changed = updated is not current
                else:
                    updated, outcome = learning.forget(current, analysed)
                    changed = outcome.forgotten > 0
                if changed:
                    payload = modelfile.to_payload(updated)
                    if do_set:
                        self._check_model_size(path, modelfile.payload_bytes(payload))
                    modelfile.write_payload(payload, path)
        except NbcliError as exc:
            if do_remove and "never learned" in str(exc):
                return spamd.tell_reply(False, False)  # nothing to remove: no DidRemove, as spamd
            raise spamd.ProtocolError("EX_SOFTWARE", f"cannot learn the message: {exc}") from None
        return spamd.tell_reply(do_set and changed, do_remove and changed)

    def _check_model_size(self, path: str, size: int) -> None:
        cap = self.settings.max_model_size
        if cap and size > cap:
            raise spamd.ProtocolError(
                "EX_UNAVAILABLE",
                f"{path} would be {size >> 20} MB, over --max-model-size ({cap >> 20} MB); not learned: "
                f"prune it (nbcli prune {path} --min-count 2) or raise --max-model-size",
            )


def _inflate(body: bytes, method: str, limit: int) -> bytes:
    """A body sent with `Compress: zlib` (spamc -z), at most `limit` bytes
    once inflated (--max-size and the margin a plain message is held to: a
    zlib bomb costs no more memory than a plain message may)."""
    import zlib

    if method != "zlib":
        raise spamd.ProtocolError("EX_PROTOCOL", f"unknown Compress {method[:20]!r}; only zlib is known")
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(body, limit)
    except zlib.error:
        raise spamd.ProtocolError("EX_DATAERR", "the zlib body does not inflate") from None
    if inflater.unconsumed_tail:
        raise spamd.ProtocolError("EX_DATAERR", f"the message inflates to more than {limit} bytes (--max-size)")
    return out


class _Connection:
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
