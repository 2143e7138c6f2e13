"""Bytes to text: the one decoding rule every plain document goes through.

The rule, chosen so that no input can fail to decode:

1. A UTF-16 byte-order mark (FF FE or FE FF) selects UTF-16; a UTF-8 BOM is
   dropped.
2. Otherwise the bytes are read as UTF-8 if they are valid UTF-8.
3. Otherwise they are read as Windows-1252 (the usual encoding of "8-bit"
   Western text), with the five bytes Windows-1252 leaves undefined (0x81,
   0x8D, 0x8F, 0x90, 0x9D) read as Latin-1, as web browsers do.

So every byte sequence, including binary files, becomes some text: binary
junk turns into junk tokens rather than an error.
"""

from __future__ import annotations

import codecs


def _latin1_fallback(err: UnicodeError) -> tuple[str, int]:
    if not isinstance(err, UnicodeDecodeError):  # registered for decoding only
        raise err
    return err.object[err.start : err.end].decode("latin-1"), err.end


codecs.register_error("nbcli-latin1", _latin1_fallback)


def decode_bytes(data: bytes) -> str:
    """Decode `data` with nbcli's decoding rule (see the module docstring)."""
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return data.decode("utf-16", errors="replace")
    if data[:3] == codecs.BOM_UTF8:
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="nbcli-latin1")
