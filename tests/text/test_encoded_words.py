"""RFC 2047 encoded words in headers (nbcli/text/encoded_words.py): decoded
as the email package decodes them, in linear time."""

import email.header

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.text.encoded_words import decode_header

HDR_PIECES = ["=?", "utf-8", "?q?", "?Q?", "?b?", "?=", "a", " ", "\n", "\r", "_", "=41", "YQ", "==", "?", "\t", "=?x"]


def test_encoded_words_decode_to_their_bytes_and_charsets():
    assert decode_header("plain subject") == [("plain subject", None)]
    assert decode_header("=?utf-8?q?caf=C3=A9?= au lait") == [
        (b"caf\xc3\xa9", "utf-8"),
        (b" au lait", None),
    ]  # as email.header gives it
    assert decode_header("=?iso-8859-1?b?bmHvdmU=?=") == [(b"na\xefve", "iso-8859-1")]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(HDR_PIECES), max_size=40).map("".join))
def test_decode_header_matches_the_email_package(value):
    try:
        expected = email.header.decode_header(value)
    except Exception as exc:  # the same error, or the same result
        with pytest.raises(type(exc)):
            decode_header(value)
    else:
        assert decode_header(value) == expected
