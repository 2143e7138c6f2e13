"""`spam/connections.py`: a worker's connections read requests as they
arrive, hold at most so much of a message, and answer over the socket
(`Connections.handle`, on a socket pair, with a stand-in for what a request
gets)."""

from __future__ import annotations

import socket
import threading

import pytest

from nbcli.spam import spamd
from nbcli.spam.connections import Connection, Connections
from nbcli.spam.settings import HARD_LIMIT, Settings


def connection(keep: int = 100) -> Connection:
    return Connection(None, float("inf"), keep)


def test_a_request_is_complete_only_when_its_content_length_has_arrived():
    c = connection()
    c.feed(b"CHECK SPAMC/1.5\r\nContent-len")
    assert c.request() is None
    c.feed(b"gth: 10\r\n\r\n01234")
    assert c.request() is None
    c.feed(b"56789")
    head, body = c.request()
    assert head.verb == "CHECK" and body == b"0123456789"
    c.feed(b"!")
    with pytest.raises(spamd.ProtocolError, match="more bytes than Content-length"):
        c.request()


def test_ping_skip_and_a_bare_request_line_at_the_end_of_input():
    ping = connection()
    ping.feed(b"PING SPAMC/1.5")
    assert ping.request() is None
    head, body = ping.request(eof=True)  # the client closed its side: a request line alone is a head
    assert head.verb == "PING" and body is None
    skip = connection()
    skip.feed(b"SKIP SPAMC/1.5\r\n\r\n")
    assert skip.request() == (None, None)


def test_a_message_over_what_is_kept_is_counted_not_held():
    c = connection(keep=10)
    c.feed(b"CHECK SPAMC/1.5\r\nContent-length: 1000\r\n\r\n")
    for _ in range(10):
        c.feed(b"x" * 100)
    head, body = c.request()
    assert c.dropped and c.received == 1000 and len(c.buffer) == 11 and body is None


def test_heads_too_long_and_messages_too_large_are_refused_at_once():
    c = connection()
    c.feed(b"CHECK SPAMC/1.5\r\n" + b"X: y\r\n" * (spamd.MAX_HEAD // 6 + 1))
    with pytest.raises(spamd.ProtocolError, match=f"request head over {spamd.MAX_HEAD} bytes"):
        c.request()
    c = connection()
    c.feed(b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % (HARD_LIMIT + 1))
    with pytest.raises(spamd.ProtocolError, match=f"over {HARD_LIMIT}"):
        c.request()


class Echo(Connections):
    """Answers every message with its length; records what it was asked."""

    def __init__(self, settings):
        super().__init__(settings, [])
        self.asked = []

    def respond(self, request, body):
        self.asked.append(request.verb)
        return b"SPAMD/1.1 0 EX_OK\r\nLength: %d\r\n\r\n" % len(body)


def serve_one(worker, raw: bytes) -> bytes:
    ours, theirs = socket.socketpair()
    thread = threading.Thread(target=worker.handle, args=(ours,))
    thread.start()
    theirs.sendall(raw)
    theirs.shutdown(socket.SHUT_WR)
    thread.join(10)
    assert not thread.is_alive()
    ours.close()  # what serve's loop does once the reply is sent
    chunks = []
    while chunk := theirs.recv(65536):
        chunks.append(chunk)
    theirs.close()
    return b"".join(chunks)


def test_a_complete_request_is_answered_and_an_oversize_one_unscored_without_being_read_whole():
    worker = Echo(Settings("m.nb", None, None, [], 1, max_size=10))
    assert serve_one(worker, b"CHECK SPAMC/1.5\r\nContent-length: 5\r\n\r\nhello") == (
        b"SPAMD/1.1 0 EX_OK\r\nLength: 5\r\n\r\n"
    )
    big = b"x" * (100 << 10)  # past --max-size and the 64 KB held beyond it
    reply = serve_one(worker, b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(big) + big)
    assert reply == b"SPAMD/1.1 0 EX_OK\r\nSpam: False ; 0.0 / 3.9\r\n\r\n" and worker.asked == ["CHECK"]
    refused = serve_one(worker, b"PROCESS SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(big) + big)
    assert refused.startswith(b"SPAMD/1.0 65 EX_DATAERR message of 102400 bytes is over --max-size (10)")
