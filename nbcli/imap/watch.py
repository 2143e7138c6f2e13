"""`nbcli imap --idle` (issue 29, step 4): stay connected and run a pass
whenever the mailbox changes.

    watch(connect, one_pass, "INBOX", "Junk")

`connect()` returns a logged-in `imaplib.IMAP4`; `one_pass(imap)` runs one
pass on it (learn the corrections, file the new mail). `watch` knows nothing
of what a pass does: it runs one at start, then one each time the server says
the inbox or Junk changed, until SIGTERM or SIGINT, and reconnects when the
connection drops.

Decisions:

- **What wakes a pass.** The inbox is EXAMINEd (read-only: the watcher itself
  never changes anything) and watched with IDLE (RFC 2177) where the server
  announces it, else with NOOP every `poll_seconds`. An untagged EXISTS,
  EXPUNGE or FETCH (a flag changed) about the inbox wakes a pass: new mail,
  a message moved in or out, `$Junk` set by the user.
- **Junk.** IDLE watches the selected folder only, so Junk is checked with
  STATUS (MESSAGES UIDNEXT UIDVALIDITY, and HIGHESTMODSEQ where the server has
  CONDSTORE, which also catches a `$NotJunk` flag set inside Junk) every
  `junk_seconds` (IDLE is ended with DONE for it and issued again: three
  short exchanges) or at every poll. A second connection idling on Junk
  would notice sooner, but costs a connection (providers limit them) and a
  thread; corrections are learning, where a minute does not matter, while
  new mail is filed at once. Without CONDSTORE a flag changed inside Junk
  alone is seen at the next pass something else causes.
- **No change is lost during a pass.** The marks compared (the inbox's
  UIDVALIDITY and UIDNEXT, Junk's STATUS) are taken *before* the pass: mail
  that arrived while the pass ran makes another pass at once, a correction
  in Junk made while it ran one at the next Junk check. The price is one
  extra, quick pass after a pass that filed spam (its own moves changed
  Junk); that pass changes nothing, so it never loops. A flag changed in the
  inbox while a pass ran is seen at the next change.
- **IDLE** is done on imaplib's connection by hand (Python 3.11's imaplib has
  no IDLE): the tagged IDLE, its `+` continuation (a tagged NO/BAD instead
  means the server refused it: this connection polls instead), untagged
  responses parsed by imaplib's own reader as they come, DONE, the tagged
  OK. All on one thread: waiting is a select() on the socket and on a pipe a
  stop signal writes to, after looking whether imaplib's buffered file (or
  TLS) already holds unread bytes, which select() cannot see. IDLE is issued
  again every `idle_seconds` (24 minutes; the server may end it after 30)
  and at every Junk check. TCP keepalive is switched on, so a peer that
  vanished without a word ends the wait within minutes.
- **Reconnecting.** A dropped connection (imaplib's `abort`; a refused,
  reset or timed-out connection, an unreachable network, a name that does
  not resolve, a TLS error other than a certificate that does not verify; a
  login answered `[UNAVAILABLE]`; from `connect()`, also an error raised
  while handling one of those, such as the command's one-line "cannot
  connect" NbcliError) is retried after an exponential backoff, `Backoff`:
  1 s, 2 s, 4 s, ... capped at 5 minutes, each delay drawn at random between
  half and all of it (so many clients cut off together do not come back
  together), reset by a completed pass; one line on stderr per attempt. A
  pass runs at once after a reconnect. Anything else (a login refused with a
  wrong password, a certificate that no longer verifies, a local OSError
  such as a full disk, a broken pipe, which is stdout's since imaplib
  reports a socket's as `abort`, an NbcliError of the pass) ends the
  watch: it is not retried. The very first connection is not retried either: failing there
  is most likely the configuration (host, port, certificate), better said at
  once; a service manager restarts the command if wanted.
- **Stopping.** SIGTERM or SIGINT asks to stop: a pass in progress finishes
  (a pass is crash-safe, but finishing is cheaper than a re-scan and leaves
  nothing to redo), an IDLE is ended with DONE, the session with LOGOUT, and
  `watch` returns (the command exits 0). The first signal puts the previous
  handlers back, so a second one acts at once (SIGINT: "interrupted", exit
  130; SIGTERM: the process dies), which a crash-safe pass allows.
"""

from __future__ import annotations

import contextlib
import errno
import imaplib
import os
import random
import re
import select
import signal
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass

from nbcli.imap import folder_names

IDLE_SECONDS = 24 * 60
JUNK_SECONDS = 60.0
POLL_SECONDS = 60.0
DONE_SECONDS = 30.0  # the longest wait for the server's answer to DONE
NETWORK_ERRNOS = {
    errno.ENETUNREACH,
    errno.EHOSTUNREACH,
    errno.ENETDOWN,
    errno.EHOSTDOWN,
    errno.ENETRESET,
    errno.ETIMEDOUT,
    errno.ECONNABORTED,
    errno.ECONNRESET,
    errno.ECONNREFUSED,
}
WAKE = ("EXISTS", "EXPUNGE", "FETCH", "RECENT")  # untagged responses saying the mailbox changed


@dataclass(frozen=True)
class Backoff:
    """Delays between reconnection attempts: attempt n waits a random time
    between half and all of min(cap, first * 2**(n-1)) seconds."""

    first: float = 1.0
    cap: float = 300.0

    def delay(self, attempt: int, draw=random.random) -> float:
        full = min(self.cap, self.first * 2 ** min(attempt - 1, 40))
        return full * (0.5 + 0.5 * draw())


class Stop:
    """A request to stop, by `request()` or by SIGTERM/SIGINT while
    `signals()` is in force; `wait` sleeps until it comes (or a socket has
    data): a pipe the request writes to wakes the select() at once."""

    def __init__(self):
        self.requested = False
        self._read, self._write = os.pipe()
        for fd in (self._read, self._write):
            os.set_blocking(fd, False)

    def request(self, *_signal) -> None:
        self.requested = True
        with contextlib.suppress(OSError):  # the pipe is full: it is readable already
            os.write(self._write, b"\0")

    def wait(self, seconds: float, sock=None) -> bool:
        """Sleep up to `seconds`; True when `sock` became readable first."""
        if self.requested:
            return False
        watched = [self._read] if sock is None else [self._read, sock]
        ready = select.select(watched, [], [], max(0.0, seconds))[0]
        return sock is not None and sock in ready and not self.requested

    @contextlib.contextmanager
    def signals(self):
        """SIGTERM and SIGINT request the stop (in the main thread only); the
        first puts the previous handlers back, so a second acts at once."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {}

        def on_signal(signum, frame):
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.request()

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, on_signal)
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def close(self) -> None:
        os.close(self._read)
        os.close(self._write)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def watch(
    connect,
    one_pass,
    folder: str = "INBOX",
    junk: str | None = "Junk",
    *,
    idle: bool = True,
    idle_seconds: float = IDLE_SECONDS,
    junk_seconds: float = JUNK_SECONDS,
    poll_seconds: float = POLL_SECONDS,
    backoff: Backoff = Backoff(),
    log=_stderr,
    stop: Stop | None = None,
) -> int:
    """Run `one_pass(imap)` at start and whenever `folder` or `junk`
    changes, on connections made by `connect()`, until a stop is requested
    (SIGTERM/SIGINT, or `stop.request()` when a Stop is given). `idle=False`
    polls even where the server has IDLE. Returns the number of passes run."""
    own = stop is None
    stop = Stop() if own else stop
    watcher = _Watcher(folder, junk, idle, idle_seconds, junk_seconds, poll_seconds, log, stop)
    try:
        with stop.signals() if own else contextlib.nullcontext():
            return watcher.run(connect, one_pass, backoff)
    finally:
        if own:
            stop.close()


class _Watcher:
    def __init__(self, folder, junk, idle, idle_seconds, junk_seconds, poll_seconds, log, stop):
        self.folder, self.junk, self.idle = folder, junk, idle
        self.idle_seconds, self.junk_seconds, self.poll_seconds = idle_seconds, junk_seconds, poll_seconds
        self.log, self.stop = log, stop
        self.said_polling = False

    def run(self, connect, one_pass, backoff: Backoff) -> int:
        passes = attempt = 0
        imap = connect()  # not retried: an error here is most likely the configuration
        try:
            while not self.stop.requested:
                try:
                    if imap is None:
                        imap = connect()
                    _keepalive(imap.sock)
                    capabilities = _capabilities(imap)
                    while not self.stop.requested:
                        marks = self._marks(imap, capabilities)
                        one_pass(imap)
                        passes += 1
                        attempt = 0
                        self._wait_for_change(imap, capabilities, marks)
                except Exception as exc:
                    if not (_unreachable(exc) if imap is None else _dropped(exc)):
                        raise
                    _close(imap)
                    imap = None
                    if self.stop.requested:
                        break
                    attempt += 1
                    delay = backoff.delay(attempt)
                    self.log(
                        f"nbcli: imap: connection lost ({_reason(exc)}); reconnecting in {delay:.1f} s "
                        f"(attempt {attempt})"
                    )
                    self.stop.wait(delay)
        finally:
            if imap is not None:
                _logout(imap)
        return passes

    # -- what changed ------------------------------------------------------------

    def _marks(self, imap, capabilities):
        """What a change is measured against: (the inbox's UIDVALIDITY and
        UIDNEXT, Junk's STATUS), taken before the pass."""
        return _examine(imap, self.folder), self._junk_status(imap, capabilities)

    def _junk_status(self, imap, capabilities):
        if self.junk is None:
            return None
        items = "MESSAGES UIDNEXT UIDVALIDITY" + (" HIGHESTMODSEQ" if "CONDSTORE" in capabilities else "")
        typ, data = imap.status(folder_names.quoted(self.junk), f"({items})")
        if typ != "OK":  # no Junk (yet): the pass says so, or makes it
            return None
        found = re.search(rb"\(([^()]*)\)\s*$", data[-1] if isinstance(data[-1], bytes) else b"")
        return found.group(1).split() if found else None

    def _wait_for_change(self, imap, capabilities, marks) -> None:
        """Return when the inbox or Junk changed since `marks`, or a stop is
        requested."""
        inbox, junk = marks
        if _examine(imap, self.folder) != inbox:
            return  # mail came while the pass ran
        use_idle = self.idle and "IDLE" in capabilities
        if not use_idle and not self.said_polling:
            self.said_polling = True
            why = "the server has no IDLE" if self.idle else "polling asked for"
            self.log(f"nbcli: imap: {why}; checking {self.folder} every {self.poll_seconds:g} s")
        junk_due = time.monotonic() + self.junk_seconds
        while not self.stop.requested:
            if use_idle:
                seconds = min(self.idle_seconds, max(0.0, junk_due - time.monotonic()) if self.junk else 1e9)
                changed = _idle(imap, self.stop, seconds)
                if changed is None:  # refused although announced: this connection polls
                    use_idle = False
                    self.log(f"nbcli: imap: IDLE refused; checking {self.folder} every {self.poll_seconds:g} s")
                    continue
            else:
                self.stop.wait(self.poll_seconds)
                if self.stop.requested:
                    return
                imap.noop()
                changed = _changed(imap)
            if changed:
                return
            if self.junk is not None and (not use_idle or time.monotonic() >= junk_due):
                if self._junk_status(imap, capabilities) != junk or _changed(imap):  # the inbox's news may come with it
                    return
                junk_due = time.monotonic() + self.junk_seconds


# -- IDLE on imaplib's connection ---------------------------------------------------


def _idle(imap: imaplib.IMAP4, stop: Stop, seconds: float) -> bool | None:
    """IDLE for up to `seconds`: True when the selected mailbox changed,
    False at the end of the time or on a stop request, None when the server
    refused IDLE. The session is out of IDLE again on return."""
    tag = imap._new_tag()
    try:
        imap.send(tag + b" IDLE\r\n")
    except OSError as exc:
        raise imaplib.IMAP4.abort(f"socket error: {exc}") from exc
    while imap._get_response() is not None:  # None: the "+" continuation
        if imap.tagged_commands[tag] is not None:
            del imap.tagged_commands[tag]
            return None
    changed = _changed(imap)  # what came before the continuation counts too
    deadline = time.monotonic() + seconds
    while not changed and not stop.requested and time.monotonic() < deadline:
        if _unread(imap) or stop.wait(deadline - time.monotonic(), imap.sock):
            imap._get_response()
            imap._check_bye()
            changed = _changed(imap)
    try:
        imap.send(b"DONE\r\n")
    except OSError as exc:
        raise imaplib.IMAP4.abort(f"socket error: {exc}") from exc
    deadline = time.monotonic() + DONE_SECONDS
    while imap.tagged_commands[tag] is None:
        if not _unread(imap) and not select.select([imap.sock], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise imaplib.IMAP4.abort(f"no answer to DONE in {DONE_SECONDS:g} s")
        imap._get_response()
    typ, data = imap.tagged_commands.pop(tag)
    if typ != "OK":
        raise imaplib.IMAP4.error(f"IDLE: {typ} {data}")
    return _changed(imap) or changed


def _unread(imap: imaplib.IMAP4) -> bool:
    """Whether bytes from the server are already read from the socket but not
    parsed yet (in imaplib's buffered file, or inside TLS), where select()
    cannot see them."""
    sock = imap.sock
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    timeout = sock.gettimeout()
    sock.setblocking(False)  # peek: what is buffered, else one read that cannot block
    try:
        return bool(imap.file.peek(1))
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return False
    finally:
        sock.settimeout(timeout)


def _changed(imap: imaplib.IMAP4) -> bool:
    """Whether untagged responses saying the selected mailbox changed came
    (and forget them, and every other untagged response but a BYE: imaplib
    keeps each until a command asks for its kind, and none asks for the
    "* OK Still here" a server sends while idling, two a minute from
    Dovecot: a watch idle for months kept them all)."""
    found = False
    for name in WAKE:
        found = imap.untagged_responses.pop(name, None) is not None or found
    for name in [name for name in imap.untagged_responses if name != "BYE"]:
        del imap.untagged_responses[name]
    return found


# -- small IMAP helpers ---------------------------------------------------------------


def _examine(imap: imaplib.IMAP4, folder: str) -> tuple:
    """EXAMINE `folder` (read-only), forget the responses it brought, and
    return its (UIDVALIDITY, UIDNEXT)."""
    typ, data = imap.select(folder_names.quoted(folder), readonly=True)
    if typ != "OK":
        raise imaplib.IMAP4.error(f"cannot open {folder}: {data[-1]!r}")
    marks = tuple(imap.untagged_responses.get(name, [None])[-1] for name in ("UIDVALIDITY", "UIDNEXT"))
    _changed(imap)
    return marks


def _capabilities(imap: imaplib.IMAP4) -> set[str]:
    """The capabilities after login (the greeting's may differ)."""
    typ, data = imap.capability()
    return set(data[-1].decode("ascii", "replace").upper().split()) if typ == "OK" and data[-1] else set()


def _keepalive(sock) -> None:
    """TCP keepalive: a peer gone without a word shows as an error in minutes."""
    with contextlib.suppress(OSError, AttributeError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 60)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 20)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)


def _dropped(exc: BaseException) -> bool:
    """Whether `exc` says the connection was lost (worth a reconnect), not
    that something else failed: a local file's OSError (a full disk, a
    permission) is not retried."""
    if isinstance(exc, (ssl.SSLCertVerificationError, BrokenPipeError)):
        return False  # a broken pipe is stdout's: imaplib says a socket's as `abort`
    if isinstance(exc, (imaplib.IMAP4.abort, ConnectionError, TimeoutError, ssl.SSLError, socket.gaierror)):
        return True
    if isinstance(exc, OSError):
        return exc.errno in NETWORK_ERRNOS
    if isinstance(exc, imaplib.IMAP4.error):
        return "[UNAVAILABLE]" in str(exc)  # RFC 5530: try again later
    return False


def _unreachable(exc: BaseException) -> bool:
    """Whether an error of `connect()` means the server cannot be reached
    now: a lost connection, or an error raised while handling one (a
    one-line NbcliError saying "connection refused"; a refused login is
    not)."""
    return _dropped(exc) or (exc.__context__ is not None and _dropped(exc.__context__))


def _reason(exc: Exception) -> str:
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


def _close(imap) -> None:
    if imap is not None:
        with contextlib.suppress(Exception):
            imap.shutdown()


def _logout(imap: imaplib.IMAP4) -> None:
    with contextlib.suppress(imaplib.IMAP4.error, OSError):
        imap.sock.settimeout(10)  # a server that stopped answering does not hold the exit
        imap.logout()
    _close(imap)
