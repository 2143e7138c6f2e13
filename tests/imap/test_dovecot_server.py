"""The Dovecot the imap tests run against behaves as they assume: plain,
STARTTLS and implicit TLS logins with the test's own certificate, a Junk
folder, UIDs and UIDVALIDITY, MOVE, and a capability list a test can cut."""

from __future__ import annotations

import imaplib
import ssl

import pytest

MESSAGE = b"From: a@example.org\r\nSubject: hello\r\n\r\nhello there\r\n"


def test_plain_starttls_and_tls_logins(dovecot):
    with dovecot.client() as imap:
        assert imap.append("INBOX", None, None, MESSAGE)[0] == "OK"
        typ, listing = imap.list()
        assert any(b"\\Junk" in line and line.endswith(b"Junk") for line in listing)
    plain = imaplib.IMAP4("localhost", dovecot.port)
    plain.starttls(ssl_context=dovecot.tls_context())
    plain.login(dovecot.user, dovecot.password)
    plain.logout()
    with dovecot.client(tls=True) as imap:
        imap.select("INBOX")
        assert imap.uid("SEARCH", "ALL")[1] == [b"1"]
    with pytest.raises(ssl.SSLCertVerificationError):  # another CA: the certificate is refused
        imaplib.IMAP4_SSL("localhost", dovecot.tls_port, ssl_context=ssl.create_default_context())


def test_move_and_restart_keep_the_mail(dovecot):
    with dovecot.client() as imap:
        imap.append("INBOX", None, None, MESSAGE)
        imap.select("INBOX")
        assert b"MOVE" in imap.capability()[1][0]
        assert imap.uid("MOVE", "1", "Junk")[0] == "OK"
    dovecot.stop()
    dovecot.start()
    with dovecot.client() as imap:
        assert imap.select("Junk")[1] == [b"1"]


def test_capabilities_can_be_cut(make_dovecot):
    server = make_dovecot(capabilities="IMAP4rev1 LITERAL+ UIDPLUS")
    with server.client() as imap:
        caps = imap.capability()[1][0].split()
        assert b"MOVE" not in caps and b"IDLE" not in caps and b"UIDPLUS" in caps
