"""What `nbcli serve` tells an administrator: one line per request, and the
daemon's own events (start, reload, a worker's death and restart, stop).

A request's line names the verb, the verdict (spam, ham, unsure, unscored,
learned, forgot, or the EX_ error it was answered with), the score and the
score required, the User header, the message's size, the seconds it took,
its Message-ID and the worker's process id, as spamd's `result:` line does;
nothing else of the message is ever logged. Two formats (--log-format):

    text: request CHECK spam score=6.2 required=3.9 user=alice size=2145 seconds=0.004 mid=<a@b> worker=812
    json: {"event": "request", "verb": "CHECK", "verdict": "spam", "score": 6.2, ...}

A field the request has not (no User, no Message-ID, no score) is left out
of the text line and null in JSON. Values that come from the client (User,
Message-ID) are cut to MAX_FIELD characters with control characters and
spaces replaced, so a line is always one line and a field one word.

Where lines go: standard error (the default; text lines begin `nbcli: `
as the supervisor's own do, JSON lines are bare objects, so a shipper
takes the lines that begin with `{`), or with --syslog FACILITY datagrams to the local
syslog socket (--syslog-socket, /dev/log) in the BSD syslog format
(`<PRI>nbcli[PID]: line`, RFC 3164 without the timestamp and host, which
the local syslog daemon adds). A datagram that cannot be sent at once (the
syslog daemon is gone or its queue full) is dropped and counted, never
waited for: mail is not held up by logging.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys

MAX_FIELD = 200  # characters of a client's value (User, Message-ID) kept in a line
HEADER_SCAN = 64 << 10  # bytes of a message searched for its Message-ID
FACILITIES = {
    "kern": 0,
    "user": 1,
    "mail": 2,
    "daemon": 3,
    "auth": 4,
    "syslog": 5,
    "lpr": 6,
    "news": 7,
    "uucp": 8,
    "cron": 9,
    "authpriv": 10,
    "ftp": 11,
    **{f"local{i}": 16 + i for i in range(8)},
}
SEVERITY = {"error": 3, "warning": 4, "info": 6}
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_MESSAGE_ID = re.compile(rb"^message-id:[ \t]*(.*(?:\r?\n[ \t].*)*)", re.I | re.M)


def clean(value: str) -> str:
    """A client's value as one word of at most MAX_FIELD characters."""
    return _UNSAFE.sub("_", value[:MAX_FIELD])


def message_id(body: bytes | None) -> str | None:
    """The Message-ID header of a message's header block (searched in its
    first HEADER_SCAN bytes), cleaned; None if it has none."""
    if not body:
        return None
    head = bytes(body[:HEADER_SCAN])
    for sep in (b"\r\n\r\n", b"\n\n"):
        end = head.find(sep)
        if end >= 0:
            head = head[:end]
            break
    found = _MESSAGE_ID.search(head)
    if not found:
        return None
    value = found.group(1).decode("utf-8", "replace").strip()
    return clean(value) if value else None


class RequestLog:
    """Writes the daemon's lines in `fmt` ("text" or "json") to standard
    error, or to syslog when `facility` is given."""

    def __init__(self, fmt: str = "text", facility: str | None = None, syslog_socket: str = "/dev/log"):
        if fmt not in ("text", "json"):
            raise ValueError(f"log format {fmt!r} is not text or json")
        self.fmt = fmt
        self.facility = None if facility is None else FACILITIES[facility]
        self.syslog_socket = syslog_socket
        self.dropped = 0
        self._sock: socket.socket | None = None

    def request(self, **fields) -> None:
        """One request's line (fields as the module docstring lists them)."""
        self._emit("info", "request", fields)

    def event(self, name: str, severity: str = "info", **fields) -> None:
        """A daemon event: start, reload, worker-exit, stop."""
        self._emit(severity, name, fields)

    def line(self, name: str, fields: dict) -> str:
        if self.fmt == "json":
            return json.dumps({"event": name, **fields}, ensure_ascii=True, separators=(", ", ": "))
        words = [name]
        for key, value in fields.items():
            if value is None:
                continue
            if key in ("verb", "verdict", "message"):
                words.append(str(value))
            elif isinstance(value, float):
                words.append(f"{key}={value:.4g}" if key == "seconds" else f"{key}={value:.1f}")
            else:
                words.append(f"{key}={value}")
        return " ".join(words)

    def _emit(self, severity: str, name: str, fields: dict) -> None:
        text = self.line(name, fields)
        if self.facility is None:
            try:
                sys.stderr.write(f"{text}\n" if self.fmt == "json" else f"nbcli: {text}\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                self.dropped += 1
            return
        priority = self.facility * 8 + SEVERITY[severity]
        datagram = f"<{priority}>nbcli[{os.getpid()}]: {text}".encode("utf-8", "replace")
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._sock.setblocking(False)
            self._sock.sendto(datagram, self.syslog_socket)
        except OSError:
            self.dropped += 1

    def forked(self) -> None:
        """In a new worker process: its own syslog socket, not the parent's."""
        self._sock = None
