"""The decoding rule every plain document goes through (nbcli/text/decode.py):
no bytes can fail to decode, and what is valid UTF-8 or marked reads as such."""

from nbcli.text.decode import decode_bytes


def test_decoding_rule():
    assert decode_bytes("ok €".encode()) == "ok €"
    assert decode_bytes(b"\xef\xbb\xbfbom") == "bom"
    assert decode_bytes("€ and ü".encode("cp1252")) == "€ and ü"
    assert decode_bytes(b"\x81\x8d\x8f\x90\x9d") == "\x81\x8d\x8f\x90\x9d"  # undefined in cp1252: Latin-1
    assert decode_bytes("hi".encode("utf-16")) == "hi"


def test_binary_junk_decodes_to_some_text_without_an_error():
    """Every byte sequence becomes text of the same length (one character a
    byte when it is not UTF-8), so a binary file gives junk tokens, not an
    error."""
    junk = bytes(range(256)) * 4
    text = decode_bytes(junk)
    assert isinstance(text, str) and len(text) == len(junk)
    assert decode_bytes(b"") == ""


def test_a_utf16_big_endian_mark_selects_utf16():
    assert decode_bytes(b"\xfe\xff" + "naïve".encode("utf-16-be")) == "naïve"
