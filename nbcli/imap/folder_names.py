"""Folder names as IMAP sends them: modified UTF-7 (RFC 3501, 5.1.3).

A user names folders as their mail program shows them ("Courrier
indésirable", "Erledigt & Archiv"); the server knows them in modified
UTF-7, where printable ASCII stands for itself except "&" (sent as "&-"),
and every run of other characters is "&", the modified base64 of its
UTF-16 (',' for '/', no padding), "-". imaplib sends a command's text as
ASCII, so a name outside it was an 'internal error' before. Encoded, a
name is printable ASCII only: a CR, LF or other control character in it
is base64 too and cannot end the command line. Both directions are one
pass over the name.

Servers that enabled UTF8=ACCEPT (RFC 6855) take UTF-8 names too, but
every IMAP4rev1 server takes these, so nbcli sends them always.
"""

from __future__ import annotations

import base64


def encoded(name: str) -> str:
    """`name` in modified UTF-7."""
    out: list[str] = []
    run: list[str] = []  # characters outside printable ASCII, waiting to be encoded together

    def flush() -> None:
        if run:
            packed = base64.b64encode("".join(run).encode("utf-16-be", "surrogatepass")).decode("ascii")
            out.append("&" + packed.rstrip("=").replace("/", ",") + "-")
            run.clear()

    for ch in name:
        if " " <= ch <= "~":
            flush()
            out.append("&-" if ch == "&" else ch)
        else:
            run.append(ch)
    flush()
    return "".join(out)


def quoted(name: str) -> str:
    """`name` as a command gives it: `encoded`, as an IMAP quoted string."""
    return '"' + encoded(name).replace("\\", "\\\\").replace('"', '\\"') + '"'


def decoded(wire: str) -> str:
    """A name as a server sent it (modified UTF-7), as the user knows it;
    a part that is not modified UTF-7 is kept as it came."""
    out: list[str] = []
    i = 0
    while i < len(wire):
        start = wire.find("&", i)
        if start < 0:
            out.append(wire[i:])
            break
        out.append(wire[i:start])
        end = wire.find("-", start + 1)
        if end < 0:
            out.append(wire[start:])
            break
        chunk = wire[start + 1 : end]
        if not chunk:
            out.append("&")
        else:
            packed = chunk.replace(",", "/")
            try:
                raw = base64.b64decode(packed + "=" * (-len(packed) % 4), validate=True)
                out.append(raw.decode("utf-16-be", "surrogatepass"))
            except (ValueError, UnicodeDecodeError):
                out.append(wire[start : end + 1])
        i = end + 1
    return "".join(out)
