"""Folder names in modified UTF-7 (RFC 3501, 5.1.3): nbcli.imap.folder_names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nbcli.imap.folder_names import decoded, encoded, quoted


def test_the_rfcs_example_and_the_ampersand():
    assert encoded("~peter/mail/台北/日本語") == "~peter/mail/&U,BTFw-/&ZeVnLIqe-"  # RFC 3501, 5.1.3
    assert decoded("~peter/mail/&U,BTFw-/&ZeVnLIqe-") == "~peter/mail/台北/日本語"
    assert encoded("Erledigt & Archiv") == "Erledigt &- Archiv"
    assert encoded("Courrier indésirable") == "Courrier ind&AOk-sirable"
    assert encoded("INBOX") == "INBOX"


def test_a_name_on_the_wire_is_printable_ascii_and_quoted():
    assert quoted('a "b" \\ c\r\nA1 DELETE INBOX') == '"a \\"b\\" \\\\ c&AA0ACg-A1 DELETE INBOX"'
    assert quoted("😀") == '"&2D3eAA-"'  # outside the BMP: a UTF-16 surrogate pair


@given(st.text())
def test_every_name_comes_back(name):
    wire = encoded(name)
    assert all(" " <= ch <= "~" for ch in wire)
    assert decoded(wire) == name


def test_a_name_from_bytes_that_are_not_utf8_is_sent_too():
    # argv's bytes that are not UTF-8 come as lone surrogates (surrogateescape): no UnicodeEncodeError
    assert decoded(encoded("Junk\udcff")) == "Junk\udcff"


def test_what_is_not_modified_utf7_is_kept_as_it_came():
    assert decoded("a&b") == "a&b"  # no closing '-'
    assert decoded("x&*!-y") == "x&*!-y"  # not base64
    assert decoded("x&AOk-y&-z") == "xéy&z"
