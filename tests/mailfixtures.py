"""Hand-written tricky messages for the mail tests (our own text)."""

import base64

SECRET = b"ATTACHMENTSECRETWORD payload inside a binary attachment"
_ATTACHMENT = base64.encodebytes(b"%PDF-1.4\n" + SECRET + bytes(range(256))).decode()
_PNG = base64.encodebytes(b"\x89PNG\r\n\x1a\n" + bytes(range(200)) + SECRET).decode()
_B64_TEXT = base64.encodebytes("Hello Dana, the quarterly figures are attached. Merci, café.\n".encode()).decode()

NESTED = f"""From: "Alice Example" <alice@example.org>
To: Dana <dana@example.com>, list@lists.example.net
Cc: bob@example.org
Subject: Quarterly report
Date: Tue, 3 Mar 2026 10:00:00 +0000
Message-ID: <nested-1@example.org>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

Plain version of the quarterly report, see https://reports.example.org/q1?id=3D7 =
for details.
--alt
Content-Type: multipart/related; boundary="rel"

--rel
Content-Type: text/html; charset=utf-8

<html><body><p>HTML version with <b>bold</b> words</p><img src="cid:logo"></body></html>
--rel
Content-Type: image/png
Content-Transfer-Encoding: base64
Content-ID: <logo>

{_PNG}
--rel--
--alt--
--outer
Content-Type: application/pdf; name="report.pdf"
Content-Disposition: attachment; filename="report.pdf"
Content-Transfer-Encoding: base64

{_ATTACHMENT}
--outer--
""".encode()

WRONG_CHARSET = (
    b"From: Bernd <bernd@example.de>\n"
    b"To: dana@example.com\n"
    b"Subject: =?iso-8859-1?q?Gr=FC=DFe_aus_M=FCnchen?=\n"
    b"MIME-Version: 1.0\n"
    b"Content-Type: multipart/mixed; boundary=b\n"
    b"\n"
    b"--b\n"
    b"Content-Type: text/plain; charset=us-ascii\n"
    b"\n" + "Declared ASCII but really UTF-8: Grüße, café\n".encode() + b"--b\n"
    b"Content-Type: text/plain; charset=x-no-such-charset\n"
    b"\n" + "Unknown charset, Latin-1 bytes: naïve façade\n".encode("latin-1") + b"--b\n"
    b"Content-Type: text/plain; charset=base64\n"
    b"\n"
    b"A bytes-to-bytes codec named as a charset\n"
    b"--b--\n"
)

HTML_ONLY = b"""From: Deals <deals@offers.example.biz>
To: dana@example.com
Subject: LIMITED offer
MIME-Version: 1.0
Content-Type: text/html; charset=iso-8859-1

<html><head><title>hidden title</title><style>p { color: red }</style>
<script>var trackingcode = 1;</script></head>
<body><p>Buy V<!-- break -->iag<b></b>ra now &amp; save &euro;50!!!</p>
<a href="http://www.shop.offers.example.biz/buy?x=1">click here</a>
<img src="http://198.51.100.7/pixel.gif">
<p style="font-size:1px">filler text</p>
</body></html>
"""

BASE64_PARTS = f"""From: carol@example.net
To: dana@example.com
Subject: files
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="zz"

--zz
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: base64

{_B64_TEXT}
--zz
Content-Type: application/octet-stream; name="data.bin"
Content-Transfer-Encoding: base64

{_ATTACHMENT}
--zz
Content-Type: text/plain
Content-Transfer-Encoding: base64

bm90IHF1aXRlIGJhc2U2N!!!broken===padding
--zz--
""".encode()

LONG_HEADER = (
    b"From: long@example.com\n"
    b"To: dana@example.com\n"
    b"Subject: a very long header follows\n"
    b"X-Long: " + b"abcdefgh " * 1600 + b"\n"  # one 14 KB header line
    b"Received: from mail.example.com (mail.example.com [192.0.2.10]) by mx.example.net\n"
    b"\n"
    b"Short body after the long header.\n"
)

NO_BODY = b"From: nobody@example.com\nTo: dana@example.com\nSubject: headers only, no body, no final newline"

CRLF = (
    b"Return-Path: <eve@example.org>\r\n"
    b"From: Eve <eve@example.org>\r\n"
    b"To: dana@example.com\r\n"
    b"Subject: CRLF line endings\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Content-Transfer-Encoding: 8bit\r\n"
    b"\r\n" + "Line one with 8-bit text: Zürich\r\n".encode() + b"From the start of a line in the body\r\n"
    b"Line three\r\n"
)

UUENCODED = b"""From: frank@example.org
To: dana@example.com
Subject: oops log

Here is the log you asked for.

begin 644 oops.dat
M5&AI<R!I<R!A('5U96YC;V1E9"!B;&]B('1H870@<VAO=6QD(&YO="!B92!T
M;VME;FEZ960@870@86QL(&)E8V%U<V4@:70@:7,@96YC;V1E9"!D871A+@H`
`
end

Thanks.
"""

MESSAGES = {
    "nested": NESTED,
    "wrong-charset": WRONG_CHARSET,
    "html-only": HTML_ONLY,
    "base64": BASE64_PARTS,
    "long-header": LONG_HEADER,
    "no-body": NO_BODY,
    "crlf": CRLF,
    "uuencoded": UUENCODED,
}


def mbox_of(messages: list[bytes]) -> bytes:
    """An mbox of messages, with From_ lines and ">From " escaping; the last
    message is left without a final newline on purpose."""
    out = []
    for i, msg in enumerate(messages):
        body = msg.replace(b"\nFrom ", b"\n>From ")
        entry = b"From sender@example.org Tue Mar  3 10:00:0%d 2026\n" % i + body
        if i < len(messages) - 1:
            if not entry.endswith(b"\n"):
                entry += b"\n"
            entry += b"\n"
        out.append(entry)
    return b"".join(out)
