"""`nbcli serve`: a spamd-protocol daemon (see `spamd` for the protocol).

One supervisor process binds the sockets (a Unix socket and/or TCP on
loopback unless told otherwise), then forks `workers` processes that each
accept and serve one connection at a time, so at most `workers`
connections are served at once and the rest wait in the listen backlog.
The supervisor restarts a worker that dies (a crash of one never takes the
others down), forwards SIGHUP (reload the models) and on SIGTERM or SIGINT
lets every worker finish the request it is serving, then exits.

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

A connection gets `timeout` seconds for each read; a request head is at
most `spamd.MAX_HEAD` bytes; a message larger than `max_size` is answered
without scoring (as spamd does), and a body over HARD_LIMIT is refused.
Nothing here loses mail: a message that cannot be scored gets an EX_ error
line, on which spamc passes the message through unchanged.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import time
from collections import OrderedDict
from dataclasses import dataclass

from nbcli import spamd
from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.errors import NbcliError

HARD_LIMIT = 64 << 20
DEFAULT_MAX_SIZE = 500 * 1024  # spamc's default
SPAMD_PORT = 783
DEFAULT_MODEL_CACHE = 16  # per-user models a worker keeps loaded (--model-cache)
DEFAULT_MAX_MODEL_SIZE = 128 << 20  # a TELL may not grow a model past this (--max-model-size)
COPY_LIMIT = 64 << 20  # models up to this size are read into memory, not mapped (see Worker.model)


def default_socket() -> str:
    """Where the Unix socket goes by default: $XDG_RUNTIME_DIR/nbcli/spamd.sock,
    else /tmp/nbcli-<uid>/spamd.sock."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = os.path.join(base, "nbcli") if base else f"/tmp/nbcli-{os.getuid()}"
    return os.path.join(folder, "spamd.sock")


@dataclass
class Settings:
    model: str
    socket_path: str | None
    port: int | None
    listen: list
    workers: int
    max_size: int = DEFAULT_MAX_SIZE
    timeout: float = 30.0
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
        path = settings.socket_path
        folder = os.path.dirname(os.path.abspath(path))
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise NbcliError(
                f"cannot listen on {path}: {exc.strerror}", hint="give --socket a writable place"
            ) from None
        if os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
            except OSError:
                os.unlink(path)  # a socket left by a daemon that died
            else:
                raise NbcliError(f"{path}: another server is listening there", hint="stop it, or give --socket")
            finally:
                probe.close()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            os.chmod(path, 0o660)
        except OSError as exc:
            sock.close()
            raise NbcliError(
                f"cannot listen on {path}: {exc.strerror}", hint="give --socket a writable place"
            ) from None
        sockets.append(sock)
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
    from nbcli import modelfile

    first = modelfile.load(settings.model)  # refuse a bad model before binding anything
    _check_spam_model(first, settings, settings.model)
    sockets = bind(settings)
    stopping = False
    children: dict[int, int] = {}

    def spawn(slot: int) -> None:
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

    def on_stop(signum, frame):
        nonlocal stopping
        stopping = True
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
    say(f"serving {settings.model} on {' and '.join(addresses(sockets))} with {settings.workers} worker(s)")
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
            spawn(slot)
    for sock in sockets:
        sock.close()
    if settings.socket_path:
        try:
            os.unlink(settings.socket_path)
        except OSError:
            pass
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
        hold a slot each, not the worker); a complete request is answered
        at once. On SIGTERM: no new connections; the requests in flight are
        read and answered (or time out), then the worker ends."""
        import selectors

        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, self._on_hup)
        try:  # workers die with the supervisor (Linux)
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
        except (OSError, AttributeError):
            pass
        try:
            self.model(self.settings.model)  # loaded before the first request, not during it
        except (NbcliError, OSError):
            pass  # said when a request needs it
        selector = selectors.DefaultSelector()
        for sock in self.sockets:
            selector.register(sock, selectors.EVENT_READ, None)
        pending: dict[int, _Connection] = {}
        listening = True
        while listening or pending:
            if self.stop and listening:
                for sock in self.sockets:
                    selector.unregister(sock)
                listening = False
                continue
            try:
                events = selector.select(timeout=0.25)
            except InterruptedError:
                continue
            now = time.monotonic()
            for key, _ in events:
                if key.data is None:
                    if len(pending) < MAX_PENDING:
                        self._accept(key.fileobj, selector, pending, now)
                    continue
                connection = key.data
                reply = self._receive(connection, now)
                if reply is not False:
                    self._finish(connection, reply, selector, pending)
            for connection in [c for c in pending.values() if c.deadline < now]:
                self._finish(connection, spamd.error("EX_TIMEOUT", "timed out reading the request"), selector, pending)
        selector.close()

    def _accept(self, sock, selector, pending, now) -> None:
        import selectors

        try:
            conn, _ = sock.accept()
        except OSError:  # another worker took it (BlockingIOError), or the client left
            return
        conn.setblocking(False)
        connection = _Connection(conn, now + self.settings.timeout)
        pending[conn.fileno()] = connection
        selector.register(conn, selectors.EVENT_READ, connection)

    def _receive(self, connection: _Connection, now: float):
        """Read what the client sent; the reply once the request is complete
        (None: close without one, as for SKIP), else False (wait for more)."""
        try:
            chunk = connection.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return None
        connection.deadline = now + self.settings.timeout
        if chunk:
            connection.buffer += chunk
        try:
            request = connection.request(eof=not chunk)
            if request is None:
                if not chunk:
                    raise spamd.ProtocolError("EX_PROTOCOL", "the client closed before the request was complete")
                return False
            head, body = request
            return None if head is None else self.respond(head, body)
        except spamd.ProtocolError as exc:
            return exc.reply()

    def _finish(self, connection: _Connection, reply, selector, pending) -> None:
        sock = connection.sock
        try:
            selector.unregister(sock)
        except (KeyError, ValueError):
            pass
        pending.pop(sock.fileno(), None)
        if reply:
            try:
                sock.setblocking(True)
                sock.settimeout(self.settings.timeout)
                sock.sendall(reply)
            except OSError:
                pass
        sock.close()

    def handle(self, conn: socket.socket) -> None:
        """Serve one connection to its end, blocking: what `serve`'s loop
        does for many at once (for benchmarks and tests)."""
        conn.setblocking(True)
        conn.settimeout(self.settings.timeout)
        connection = _Connection(conn, float("inf"))
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
                body = _inflate(body, compress)
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
        from nbcli import modelfile
        from nbcli.errors import ModelFileError
        from nbcli.filtering import Verdicts

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
        from nbcli.filtering import header_value

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
        from nbcli import learning, modelfile
        from nbcli.sources import Document

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
                analysed = learning.analyse(current.analyzer, docs)
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


def _inflate(body: bytes, method: str) -> bytes:
    """A body sent with `Compress: zlib` (spamc -z), at most HARD_LIMIT
    bytes once inflated."""
    import zlib

    if method != "zlib":
        raise spamd.ProtocolError("EX_PROTOCOL", f"unknown Compress {method[:20]!r}; only zlib is known")
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(body, HARD_LIMIT)
    except zlib.error:
        raise spamd.ProtocolError("EX_DATAERR", "the zlib body does not inflate") from None
    if inflater.unconsumed_tail:
        raise spamd.ProtocolError("EX_DATAERR", f"the message inflates to more than {HARD_LIMIT} bytes")
    return out


MAX_PENDING = 256  # connections a worker reads at once


class _Connection:
    """A client's connection while its request is read: the bytes so far,
    the request head once complete, and when it times out."""

    def __init__(self, sock: socket.socket, deadline: float):
        self.sock = sock
        self.deadline = deadline
        self.buffer = b""
        self.head: spamd.Request | None = None
        self.body_start = 0

    def request(self, eof: bool = False):
        """(request, body) once complete; (request, None) for PING; (None,
        None) for SKIP; None while incomplete. ProtocolError for a bad one.
        eof: the client has finished sending (a bare request line then
        counts as a head: PING and SKIP need nothing more)."""
        if self.head is None:
            if eof and self.buffer.strip() and b"\n" not in self.buffer.rstrip():
                self.buffer = self.buffer.rstrip() + b"\r\n\r\n"
            end = spamd.head_end(self.buffer)
            if end < 0:
                if len(self.buffer) > spamd.MAX_HEAD:
                    raise spamd.ProtocolError("EX_PROTOCOL", f"request head over {spamd.MAX_HEAD} bytes")
                return None
            self.head = spamd.parse_head(self.buffer[:end])
            self.body_start = end
            if self.head.verb == "SKIP":
                return None, None
            if self.head.verb == "PING":
                return self.head, None
            length = self.head.content_length()
            if length is None:
                raise spamd.ProtocolError("EX_PROTOCOL", f"{self.head.verb} needs a Content-length")
            if length > HARD_LIMIT:
                raise spamd.ProtocolError("EX_DATAERR", f"message of {length} bytes is over {HARD_LIMIT}")
        if self.head.verb in ("PING", "SKIP"):
            return (None, None) if self.head.verb == "SKIP" else (self.head, None)
        length = self.head.content_length()
        have = len(self.buffer) - self.body_start
        if have > length:
            raise spamd.ProtocolError("EX_PROTOCOL", "more bytes than Content-length")
        if have < length:
            return None
        return self.head, self.buffer[self.body_start :]
