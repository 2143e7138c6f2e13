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
so the next request uses it; SIGHUP reads them all again (each kept
until its file reads whole). Models up to
COPY_LIMIT are read into memory (a copy per worker), larger ones mapped;
see `Worker.model` for why (a file rewritten in place). Per-user models
(--models-dir) are kept for the --model-cache most recently used, so a
worker's memory and descriptors do not grow with the number of users.

TELL (with --allow-tell) decisions: a Remove without Message-class (what
`spamc -L forget` sends) forgets the message from the class the record
holds it in; a Set learns a message of at most --max-size, into a model
that stays under --max-model-size (else refused with how to prune). With
--models-dir, a TELL for a user without a model of their own does what
--user-tell says (`Worker.tell_path`): `own` (the default) first gives the
user a model of their own, a copy of the shared model, and teaches that;
`shared` teaches the shared model, which every user without a model of
their own is scored with; `refuse` answers EX_NOPERM. A TELL naming no user
never teaches the shared model under `own` or `refuse`. Any failure while answering a request is that request's error
reply (`Worker.respond`), never the worker's end. A TELL the library
refuses is replied with its error's text, said as below (`Worker.said`).

This module is the supervisor and what a request gets (`Worker`: models,
scores, TELL). Where the daemon listens is in `listening`; how a worker
reads and writes its many connections, and the limits on slow or greedy
clients, in `connections` (`Worker`'s base class); the settings and their
defaults in `settings`.

Nothing here loses mail: a message that cannot be scored gets an EX_ error
line, on which spamc passes the message through unchanged.

Errors name parameters, not flags (errors.ParameterError): the model
refused before binding (`_check_spam_model`) reaches the command line's
error boundary, which says it with flags. The same error met by a worker
(a per-user model, a replaced one) becomes a protocol reply, which never
passes that boundary: the worker says it with `Settings.in_terms`, which
`nbcli serve` sets to the command line's `in_flag_terms` (this package
cannot import the command line), so the replies keep the flags. The
daemon's own protocol errors (not enabled TELL, --max-size, --models-dir,
--max-model-size) are protocol text, not library errors: they keep the
flags of the daemon they describe.
"""

from __future__ import annotations

import os
import signal
import time
from collections import OrderedDict

from nbcli.errors import NbcliError, ParameterError
from nbcli.run.executor import give_back_memory
from nbcli.spam import spamd
from nbcli.spam.connections import Connections
from nbcli.spam.listening import addresses, bind, remove_socket, socket_identity
from nbcli.spam.settings import BODY_MARGIN, Settings

COPY_LIMIT = 64 << 20  # models up to this size are read into memory, not mapped (see Worker.model)
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


# -- the supervisor ---------------------------------------------------------------


# A worker holding a model through its journal (`nb.overlay.JournalView`)
# derives every term's weights once (`JournalView.flatten`), so that a CHECK
# costs what it costs on the model written whole: when it reads the model
# from scratch (O(model) already), and after an update (a TELL, another
# writer's learn: O(the update), the view's weights all move with the
# totals) once the new view has scored FLAT_AFTER messages through its
# layers, in `settle`, after a reply. The rule is the ski-rental one: a
# worker pays for the flat table only once it has already paid about as
# much again on the slower path (at 1.41M --ngrams 3 terms, measured
# in-process: flattening 170-250 ms, the layers' path 0.3 ms a message
# more), so a model taught without pause costs at most twice the cheaper
# of the two, and a quiet one is scored at full speed. The table costs the
# memory of a model file's hashes and weights (39 MB at 1.62M terms); the
# pages of the base it was derived from are released as it is built.
FLAT_AFTER = 1000


def _rewritten_in_place(held, now) -> bool:
    """Whether a journal changed in place between two of its stamps
    (`journal.stamp`: inode, size, mtime): the same file and size, another
    mtime. An append changes the size; a roll or a compaction, the file.
    (A change within the file system's clock tick of the last write keeps
    the mtime, and is not seen.)"""
    return held is not None and now is not None and held[:2] == now[:2] and held[2] != now[2]


def _flatten(classifier) -> None:
    from nbcli.nb.overlay import JournalView
    from nbcli.store.integrity import release_pages

    if isinstance(classifier, JournalView) and classifier.flat is None:
        try:  # run outside any request's error handling (`settle`): nothing here may end the worker
            classifier.flatten(release_pages)
        except Exception:  # a view that cannot be flattened (a crafted journal's) scores through its layers
            classifier.scored_unflat = -(1 << 62)  # not tried again


def run(settings: Settings, say) -> int:
    """Serve until SIGTERM/SIGINT; `say(line)` writes to stderr. The
    daemon's events (start, reload, a worker's end, stop) are also said in
    the --log-format / --syslog form when either asks for it (`requestlog`),
    and each worker logs its requests there."""
    from nbcli.spam.requestlog import RequestLog
    from nbcli.store import modelfile

    first = modelfile.load_view(settings.model)  # refuse a bad model before binding anything
    _check_spam_model(first, settings, settings.model)
    del first  # not kept: forked workers would each hold it beside the model they read (a journal's view is heap)
    give_back_memory()
    sockets = bind(settings)
    journal = RequestLog(settings.log_format, settings.syslog, settings.syslog_socket)
    if settings.syslog is not None and not os.path.exists(settings.syslog_socket):
        say(f"warning: no syslog socket at {settings.syslog_socket} (yet): log lines are dropped until there is one")
    figures = exporter = None
    if settings.metrics is not None:
        from nbcli.spam.metrics import SharedFigures

        figures = SharedFigures(settings.workers)
        exporter = bind_metrics(settings.metrics)
    structured = settings.syslog is not None or settings.log_format == "json"  # else `say` is the event log
    ours = socket_identity(settings.socket_path) if settings.socket_path else None
    where = " and ".join(addresses(sockets))
    stopping = False
    children: dict[int, int] = {}

    def spawn(slot: int) -> None:  # slot -1: the --metrics exporter
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
                    if slot < 0:
                        for sock in sockets:
                            sock.close()
                        from nbcli.spam.metrics import serve_exposition

                        serve_exposition(figures, exporter)
                    journal.forked()
                    if figures is not None:
                        figures.use_slot(slot)
                    if exporter is not None:
                        exporter.close()
                    Worker(settings, sockets, journal, figures).serve()
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
        if exporter is not None:
            exporter.close()
        if settings.socket_path:
            remove_socket(settings.socket_path, ours)
        for pid in list(children):
            _kill(pid, signal.SIGTERM)

    def on_hup(signum, frame):
        for pid, slot in list(children.items()):
            if slot >= 0:
                _kill(pid, signal.SIGHUP)
        if figures is not None:
            figures.add("reloads")
        if structured:
            journal.event("reload", workers=settings.workers)
        else:
            say(f"reload: {settings.workers} worker(s) read the models again")

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGHUP, on_hup)
    for slot in range(settings.workers):
        spawn(slot)
    if exporter is not None:
        spawn(-1)
        host, port = exporter.getsockname()[:2]
        say(f"metrics on http://{host if ':' not in host else f'[{host}]'}:{port}/metrics")
    say(f"serving {settings.model} on {where} with {settings.workers} worker(s)")
    if structured:
        journal.event("start", model=settings.model, listen=where, workers=settings.workers, worker=os.getpid())
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        slot = children.pop(pid, None)
        if slot is not None and not stopping:
            what = "the metrics exporter" if slot < 0 else "worker"
            say(f"warning: {what} {pid} ended ({_how(status)}); starting another")
            if figures is not None and slot >= 0:
                figures.add("restarts")
            if structured:
                journal.event("worker-exit", "warning", worker=pid, status=_how(status), restarted=True)
            time.sleep(0.1)
            spawn(slot)  # not if a SIGTERM came meanwhile
    for sock in sockets:
        sock.close()
    if exporter is not None:
        exporter.close()
    if settings.socket_path:
        remove_socket(settings.socket_path, ours)
    for sig in (signal.SIGTERM, signal.SIGINT):  # stopped: another stop signal while Python exits is not a death
        signal.signal(sig, signal.SIG_IGN)
    say("stopped")
    if structured:
        journal.event("stop", worker=os.getpid())
    return 0


def bind_metrics(address: str):
    """The --metrics endpoint's listening TCP socket (bound before any fork)."""
    import socket

    from nbcli.spam.metrics import parse_address

    host, port = parse_address(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise NbcliError(
            f"cannot listen for --metrics on {address}: {exc.strerror}", hint="give a free ADDR:PORT"
        ) from None
    sock.listen(16)
    return sock


def _kill(pid: int, sig) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _words(value: str) -> set[str]:
    """The comma-separated words of a TELL header's value, lower case."""
    return {word.strip().lower() for word in value.split(",")}


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _check_spam_model(classifier, settings: Settings, path: str) -> None:
    from nbcli.spam.filtering import check_mail_model

    classifier.check_ready(path)
    check_mail_model(classifier, path, "a spamd server")
    if len(classifier.classes) != 2 or settings.spam_class not in classifier.classes:
        raise ParameterError(
            "spam_class",
            "{path} has classes {classes}; a spamd server needs a two-class model with a {wanted!r} class",
            hint="name the spam class with {spam_class}",
            path=path,
            classes=", ".join(classifier.classes),
            wanted=settings.spam_class,
        )


# -- a worker ------------------------------------------------------------------------


class Worker(Connections):
    """A worker process: its connections (`Connections`) and the answer to
    each request: the models it keeps loaded, the scores, TELL."""

    def __init__(self, settings: Settings, sockets, journal=None, figures=None):
        super().__init__(settings, sockets)
        self.figures = figures  # --metrics: this worker's row of the shared figures
        # path -> (file identity, classifier, verdicts, model id, copied), least recently used first
        self.models: OrderedDict[str, tuple] = OrderedDict()
        self.stale: set[str] = set()  # models held at a SIGHUP: read again when next needed (`model`)
        self.unfollowed: dict[str, tuple] = {}  # path: a TELL's (update, journal state, identity after): `settle`
        self.journal = journal if settings.log_requests or settings.syslog is not None else None

    def logged(self, request: spamd.Request | None, body, size: int, started: float | None, error: str | None) -> None:
        """The request's line (`requestlog`): verdict, score and required
        from `self.outcome` (set by `score` and `tell`), else the EX_ error
        it was answered with, else unscored (an oversize message)."""
        if (self.journal is None and self.figures is None) or (
            request is not None and request.verb in ("PING", "SKIP")
        ):
            return
        from nbcli.spam.requestlog import clean, message_id

        verdict, score, required = error or "unscored", None, None
        if error is None and self.outcome is not None:
            verdict, score, required = self.outcome
        verb = request.verb if request is not None else "-"
        seconds = None if started is None else round(time.monotonic() - started, 6)
        if self.figures is not None:
            self.figures.request(verb, verdict, error, seconds, int(size))
        if self.journal is None:
            return
        user = request.headers.get("user") if request is not None else None
        self.journal.request(
            verb=verb,
            verdict=verdict,
            score=score,
            required=required,
            user=clean(user) if user else None,
            size=int(size),
            seconds=seconds,
            mid=message_id(body),
            worker=os.getpid(),
        )

    def opened(self, count: int) -> None:
        if self.figures is not None:
            self.figures.set("open", count)

    def serve(self) -> None:
        """Serve the connections (`Connections.serve_connections`) until
        SIGTERM, with the served model loaded first; SIGHUP marks the
        models held to be read again when next needed (`model`)."""
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
            self.model(self.settings.model, with_id=False)  # loaded before the first request; its id when asked
        except (NbcliError, OSError):
            pass  # said when a request needs it
        self.serve_connections()

    def _on_stop(self, signum, frame):
        self.stop = True

    def _on_hup(self, signum, frame):
        # read again when next needed, each kept until its file reads whole: a SIGHUP while the file was damaged
        # dropped the last good model, and every request failed until a good file and another SIGHUP
        self.stale = set(self.models)

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
                body = spamd.inflate(body, compress, self.settings.max_size + BODY_MARGIN)
            if request.verb == "TELL":
                return self.tell(request, body)
            return self.score(request, body, self.model_path(request))
        except spamd.ProtocolError:
            raise
        except NbcliError as exc:
            raise spamd.ProtocolError("EX_SOFTWARE", f"cannot answer {request.verb}: {self.said(exc)}") from None
        except OSError as exc:
            raise spamd.ProtocolError("EX_IOERR", f"cannot answer {request.verb}: {exc.strerror or exc}") from None
        except Exception as exc:  # noqa: BLE001 (one request's failure, never the worker's)
            raise spamd.ProtocolError(
                "EX_SOFTWARE", f"cannot answer {request.verb}: {type(exc).__name__}: {exc}"
            ) from None

    def said(self, exc: Exception) -> str:
        """An error as a reply says it: a library error through the
        settings' `in_terms` (`nbcli serve` gives the command line's
        `in_flag_terms`, so a ParameterError names flags), any other as it is."""
        in_terms = self.settings.in_terms
        return str(in_terms(exc) if in_terms is not None and isinstance(exc, NbcliError) else exc)

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

    def model(self, path: str, with_id: bool = True, writing: bool = False):
        """(classifier, verdicts, model id) of the model file at `path`, read
        again if the file was replaced, and followed if only its journal
        grew (a TELL, a learn: store/journal.py): the new updates are laid
        over the model held (`modelfile.followed`, O(the updates)), and its
        own TELL's update is laid over it as it is appended (`tell`). A
        model with a journal is read as a view (`modelfile.load_view`),
        scored a batch's terms at a time. A damaged journal keeps the last
        good model serving, as a damaged replacement does; a journal changed
        in place at its size (damage, not an append) is read again whole,
        not followed from its end. with_id False: the model id (O(model)
        for a view, computed once per state) is not wanted (None). writing
        (a TELL's): where the model cannot be read again, the error, not the
        last good model, which stays held for the CHECKs: a TELL never
        appends to a journal whose records do not read.

        A model of up to COPY_LIMIT bytes is read into memory, not mapped,
        so a file rewritten in place (`cp new.nb mail.nb` truncates it
        first) cannot take the worker down with SIGBUS: the copy keeps
        serving until the new file reads whole. A larger model is mapped;
        once its file changes in place (same inode, another size or mtime)
        the old mapping is never touched again, and requests get an error
        reply until the file reads whole. Models other than the served one
        (--models-dir) are kept for the --model-cache most recently used."""
        from nbcli.errors import ModelFileError
        from nbcli.store import modelfile

        self.settle()  # a TELL answered in this round of the loop, which settles after each
        try:
            identity = self._identity(path)
        except FileNotFoundError:
            raise ModelFileError(f"{path}: no such model file (removed?)") from None
        held = self.models.pop(path, None)  # put back last: the most recently used
        stale = path in self.stale  # held at a SIGHUP: read again, the last good kept if the file cannot be read
        self.stale.discard(path)
        if held is not None and held[0][:4] != identity[:4] and not held[4] and held[0][:2] == identity[:2]:
            held = None  # mapped, and changed in place: its pages may be gone (not for a journal appended to)
        # a journal changed in place (its size the same: damage, not an append) is read whole, not followed
        # from its end: a TELL would append after the damage, and a recovery keeping the updates before it
        # (--drop-bad-tail) would drop the TELL
        rewritten = held is not None and _rewritten_in_place(held[0][4], identity[4])
        if held is not None and not stale and not rewritten and held[0] != identity and held[0][:4] == identity[:4]:
            followed = modelfile.followed(held[1], path, copy=held[4])  # only the journal grew: its new updates
            if followed is not None:
                held = self._held(path, identity, followed, held[4])
        if held is None or held[0] != identity or stale:
            copy = identity[2] <= COPY_LIMIT
            try:
                classifier = modelfile.load_view(path, copy=copy)
                _check_spam_model(classifier, self.settings, path)
            except NbcliError:
                if held is None:
                    raise
                if writing:  # never learned into: the TELL is refused, CHECKs go on with the last good model
                    self.models[path] = held
                    raise
                classifier = None  # a damaged replacement: keep serving the last good model
            if classifier is not None:
                _flatten(classifier)  # read from scratch, O(model) already: its weights derived too
                held = self._held(path, identity, classifier, copy)
                give_back_memory()  # what reading it left free (a journal's records, decoded and merged)
        if with_id and held[3] is None:
            held = (*held[:3], modelfile.model_id(held[1]), held[4])
            if self.figures is not None and path == self.settings.model:
                self.figures.model(held[3], float(held[1].model.class_count.sum()))
        self.models[path] = held
        self._evict()
        return held[1:4]

    def settle(self) -> None:
        """Lay the update of a TELL just answered over the model the worker
        holds (`modelfile.followed`, O(the update)), once its reply is on
        its way: the TELL's client does not wait for it, and the next
        request finds the model as it is."""
        from nbcli.store import modelfile

        while self.unfollowed:
            path, (update, state, identity) = self.unfollowed.popitem()
            held = self.models.get(path)
            try:  # run by the connection loop, outside any request: nothing here may end the worker
                followed = None if held is None else modelfile.followed(held[1], path, own=(update, state))
                if followed is not None and hasattr(followed, "terms"):
                    followed.terms()  # its term sum moved by the update now, not in the path of a request that names it
            except Exception:  # the next request follows the journal from the model's end, or reads it again
                followed = None
            if followed is not None:
                self.models[path] = self._held(path, identity, followed, held[4])
        for held in self.models.values():  # a view that has scored FLAT_AFTER messages since it changed
            if getattr(held[1], "scored_unflat", 0) >= FLAT_AFTER:
                _flatten(held[1])
                give_back_memory()  # what deriving it left free

    @staticmethod
    def _identity(path: str) -> tuple:
        from nbcli.store import journal

        st = os.stat(path)
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, journal.stamp(path))  # a TELL appends

    def _held(self, path: str, identity: tuple, classifier, copy: bool) -> tuple:
        """What the worker keeps of a model: (identity, classifier, verdicts,
        model id (None until asked for), whether it is a copy in memory)."""
        from nbcli.spam.filtering import Verdicts

        s = self.settings
        rule = classifier.decision_rule()
        verdicts = Verdicts(classifier.classes, s.spam_class, s.spam_cutoff, s.ham_cutoff, rule, s.cutoffs_given)
        return (identity, classifier, verdicts, None, copy)

    def _evict(self) -> None:
        """Release the least recently used models beyond --model-cache (the
        served model is never released)."""
        others = [p for p in self.models if p != self.settings.model]
        for path in others[: max(0, len(others) - self.settings.model_cache)]:
            self.models.pop(path, None)

    def score(self, request: spamd.Request, body: bytes, path: str) -> bytes:
        from nbcli.spam.headers import header_value, marked

        if len(body) > self.settings.max_size or not body.strip():
            verdict = spamd.unscored()
            self.outcome = ("unscored", None, float(spamd.score_text(self.t)))
            return spamd.answer(request, verdict, self.t, body)
        try:
            # a CHECK's reply names no model: the id (O(model) once after a TELL for a journalled
            # model) is computed for the verbs that show it, and for --metrics, which labels by it
            wanted = request.verb != "CHECK" or self.figures is not None
            classifier, verdicts, model_id = self.model(path, with_id=wanted)
            explain = self.settings.explain if request.verb in ("REPORT", "REPORT_IFSPAM", "SYMBOLS") else 0
            result = classifier.score([body], ["mail"], explain)
            log_proba, whys = result if explain else (result, None)
            row = log_proba[0]
            name, label, p = verdicts.of(row)
            # a model's decision threshold may move its spam cut-off (`Verdicts`): the score required moves with it
            required = spamd.threshold(verdicts.spam_cutoff) if verdicts.binary else self.t
            s = verdicts.spam_index
            log_odds = float(row[s] - row[1 - s])
            evidence, unit = [], ""
            if whys:
                why = whys[0]
                sign = 1.0 if label == verdicts.spam_class or why["versus"] != verdicts.spam_class else -1.0
                evidence = [(t["term"], sign * t["contribution"]) for t in why["terms"]]
                unit = why["unit"]  # raw log-odds for a calibrated model: not the score's units
            # spamd's "is spam" is the one verdict (filtering.Verdicts), as filter and predict give it
            verdict = spamd.Verdict(name, label, p, log_odds, name == "spam", evidence, model_id or "", unit=unit)
            # the score and required score as the reply gives them
            self.outcome = (name, float(spamd.score_text(log_odds)), float(spamd.score_text(required)))
        except (NbcliError, OSError, ValueError, MemoryError) as exc:
            raise spamd.ProtocolError("EX_SOFTWARE", f"cannot score the message: {self.said(exc)}") from None
        processed = None
        if request.verb in ("PROCESS", "HEADERS"):
            processed = marked(body, verdict, required, header_value(label, p, model_id))
        return spamd.answer(request, verdict, required, processed)

    def tell_path(self, request: spamd.Request) -> str:
        """The model a TELL teaches: MODEL, or with --models-dir the
        request's user's own model. For a user without one, --user-tell
        decides: `own` copies the shared model to DIR/USER.nb first (the
        user's corrections then change only their own filter, which starts
        as everyone's: its counts, settings, calibration and record, so a
        message the shared model learned is not counted twice), `shared`
        teaches MODEL, `refuse` answers EX_NOPERM. A TELL naming no user
        teaches the shared model only under `shared`.

        Why `own` by default: one user's TELL must not change what every
        other user is scored with, and a user who corrects their filter
        wants it to learn. Its cost is disk: each such user holds a copy of
        the shared model (prune the shared model, or use `refuse`, where
        that matters)."""
        if self.settings.models_dir is None:
            return self.settings.model
        own = self.own_model(request)
        if own is not None:
            return own
        policy = self.settings.user_tell
        if policy == "shared":
            return self.settings.model
        user = request.headers.get("user")
        if policy == "own" and user:
            return self.new_own_model(user)
        if user:  # (--user-tell refuse)
            fix = "give the user a model (copy MODEL to DIR/USER.nb), or start with --user-tell own"
        else:  # under own or refuse: a TELL naming no user teaches no model (the shared one only under shared)
            fix = "name the user (spamc -u USER), or start with --user-tell shared to teach the shared model"
        who = f"user {user} has no model of their own" if user else "the TELL names no User"
        raise spamd.ProtocolError(
            "EX_NOPERM", f"{who} in --models-dir, and a TELL does not teach the shared model; {fix}"
        )

    def new_own_model(self, user: str) -> str:
        """DIR/USER.nb, made a copy of the shared model if it does not exist:
        written to a temporary file in DIR, made durable, then linked into
        place, which never replaces a file: a copy made meanwhile by
        another worker (or by hand) wins, and no reader sees a partial file.
        The copy is of the shared model as it is, journal included
        (`_shared_copy`)."""
        import tempfile

        from nbcli.store.integrity import fsync_folder

        folder = self.settings.models_dir
        assert folder is not None
        target = os.path.join(folder, f"{user}.nb")
        fd, temporary = tempfile.mkstemp(prefix=f".{user}.", suffix=".nb.tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                self._shared_copy(out)
                out.flush()
                os.fsync(out.fileno())
            try:
                os.link(temporary, target)
            except FileExistsError:
                pass
            fsync_folder(folder)
        except OSError as exc:
            raise spamd.ProtocolError(
                "EX_CANTCREAT", f"cannot give user {user} a model of their own in --models-dir: {exc.strerror}"
            ) from None
        finally:
            try:
                os.unlink(temporary)
            except OSError:
                pass
        return target

    def _shared_copy(self, out) -> None:
        """The shared model as every command reads it, into `out`: its file's
        bytes, or, when it has a journal (an administrator's `nbcli learn`
        into it), the model read through the journal and written whole. The
        file alone lacks the journal's updates, and its record the
        documents they learned: a user's copy lost them, and a message the
        shared model had learned was counted again when the user taught it.
        Read under the shared model's lock, so the file and its journal are
        one state."""
        import shutil

        from nbcli.store import journal, modelfile

        shared = self.settings.model
        with modelfile.locked(shared):
            if os.path.lexists(journal.path_of(shared)):
                modelfile.write_to(modelfile.load(shared), out, shared)
                return
            with open(shared, "rb") as model_file:
                shutil.copyfileobj(model_file, out)

    def tell(self, request: spamd.Request, body: bytes) -> bytes:
        """Learn or forget the message (`Set: local` / `Remove: local`) with
        the learning loop's machinery: the record, the lock, the atomic
        replace, durable before the reply. A Remove without a
        Message-class (what `spamc -L forget` sends) forgets the message
        from whichever class the record holds it in. What one TELL may add
        is bounded: a message over --max-size is not learned, the model's
        analysis cap applies as in training, and a model that would grow
        past --max-model-size is refused (prune it). A model that keeps a
        journal is not rebuilt: the Update of the message's terms is
        appended (`learning.learn_update`, `modelfile.append_update`), and
        the worker reads the model through its journal on the next request."""
        from nbcli.fit import learning
        from nbcli.fit.analysed import analyse_for_learning
        from nbcli.store import modelfile
        from nbcli.text.sources import Document

        if not self.settings.allow_tell:
            raise spamd.ProtocolError("EX_UNAVAILABLE", "TELL commands are not enabled; start with --allow-tell")
        kind = request.headers.get("message-class", "").strip().lower()
        # "Set: local" or "Set: local, remote" (a list of databases): the word, not a substring ("nonlocal")
        do_set = "local" in _words(request.headers.get("set", ""))
        do_remove = "local" in _words(request.headers.get("remove", ""))
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
            if path not in self.models:  # a model not held yet is read before the lock: no writer waits on that
                self.model(path, with_id=False)
            with modelfile.locked(path):
                # as it is now (followed, or read again)
                current, verdicts, _ = self.model(path, with_id=False, writing=True)
                if do_set:
                    self._check_model_size(path, self.models[path][0][2])  # its file's size, as just found
                label = None if not kind else verdicts.spam_class if kind == "spam" else verdicts.ham_name
                analysed = analyse_for_learning(current.analyzer, [Document("-", label, body, "mail")])
                direct = None
                # run.updating.change_locked's steps, written out: importing it here would make the import
                # chain from nbcli.__main__ one module longer than tests/test_imports.py allows
                if modelfile.keeps_journal(current):  # the change alone
                    direct = learning.learn_update(current, analysed, forgetting=not do_set)
                if direct is not None:
                    update, outcome, _ = direct
                    changed = update is not None
                    if changed:
                        if do_set and self.settings.max_model_size:  # the model and its journal with this update
                            self._check_model_size(path, modelfile.journaled_bytes(path, update))
                        state = modelfile.append_update(path, update, since=current)
                        if state is not None and path in self.models:  # laid over the model held: `settle`
                            self.unfollowed[path] = (update, state, self._identity(path))
                elif do_set:
                    updated, outcome = learning.learn(current, analysed)
                    changed = updated is not current
                else:
                    updated, outcome = learning.forget(current, analysed)
                    changed = outcome.forgotten > 0
                if changed and direct is None:
                    if do_set:
                        self._check_model_size(path, modelfile.payload_bytes(modelfile.to_payload(updated)))
                    modelfile.save(updated, path, since=current)  # appended to the model's journal
        except NbcliError as exc:
            if do_remove and "never learned" in str(exc):
                return spamd.tell_reply(False, False)  # nothing to remove: no DidRemove, as spamd
            raise spamd.ProtocolError("EX_SOFTWARE", f"cannot learn the message: {self.said(exc)}") from None
        did = ("learned-" + kind if do_set else "forgot") if changed else "unchanged"
        self.outcome = (did, None, None)
        return spamd.tell_reply(do_set and changed, do_remove and changed)

    def _check_model_size(self, path: str, size: int) -> None:
        cap = self.settings.max_model_size
        if cap and size > cap:
            raise spamd.ProtocolError(
                "EX_UNAVAILABLE",
                f"{path} would be {size >> 20} MB, over --max-model-size ({cap >> 20} MB); not learned: "
                f"prune it (nbcli prune {path} --min-count 2) or raise --max-model-size",
            )
