#!/usr/bin/env python3
"""Generate the synthetic sample corpora bundled with nbcli.

Everything in this file -- people, companies, phrase banks and templates --
was written for nbcli; no third-party text is used.  All domains are reserved
example/test/invalid names (RFC 2606 / RFC 6761) or invented ``.example``
names, and all IP addresses come from the documentation ranges of RFC 5737
(192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) or from 10.0.0.0/8.

Run from the repository root::

    python3 sample_corpora/generate.py

It deletes and rewrites only ``sample_corpora/mail/`` and
``sample_corpora/topics/``.  The output is byte-for-byte reproducible: every
random choice comes from ``random.Random`` instances seeded with constants,
all dates are derived from fixed anchors, no set or hash ordering is used and
binary attachments use stored (uncompressed) deflate blocks, so the bytes do
not depend on the local zlib build.

Only the Python 3 standard library is needed.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import quopri
import random
import re
import shutil
import struct
import sys
import textwrap
import zlib
from email.utils import format_datetime, formataddr
from pathlib import Path

SEED = 7319
OUT_DIR = Path(__file__).resolve().parent

N_HAM = 420
N_SPAM = 280
TOPIC_DOCS = 220
TRAIN_FRACTION = 0.75
WEAK_RATE = 0.35


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

_ALT_RE = re.compile(r"\[([^\[\]]*\|[^\[\]]*)\]")
_SLOT_RE = re.compile(r"\{([a-z][a-z0-9_]*)\}")


def chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def wchoice(rng: random.Random, weighted):
    """Pick from a list of (item, weight) pairs."""
    total = sum(w for _, w in weighted)
    x = rng.random() * total
    for item, w in weighted:
        x -= w
        if x < 0:
            return item
    return weighted[-1][0]


def fill(rng: random.Random, template: str, ctx: dict, bank: dict) -> str:
    """Expand ``[a|b|c]`` alternatives, then ``{slot}`` placeholders.

    A slot is looked up in ``ctx`` first; otherwise a value is drawn from
    ``bank`` (a list to choose from or a callable taking the rng) and stored in
    ``ctx`` so that the same slot reads the same within one message.
    """

    def alt(m):
        return rng.choice(m.group(1).split("|"))

    prev = None
    text = template
    while prev != text:  # allow simple nesting
        prev = text
        text = _ALT_RE.sub(alt, text)

    def slot(m):
        name = m.group(1)
        if name not in ctx:
            if name not in bank:
                raise KeyError(f"unknown slot {name!r} in {template!r}")
            src = bank[name]
            val = src(rng) if callable(src) else rng.choice(src)
            ctx[name] = fill(rng, val, ctx, bank) if ("{" in val or "[" in val) else val
        return ctx[name]

    return _SLOT_RE.sub(slot, text)


def wrap(text: str, width: int = 72) -> str:
    """Wrap every paragraph of ``text`` but keep short/pre-formatted lines."""
    out = []
    for para in text.split("\n\n"):
        lines = para.split("\n")
        if len(lines) > 1 or para.startswith((" ", ">", "-", "*", "|")):
            out.append(
                "\n".join(
                    textwrap.fill(ln, width, break_long_words=False, break_on_hyphens=False)
                    if len(ln) > width and not ln.startswith(">")
                    else ln
                    for ln in lines
                )
            )
        else:
            out.append(textwrap.fill(para, width, break_long_words=False, break_on_hyphens=False))
    return "\n\n".join(out)


def money(rng, lo, hi, cur="$", cents=True):
    v = rng.randint(lo, hi)
    s = f"{v:,}"
    if cents:
        s += f".{rng.randint(0, 99):02d}"
    return f"{cur}{s}"


def hexid(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def alnum(rng, n, alphabet="ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789"):
    return "".join(rng.choice(alphabet) for _ in range(n))


def ip_doc(rng, net=None):
    net = net or rng.choice(["192.0.2", "198.51.100", "203.0.113"])
    return f"{net}.{rng.randint(2, 254)}"


def ip_private(rng):
    return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(2, 254)}"


# ---------------------------------------------------------------------------
# MIME building (by hand, so boundaries and folding are deterministic)
# ---------------------------------------------------------------------------


def encoded_word(text: str, charset: str, enc: str) -> str:
    """RFC 2047 encoded-words, each at most 75 characters, folded."""

    def one(s):
        raw = s.encode(charset)
        if enc == "B":
            return f"=?{charset}?B?{base64.b64encode(raw).decode('ascii')}?="
        out = []
        for b in raw:
            c = chr(b)
            if c == " ":
                out.append("_")
            elif c.isascii() and (c.isalnum() or c in "!*+-/"):
                out.append(c)
            else:
                out.append(f"={b:02X}")
        return f"=?{charset}?Q?{''.join(out)}?="

    words, cur = [], ""
    for ch in text:
        if cur and len(one(cur + ch)) > 75:
            words.append(one(cur))
            cur = ch
        else:
            cur += ch
    if cur:
        words.append(one(cur))
    return "\n ".join(words)


def header_text(text: str, rng: random.Random, force: bool = False, charset: str | None = None) -> str:
    """Return a header value: plain if ASCII, otherwise RFC 2047 encoded."""
    if text.isascii() and not force:
        return text
    if charset is None:
        charset = "utf-8"
        try:
            text.encode("iso-8859-1")
            if chance(rng, 0.4):
                charset = "iso-8859-1"
        except UnicodeEncodeError:
            pass
    return encoded_word(text, charset, "B" if chance(rng, 0.5) else "Q")


def fmt_addr(name: str, addr: str) -> str:
    if not name:
        return addr
    return formataddr((name, addr), charset="utf-8")


def fold_addresses(items: list[str]) -> str:
    out, line = [], ""
    for i, it in enumerate(items):
        piece = it + ("," if i < len(items) - 1 else "")
        if line and len(line) + len(piece) + 1 > 70:
            out.append(line)
            line = piece
        else:
            line = (line + " " + piece) if line else piece
    out.append(line)
    return "\n ".join(out)


def fold_header(value: str, width: int = 76) -> str:
    """Fold a long structured header at spaces."""
    if len(value) <= width or "\n" in value:
        return value
    words = value.split(" ")
    lines, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return "\n\t".join(lines)


class Leaf:
    def __init__(self, headers, body: bytes):
        self.headers = headers
        self.body = body


class Multi:
    def __init__(self, subtype, boundary, parts, preamble=None):
        self.subtype = subtype
        self.boundary = boundary
        self.parts = parts
        self.preamble = preamble


def encode_body(payload: bytes, cte: str) -> bytes:
    if cte == "base64":
        return base64.encodebytes(payload)
    if cte == "quoted-printable":
        out = quopri.encodestring(payload)
    else:
        out = payload
    if not out.endswith(b"\n"):
        out += b"\n"
    return out


def text_leaf(text: str, subtype: str, charset: str, cte: str, quote_charset=True, extra=()) -> Leaf:
    data = text.encode(charset)
    if cte == "7bit" and not data.isascii():
        cte = "quoted-printable"
    if cte in ("7bit", "8bit") and any(len(ln) > 900 for ln in data.split(b"\n")):
        cte = "quoted-printable"
    cs = f'"{charset}"' if quote_charset else charset
    headers = [("Content-Type", f"text/{subtype}; charset={cs}"), ("Content-Transfer-Encoding", cte)]
    headers.extend(extra)
    return Leaf(headers, encode_body(data, cte))


def binary_leaf(filename: str, ctype: str, data: bytes, inline=False) -> Leaf:
    disp = "inline" if inline else "attachment"
    headers = [
        ("Content-Type", f'{ctype}; name="{filename}"'),
        ("Content-Disposition", f'{disp}; filename="{filename}"'),
        ("Content-Transfer-Encoding", "base64"),
    ]
    return Leaf(headers, base64.encodebytes(data))


def serialize_headers(headers) -> bytes:
    return "".join(f"{k}: {v}\n" for k, v in headers).encode("ascii")


def serialize_entity(ent):
    """Return (content headers, body bytes) for a Leaf or Multi."""
    if isinstance(ent, Leaf):
        return ent.headers, ent.body
    b = ent.boundary.encode("ascii")
    chunks = []
    if ent.preamble:
        chunks.append(ent.preamble.encode("ascii") + b"\n\n")
    for part in ent.parts:
        h, body = serialize_entity(part)
        chunks.append(b"--" + b + b"\n" + serialize_headers(h) + b"\n" + body)
    chunks.append(b"--" + b + b"--\n")
    headers = [("Content-Type", f'multipart/{ent.subtype};\n\tboundary="{ent.boundary}"')]
    return headers, b"".join(chunks)


def make_boundary(rng, style):
    if style == 0:
        return f"----=_Part_{rng.randint(10000, 999999)}_{rng.randint(10**8, 10**9)}.{rng.randint(10**12, 10**13)}"
    if style == 1:
        return f"=_{hexid(rng, 32)}"
    if style == 2:
        return f"------------{alnum(rng, 24, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ')}"
    if style == 3:
        return f"b1_{hexid(rng, 32)}"
    return f"_NextPart_{hexid(rng, 3)}_{hexid(rng, 4).upper()}_{hexid(rng, 8).upper()}"


# ---------------------------------------------------------------------------
# Binary attachment generators (deterministic, no zlib compression)
# ---------------------------------------------------------------------------


def _stored_zlib(data: bytes) -> bytes:
    out = [b"\x78\x01"]
    pos = 0
    while True:
        chunk = data[pos : pos + 65535]
        pos += len(chunk)
        final = 1 if pos >= len(data) else 0
        out.append(bytes([final]) + struct.pack("<HH", len(chunk), len(chunk) ^ 0xFFFF) + chunk)
        if final:
            break
    out.append(struct.pack(">I", zlib.adler32(data) & 0xFFFFFFFF))
    return b"".join(out)


def make_png(rng, w, h) -> bytes:
    """A small valid RGB PNG: a soft gradient with a little noise."""
    r0, g0, b0 = rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)
    dr, dg, db = rng.randint(-3, 3), rng.randint(-3, 3), rng.randint(-3, 3)
    rows = []
    for y in range(h):
        row = bytearray(b"\x00")
        for x in range(w):
            n = rng.randint(-6, 6)
            row += bytes(((r0 + dr * x + n) % 256, (g0 + dg * y + n) % 256, (b0 + db * (x + y) + n) % 256))
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", _stored_zlib(raw))
        + chunk(b"IEND", b"")
    )


def make_pdf(rng, lines: list[str], blob_size: int = 0) -> bytes:
    """A small one-page PDF with the given text lines (and optional noise)."""

    def esc(s):
        s = s.encode("latin-1", "replace").decode("latin-1")
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
    for ln in lines:
        ops.append(f"({esc(ln)}) '")
    ops.append("ET")
    content = "\n".join(ops).encode("latin-1")
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if blob_size:
        blob = rng.randbytes(blob_size)
        objs.append(b"<< /Length " + str(len(blob)).encode() + b" >>\nstream\n" + blob + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


# ---------------------------------------------------------------------------
# The mailbox owner, people, organisations and mail infrastructure
# (all invented)
# ---------------------------------------------------------------------------

OWNER_NAME = "Dana Whitlock"
OWNER_FIRST = "Dana"
OWNER_HOME = "dana.whitlock@example.com"
OWNER_WORK = "dana.whitlock@corvidlabs.example"
WORK_DOMAIN = "corvidlabs.example"

MX_HOSTS = ["mx1.inbound.example.net", "mx2.inbound.example.net", "mx3.inbound.example.net"]
STORE_HOSTS = ["store01.inbound.example.net", "store02.inbound.example.net"]

# domain -> (network, outbound host names)
PROVIDERS = {
    "postbox.example": (
        "198.51.100",
        ["smtp-out1.postbox.example", "smtp-out2.postbox.example", "smtp-out7.postbox.example"],
    ),
    "mailhaven.example.net": ("198.51.100", ["relay-a.mailhaven.example.net", "relay-b.mailhaven.example.net"]),
    "inboxly.example": ("192.0.2", ["out1.inboxly.example", "out2.inboxly.example", "out3.inboxly.example"]),
    "letterkite.example": ("203.0.113", ["mta1.letterkite.example", "mta2.letterkite.example"]),
    "netzpost.example": ("192.0.2", ["mout.netzpost.example"]),
    "courriel.example": ("198.51.100", ["smtp.courriel.example"]),
    "correo.example": ("203.0.113", ["salida1.correo.example"]),
    "corvidlabs.example": ("192.0.2", ["mail.corvidlabs.example", "mail2.corvidlabs.example"]),
    "sendwave.example": ("203.0.113", [f"mta{i}.sendwave.example" for i in range(1, 9)]),
    "bulkpost.example.net": ("198.51.100", [f"o{i}.bulkpost.example.net" for i in (3, 11, 12, 40)]),
    "lists.wrenfield.example": ("192.0.2", ["lists.wrenfield.example"]),
    "lists.riversidecc.example": ("198.51.100", ["lists.riversidecc.example"]),
    "groups.example.org": ("203.0.113", ["mx-out.groups.example.org"]),
}
WEBMAIL_DOMAINS = ["postbox.example", "mailhaven.example.net", "inboxly.example", "letterkite.example"]
ESP_DOMAINS = ["sendwave.example", "bulkpost.example.net"]

HAM_MAILERS = [
    ("X-Mailer", "Kestrel Mail 2.14.3"),
    ("X-Mailer", "Kestrel Mail 3.0.1"),
    ("User-Agent", "Brambleclient/8.0.3"),
    ("User-Agent", "Brambleclient/9.1 (X11; Linux x86_64)"),
    ("X-Mailer", "Postbox Webmail 6"),
    ("X-Mailer", "Corvid Desktop Mail 5.2"),
    ("User-Agent", "Wharf/1.9 (terminal mail)"),
    ("X-Mailer", "Inboxly iOS 4.8"),
]
SPAM_MAILERS = [
    ("X-Mailer", "QuickBlast 5.2"),
    ("X-Mailer", "MassMailer Pro 11"),
    ("X-Mailer", "Kestrel Mail 2.14.3"),
    ("X-Mailer", "Postbox Webmail 6"),
    ("X-Mailer", "SwiftSend v3.0.7"),
    ("User-Agent", "Brambleclient/8.0.3"),
    ("X-Mailer", "PHPMailer-lite 1.4"),
]

FIRST_NAMES = [
    "Aaron",
    "Abigail",
    "Adele",
    "Ahmed",
    "Aisha",
    "Alan",
    "Alina",
    "Amara",
    "Andrea",
    "Anika",
    "Arjun",
    "Ben",
    "Bianca",
    "Bruno",
    "Carla",
    "Casey",
    "Chen",
    "Clara",
    "Colin",
    "Daniel",
    "Deepa",
    "Diego",
    "Elena",
    "Elliot",
    "Emre",
    "Erin",
    "Farah",
    "Felix",
    "Fiona",
    "Gabriel",
    "Grace",
    "Hana",
    "Hugo",
    "Ines",
    "Isaac",
    "Ivy",
    "Jamal",
    "Jonas",
    "Julia",
    "Kai",
    "Karen",
    "Kenji",
    "Laila",
    "Leo",
    "Lina",
    "Lucas",
    "Maya",
    "Marek",
    "Marta",
    "Mateo",
    "Mei",
    "Nadia",
    "Nico",
    "Noor",
    "Olga",
    "Omar",
    "Pavel",
    "Priya",
    "Quinn",
    "Rafael",
    "Rosa",
    "Ruth",
    "Sam",
    "Sanjay",
    "Sara",
    "Simone",
    "Sofia",
    "Tariq",
    "Theo",
    "Tomas",
    "Uma",
    "Vera",
    "Victor",
    "Wen",
    "Yara",
    "Yusuf",
    "Zoe",
]
LAST_NAMES = [
    "Abbott",
    "Achterberg",
    "Alvarez",
    "Ashby",
    "Bakshi",
    "Barrow",
    "Bellweather",
    "Boateng",
    "Brandt",
    "Castellano",
    "Chaudhry",
    "Corrigan",
    "Dalgleish",
    "Dunmore",
    "Fairbanks",
    "Ferreira",
    "Finch",
    "Galloway",
    "Greenhalgh",
    "Haldane",
    "Harrow",
    "Hartwell",
    "Hollis",
    "Ishikawa",
    "Jablonski",
    "Kaur",
    "Kearney",
    "Kowalczyk",
    "Larkin",
    "Lindqvist",
    "Lund",
    "Marchetti",
    "Mercer",
    "Mistry",
    "Nakamura",
    "Okafor",
    "Ostrowski",
    "Oyelaran",
    "Pemberton",
    "Petrov",
    "Quintero",
    "Rasmussen",
    "Renner",
    "Sandoval",
    "Soto",
    "Szabo",
    "Tanaka",
    "Thorne",
    "Underhill",
    "Vasquez",
    "Whitcombe",
    "Yilmaz",
    "Zielinski",
]

COLLEAGUES = [
    ("Marek Ostrowski", "Engineering Manager"),
    ("Nadia Okafor", "Product Manager"),
    ("Theo Lindqvist", "Senior Software Engineer"),
    ("Farah Chaudhry", "Site Reliability Engineer"),
    ("Hugo Marchetti", "Data Analyst"),
    ("Ines Ferreira", "Product Designer"),
    ("Kenji Tanaka", "Backend Engineer"),
    ("Ruth Pemberton", "Office Manager"),
    ("Colin Greenhalgh", "Finance Business Partner"),
    ("Amara Boateng", "Talent Partner"),
    ("Jonas Brandt", "QA Lead"),
    ("Sofia Sandoval", "Frontend Engineer"),
    ("Victor Haldane", "CTO"),
    ("Laila Mistry", "Travel & Events Coordinator"),
    ("Omar Yilmaz", "Platform Engineer"),
    ("Erin Kearney", "Customer Success Lead"),
    ("Pavel Szabo", "Security Engineer"),
    ("Grace Underhill", "Data Engineer"),
]


def colleague(rng, exclude=()):
    while True:
        name, role = rng.choice(COLLEAGUES)
        if name not in exclude:
            first, last = name.split(" ", 1)
            return {"name": name, "first": first, "role": role, "addr": f"{first.lower()}.{last.lower()}@{WORK_DOMAIN}"}


PARTNERS = [
    ("Tomas Rasmussen", "tomas.rasmussen@halberd-systems.example", "Halberd Systems"),
    ("Bianca Corrigan", "bianca@lumenpike.example", "Lumen & Pike Consulting"),
    ("Yusuf Dalgleish", "y.dalgleish@tidewater-logistics.example", "Tidewater Logistics"),
    ("Alina Petrov", "alina.petrov@saltmarsh-foods.example", "Saltmarsh Foods"),
]

FAMILY = {
    "mum": ("Margaret Whitlock", "margaret.whitlock@postbox.example", "Mum"),
    "dad": ("Geoff Whitlock", "gwhitlock@mailhaven.example.net", "Dad"),
    "sister": ("Tess Whitlock-Ruiz", "tess.wr@inboxly.example", "Tess"),
    "brother": ("Owen Whitlock", "owen.whitlock@letterkite.example", "Owen"),
    "aunt": ("Lorraine Ashby", "lorraine.ashby@postbox.example", "Aunt Lorraine"),
}
FRIENDS = [
    ("Jamal Finch", "jamal.finch@postbox.example"),
    ("Clara Abbott", "clara.abbott@inboxly.example"),
    ("Leo Barrow", "leo@barrowfamily.example"),
    ("Maya Thorne", "maya.thorne@mailhaven.example.net"),
    ("Wen Larkin", "wen.larkin@letterkite.example"),
    ("Rosa Vasquez", "rosa.v@postbox.example"),
    ("Isaac Hollis", "isaac.hollis@inboxly.example"),
    ("Zoe Mercer", "zoe.mercer@postbox.example"),
    ("Sanjay Bakshi", "sanjay.bakshi@mailhaven.example.net"),
    ("Ivy Galloway", "ivy.g@inboxly.example"),
]
FOREIGN_FRIENDS = {
    "de": [
        ("Jürgen Achterberg", "juergen.achterberg@netzpost.example"),
        ("Katrin Renner", "katrin.renner@netzpost.example"),
    ],
    "fr": [
        ("Amélie Delacroix", "amelie.delacroix@courriel.example"),
        ("Benoît Fairbanks", "benoit.fairbanks@courriel.example"),
    ],
    "es": [("Lucía Quintero", "lucia.quintero@correo.example"), ("Andrés Soto", "andres.soto@correo.example")],
}


def random_person(rng, domains=None):
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    dom = rng.choice(
        domains
        or (
            WEBMAIL_DOMAINS
            + ["example.org", "example.net", "mail.example.com", "hollowcreek.example", "tinkerpost.example"]
        )
    )
    style = rng.randint(0, 4)
    local = [
        f"{first}.{last}",
        f"{first[0]}{last}",
        f"{first}{rng.randint(1, 99)}",
        f"{first}_{last}",
        f"{last}.{first[0]}",
    ][style].lower()
    return {"name": f"{first} {last}", "first": first, "addr": f"{local}@{dom}"}


# ---------------------------------------------------------------------------
# Rendering a drafted message to RFC 822 bytes
# ---------------------------------------------------------------------------

BASE_DATE = dt.datetime(2024, 1, 2, 0, 0, 0, tzinfo=dt.UTC)
DATE_SPAN_SECONDS = int((dt.datetime(2026, 9, 30, tzinfo=dt.UTC) - BASE_DATE).total_seconds())
TZ_OFFSETS = [0, 0, 0, 60, 60, 60, 120, -300, -240, -420, 330, 540, 600, -180]


def random_date(rng, business_hours=False):
    secs = rng.randint(0, DATE_SPAN_SECONDS)
    d = BASE_DATE + dt.timedelta(seconds=secs)
    if business_hours:
        while d.weekday() >= 5:
            d += dt.timedelta(days=1)
        d = d.replace(hour=rng.randint(8, 17))
    tz = dt.timezone(dt.timedelta(minutes=rng.choice(TZ_OFFSETS)))
    return d.astimezone(tz)


def message_id(rng, domain, date):
    style = rng.randint(0, 4)
    if style == 0:
        return f"<{hexid(rng, 16)}.{hexid(rng, 8)}@{domain}>"
    if style == 1:
        return f"<CA+{alnum(rng, 36)}@mail.{domain}>"
    if style == 2:
        return f"<{date.strftime('%Y%m%d%H%M%S')}.{rng.randint(1000, 99999)}@{domain}>"
    if style == 3:
        return f"<{hexid(rng, 8)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 4)}-{hexid(rng, 12)}@{domain}>"
    return f"<{alnum(rng, 12)}.{rng.randint(10**5, 10**6)}@{domain}>"


def _rdate(d):
    return format_datetime(d)


def received_chain(rng, infra, sender_domain, rcpt, date, helo=None):
    """Build 1-4 Received headers, newest first."""
    hops = []
    t = date
    net, hosts = PROVIDERS.get(sender_domain, (None, None))
    if hosts is None:
        net = rng.choice(["192.0.2", "198.51.100", "203.0.113"])
        hosts = [f"mail.{sender_domain}", f"smtp.{sender_domain}"]

    def tick(lo=1, hi=40):
        nonlocal t
        t = t + dt.timedelta(seconds=rng.randint(lo, hi))
        return t

    # hops in chronological order, reversed at the end
    if infra in ("corp", "webmail", "list", "esp", "org"):
        out = rng.choice(hosts)
        if infra in ("corp", "webmail") and chance(rng, 0.7):
            client = ip_private(rng)
            hops.append(
                f"from [{client}] (unknown [{client}])\n\tby {out} with ESMTPSA id "
                f"{alnum(rng, 14)}\n\tfor <{rcpt}>; {_rdate(tick())}"
            )
        elif infra in ("esp", "org") and chance(rng, 0.5):
            hops.append(
                f"from localhost (localhost [127.0.0.1])\n\tby {out} with ESMTP id "
                f"{hexid(rng, 10).upper()};\n\t{_rdate(tick())}"
            )
        if infra == "list" and chance(rng, 0.8):
            origin = rng.choice(WEBMAIL_DOMAINS + ["example.org", "example.net"])
            onet, ohosts = PROVIDERS.get(origin, ("192.0.2", [f"mail.{origin}"]))
            oh = rng.choice(ohosts)
            hops.append(
                f"from {oh} ({oh} [{ip_doc(rng, onet)}])\n\tby {out} with ESMTPS id {alnum(rng, 12)}; {_rdate(tick())}"
            )
        if chance(rng, 0.3):
            filt = f"{rng.choice(['outfilter', 'smtp-relay', 'egress'])}{rng.randint(1, 4)}.{sender_domain}"
            hops.append(
                f"from {out} ({out} [{ip_private(rng)}])\n\tby {filt} with ESMTP id "
                f"{alnum(rng, 12)}; {_rdate(tick(0, 5))}"
            )
            out = filt
        mx = rng.choice(MX_HOSTS)
        hops.append(
            f"from {out} ({out} [{ip_doc(rng, net)}])\n\tby {mx} with ESMTPS id "
            f"{alnum(rng, 15)}\n\tfor <{rcpt}>; {_rdate(tick(2, 90).astimezone(dt.UTC))}"
        )
    else:  # "bot": direct-to-MX from a dynamic address, forged HELO
        ip = ip_doc(rng)
        rdns = rng.choice(
            [
                f"host-{ip.replace('.', '-')}.dyn.broadband.example",
                f"{ip.split('.')[-1]}.{rng.randint(10, 250)}.pool.isp.example.net",
                "unknown",
                f"cpe-{alnum(rng, 6, 'abcdef0123456789')}.cable.example.org",
            ]
        )
        helo = helo or rng.choice(
            [
                f"[{ip}]",
                f"pc-{rng.randint(100, 9999)}",
                "localhost.localdomain",
                f"mail.{sender_domain}",
                f"{alnum(rng, 7).lower()}.example.com",
                "User-PC",
            ]
        )
        mx = rng.choice(MX_HOSTS)
        proto = rng.choice(["SMTP", "ESMTP", "ESMTPS"])
        if chance(rng, 0.3):
            relay_ip = ip_doc(rng)
            hops.append(
                f"from {helo} ([{ip_private(rng)}])\n\tby relay{rng.randint(1, 30)}.{sender_domain} "
                f"with SMTP; {_rdate(tick())}"
            )
            hops.append(
                f"from relay.{sender_domain} (unknown [{relay_ip}])\n\tby {mx} with {proto} id "
                f"{alnum(rng, 15)}\n\tfor <{rcpt}>; {_rdate(tick().astimezone(dt.UTC))}"
            )
        else:
            hops.append(
                f"from {helo} ({rdns} [{ip}])\n\tby {mx} with {proto} id {alnum(rng, 15)}\n\t"
                f"for <{rcpt}>; {_rdate(tick().astimezone(dt.UTC))}"
            )
    if chance(rng, 0.55):
        store = rng.choice(STORE_HOSTS)
        hops.append(
            f"from {mx} ({mx} [10.20.0.{rng.randint(10, 30)}])\n\tby {store} with LMTP id "
            f"{alnum(rng, 10)}\n\tfor <{rcpt}>; {_rdate(tick(0, 3).astimezone(dt.UTC))}"
        )
    return list(reversed(hops[-4:]))


def pick_charset(rng, text, prefs):
    for _ in range(6):
        cs = wchoice(rng, prefs)
        try:
            text.encode(cs)
            return cs
        except UnicodeEncodeError:
            continue
    return "utf-8"


def render(d: dict, rng: random.Random) -> bytes:
    date = d["date"]
    from_name, from_addr = d["from"]
    sender_domain = d.get("sender_domain") or from_addr.split("@", 1)[1]
    rcpt = d.get("rcpt") or OWNER_HOME
    headers = [("Return-Path", f"<{d.get('return_path', from_addr)}>")]
    for r in received_chain(rng, d.get("infra", "webmail"), sender_domain, rcpt, date, d.get("helo")):
        headers.append(("Received", r))

    to_list = d.get("to") or [(OWNER_NAME, rcpt)]
    if isinstance(to_list, str):
        to_value = to_list
    else:
        to_value = fold_addresses([fmt_addr(n, a) for n, a in to_list])
    subject = d["subject"]
    subj_value = header_text(subject, rng, force=d.get("encode_subject", False), charset=d.get("subject_charset"))
    mid = d.get("message_id") or message_id(rng, d.get("mid_domain", sender_domain), date)

    main = [("From", fmt_addr(from_name, from_addr)), ("To", to_value)]
    if d.get("cc"):
        main.append(("Cc", fold_addresses([fmt_addr(n, a) for n, a in d["cc"]])))
    if d.get("reply_to"):
        main.append(("Reply-To", fmt_addr(*d["reply_to"])))
    main.append(("Subject", subj_value))
    main.append(("Date", format_datetime(date)))
    main.append(("Message-ID", mid))
    if d.get("in_reply_to"):
        main.append(("In-Reply-To", d["in_reply_to"]))
        main.append(("References", fold_header(d.get("references") or d["in_reply_to"])))
    order = rng.randint(0, 2)
    if order == 1:
        main = main[2:] + main[:2]
    elif order == 2:
        main = sorted(
            main,
            key=lambda kv: [
                "Date",
                "From",
                "To",
                "Cc",
                "Reply-To",
                "Message-ID",
                "Subject",
                "In-Reply-To",
                "References",
            ].index(kv[0]),
        )
    headers.extend(main)
    if d.get("mailer"):
        headers.append(d["mailer"])
    for k, v in d.get("extra_headers", []):
        headers.append((k, fold_header(v)))
    headers.append(("MIME-Version", "1.0"))

    # ---- body ----
    text, htmlb = d.get("text"), d.get("html")
    prefs = d.get("charsets", [("utf-8", 6), ("iso-8859-1", 2), ("us-ascii", 2)])
    ctes = d.get("ctes", [("7bit", 4), ("quoted-printable", 3), ("8bit", 1), ("base64", 1)])
    sample = (text or "") + (htmlb or "")
    charset = pick_charset(rng, sample, prefs)
    quote_cs = chance(rng, 0.5)
    bstyle = d.get("boundary_style", rng.randint(0, 4))
    parts = []
    if text is not None:
        parts.append(text_leaf(text, "plain", charset, wchoice(rng, ctes), quote_cs))
    if htmlb is not None:
        hctes = [(c, w) for c, w in ctes if c != "8bit"] or ctes
        parts.append(text_leaf(htmlb, "html", charset, wchoice(rng, hctes), quote_cs))
    body = parts[0] if len(parts) == 1 else Multi("alternative", make_boundary(rng, bstyle), parts)
    atts = d.get("attachments") or []
    if atts:
        leaves = [body]
        for fname, ctype, data in atts:
            if isinstance(data, str):
                leaves.append(
                    text_leaf(
                        data,
                        ctype.split("/", 1)[1].split(";")[0],
                        "utf-8",
                        rng.choice(["base64", "quoted-printable", "7bit"]),
                        True,
                        extra=[("Content-Disposition", f'attachment; filename="{fname}"')],
                    )
                )
            else:
                leaves.append(binary_leaf(fname, ctype, data, inline=d.get("inline_images", False)))
        body = Multi(
            "mixed",
            make_boundary(rng, bstyle),
            leaves,
            preamble="This is a multi-part message in MIME format." if chance(rng, 0.5) else None,
        )
    ch, body_bytes = serialize_entity(body)
    headers.extend(ch)
    return serialize_headers(headers) + b"\n" + body_bytes


def text_to_html(text: str, style: str = "plain") -> str:
    """Turn a plain-text body into a simple HTML document."""
    url_re = re.compile(r"(https?://[^\s<>\"]+)")
    blocks = []
    for para in text.split("\n\n"):
        if para.startswith(">"):
            inner = "<br>\n".join(html.escape(ln.lstrip("> ").rstrip()) for ln in para.split("\n"))
            blocks.append(f'<blockquote style="border-left:2px solid #ccc;padding-left:8px">\n{inner}\n</blockquote>')
            continue
        esc = html.escape(para)
        esc = url_re.sub(lambda m: f'<a href="{m.group(1)}">{m.group(1)}</a>', esc)
        esc = esc.replace("\n", "<br>\n")
        blocks.append(f"<p>{esc}</p>" if style == "plain" else f"<div>{esc}</div>")
    font = {"plain": "Arial, sans-serif", "div": "Helvetica, Arial, sans-serif"}.get(style, "sans-serif")
    return (
        "<html>\n<head>\n"
        f'</head>\n<body style="font-family:{font};font-size:14px">\n' + "\n".join(blocks) + "\n</body>\n</html>\n"
    )


def quote_block(text: str, who: str, when: dt.datetime) -> str:
    head = f"On {when.strftime('%a, %d %b %Y at %H:%M')}, {who} wrote:"
    lines = []
    for ln in wrap(text, 68).split("\n"):
        lines.append(">" if not ln.strip() else "> " + ln if not ln.startswith(">") else ">" + ln)
    return head + "\n" + "\n".join(lines)


# ---------------------------------------------------------------------------
# Shared slot banks
# ---------------------------------------------------------------------------

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

COMMON = {
    "day": WEEKDAYS + ["Thursday afternoon", "Monday morning"],
    "day2": WEEKDAYS,
    "time": ["9:30", "10:00", "11:15", "11:30", "13:00", "14:00", "14:30", "15:00", "16:15"],
    "time2": ["10:45", "12:10", "15:40", "17:05", "18:20", "21:30"],
    "n": lambda r: str(r.randint(2, 9)),
    "n2": lambda r: str(r.randint(10, 40)),
    "pct": lambda r: str(r.randint(3, 28)),
    "date_short": lambda r: f"{r.randint(1, 28)} {r.choice(MONTHS)[:3]}",
    "date_long": lambda r: f"{r.choice(WEEKDAYS)} {r.randint(1, 28)} {r.choice(MONTHS)}",
    "city": [
        "Lisbon",
        "Rotterdam",
        "Toronto",
        "Dublin",
        "Leeds",
        "Krakow",
        "Valencia",
        "Lyon",
        "Gothenburg",
        "Edinburgh",
        "Austin",
        "Porto",
        "Bristol",
        "Ghent",
    ],
}

WORK = dict(COMMON)
WORK.update(
    {
        "project": [
            "Project Heron",
            "the billing migration",
            "the Atlas dashboard",
            "Kingfisher",
            "the search rewrite",
            "the mobile onboarding flow",
            "the data warehouse move",
            "Lighthouse",
            "the partner API",
            "the pricing page refresh",
            "the audit log work",
        ],
        "meeting": [
            "weekly sync",
            "design review",
            "sprint planning",
            "retro",
            "roadmap review",
            "architecture forum",
            "planning session",
            "demo",
            "incident review",
        ],
        "other_meeting": [
            "customer call",
            "all-hands",
            "budget review",
            "interview panel",
            "vendor demo",
            "security training",
        ],
        "room": ["Kestrel", "Osprey", "Heron", "Wren", "Lark", "Magpie", "Finch", "Curlew"],
        "topic": [
            "error handling",
            "the caching layer",
            "logging",
            "the accessibility fixes",
            "the export job",
            "rate limiting",
            "feature flags",
            "the permissions model",
            "test coverage",
            "the on-call rota",
            "the retry policy",
            "schema migrations",
        ],
        "module": [
            "ingest",
            "billing",
            "auth",
            "report",
            "scheduler",
            "export",
            "notify",
            "search",
            "parser",
            "config",
            "invoice",
            "webhooks",
        ],
        "service": [
            "payments gateway",
            "report service",
            "search cluster",
            "auth proxy",
            "export worker",
            "notification queue",
            "metrics pipeline",
        ],
        "pr": lambda r: str(r.randint(210, 4980)),
        "ticket": lambda r: f"{r.choice(['PLAT', 'DATA', 'MOB', 'PAY', 'OPS'])}-{r.randint(100, 2999)}",
        "branch": ["main", "release-4.2", "release-4.3", "develop", "hotfix/export-timeouts"],
        "amount": lambda r: money(r, 2, 60, r.choice(["£", "$", "€"]), False) + ",000",
        "small_amount": lambda r: money(r, 120, 4800, r.choice(["£", "$", "€"]), False),
        "q": ["1", "2", "3", "4"],
        "conference": [
            "DataDays North",
            "the platform engineering summit",
            "DevHarbour",
            "the regional Python meetup",
            "OpsCamp",
            "the product leadership forum",
        ],
        "team": ["platform", "data", "mobile", "payments", "growth", "infrastructure", "design"],
        "role": [
            "backend engineer",
            "data analyst",
            "product designer",
            "QA engineer",
            "engineering manager",
            "site reliability engineer",
        ],
        "skill": ["SQL", "debugging", "API design", "testing", "Python", "communication"],
        "item": [
            "monitors",
            "standing desks",
            "a build server",
            "the new test devices",
            "headsets",
            "the meeting room screens",
        ],
        "customer": [
            "Brightwater Energy",
            "Pellucid Health",
            "Marlow & Finch",
            "Tidewater Logistics",
            "Oakhurst Schools",
            "Saltmarsh Foods",
        ],
        "vendor": ["Cloudbarn", "Tessellate Software", "Halberd Systems", "Greyfield Hosting"],
        "place": [
            "the Thai place on Mill Street",
            "Rosa's Kitchen",
            "the canteen",
            "the pizza place by the station",
            "Little Fern Cafe",
            "the noodle bar on Quay Road",
        ],
        "metric": ["p95 latency", "error rate", "signup conversion", "churn", "query time", "build time"],
    }
)

WORK_KINDS = {
    "meeting": {
        "subjects": [
            "{meeting} [moved to|on] {day}",
            "Agenda for {day}'s {meeting}",
            "Can we move the {meeting}?",
            "Notes: {meeting} {date_short}",
            "Quick call about {project}?",
            "{project} check-in",
        ],
        "cores": [
            "Could we push the {meeting} to {day} at {time}? I have a clash with the {other_meeting} and I'd rather not rush either of them.",
            "Agenda for {day}: 1) status of {project}, 2) open questions on {topic}, 3) anything else. I've booked the {room} room from {time} for an hour.",
            "Notes from today's {meeting} are in the shared folder. Main decisions: we keep the {date_short} deadline for {project}, and we look at {topic} again in two weeks.",
            "I'd like ten minutes on {project} before the {meeting}. Nothing urgent, I just want to check we agree on the scope before we present it.",
            "The {room} room is double booked on {day}, so I've moved us to {time} in the {room2} room instead. The video link stays the same.",
            "Reminder that the {meeting} is now fortnightly. If you have items, add them to the doc by {day} lunchtime so I can order them.",
            "We ran out of time before we got to {topic}. Can we pick it up async? I'll write a short summary of the options tonight.",
            "Two actions from the {meeting}: you were going to check the numbers on {metric}, and I'll follow up with {customer} about the timeline.",
        ],
        "extra_slots": {"room2": ["Puffin", "Gannet", "Plover", "Dunlin"]},
    },
    "review": {
        "subjects": [
            "Review request: {module} refactor (#{pr})",
            "Re: PR #{pr}",
            "Flaky test on {branch}",
            "Question about the {module} change",
            "[{ticket}] {topic} follow-up",
        ],
        "cores": [
            "I left a few comments on PR #{pr}. Mostly small things: naming in the {module} module and a missing test for the empty-input case. Happy to approve once those are in.",
            "The change to {module} looks good to me, but I'm worried about the retry loop: if the {service} is down we will call it every {n} seconds from every worker.",
            "Can you take a look at #{pr} when you get a chance? It splits the {module} code into smaller functions and should make the {topic} work easier.",
            "CI is failing on {branch} because of a flaky test in test_{module}.py. I've rerun it twice; if it fails again I'll open a ticket and mark it as skipped for now.",
            "I rebased your branch onto {branch} because it had drifted quite a bit. There was one conflict in the {module} config loader which I resolved by keeping your version.",
            "Small thing: the new function returns None on error but the callers in {module2} expect an exception. Either is fine, but we should pick one.",
            "Benchmarks for #{pr}: {metric} went from {n2}0 ms to {n}0 ms on the staging data. Nice work.",
            "I think we should split this PR. The {topic} part is ready, but the {module} migration needs a second pair of eyes from the {team} team.",
        ],
        "extra_slots": {"module2": ["scheduler", "export", "api", "cli", "worker"]},
    },
    "budget": {
        "subjects": [
            "Q{q} budget draft",
            "Budget: need to trim {amount}",
            "PO for {item}",
            "Spend review for the {team} team",
            "Re: licence renewal",
        ],
        "cores": [
            "Attached is the draft budget for Q{q}. Travel is up by about {pct}% because of the {city} workshop, but we saved on licences, so overall we are roughly flat.",
            "Finance asked us to trim {amount} from the {team} budget before {day}. Options I can see: delay the laptop refresh, or drop one of the conference trips.",
            "I approved the purchase order for {item}. Delivery should take about {n} weeks; {name} will sort out where they go.",
            "The renewal quote from {vendor} came in {pct}% higher than last year. I'd like to push back before we sign anything.",
            "Can you send me your estimate for cloud costs for {project} by {day}? A rough range is fine, I mostly need the order of magnitude.",
            "We are {small_amount} under on the training line this year. If anyone wants to book a course, now is a good time.",
        ],
        "extra_slots": {"name": ["Ruth", "Colin", "Laila"]},
    },
    "travel": {
        "subjects": [
            "Travel to {city}",
            "Your trip to {city} - booking details",
            "Expenses for the {city} trip",
            "Anyone going to {conference}?",
            "Hotel for the {city} offsite",
        ],
        "cores": [
            "Your flights to {city} are booked: outbound {day2} morning, return on Friday evening. The hotel is the one about ten minutes' walk from the office.",
            "Reminder to submit your expense report for the {city} trip by the end of the month. Photos or PDFs of receipts are fine.",
            "Is anyone else going to {conference} in {city}? We could share a taxi from the airport and maybe book a table for dinner on the first night.",
            "The train option to {city} is only about an hour longer than flying and half the price, so I've gone with that unless you object.",
            "For the offsite in {city} we have the room from {time} on {day2}. Please tell me about any dietary requirements by {date_short}.",
            "Per diem for {city} is {small_amount} for the whole trip. Keep receipts for anything above that and we will sort it out afterwards.",
        ],
    },
    "incident": {
        "subjects": [
            "Heads-up: {service} degraded",
            "Postmortem: {service} outage {date_short}",
            "[{ticket}] Elevated errors on {service}",
            "On-call handover",
        ],
        "cores": [
            "Heads-up: the {service} had elevated error rates between {time} and {time2} UTC. The cause was an expired certificate on the internal proxy. Postmortem on {day}.",
            "Handover for the on-call week: two pages, both for disk space on the {service} hosts. I cleaned up old logs but we should really fix the rotation.",
            "The postmortem draft is up. Timeline is complete, but the contributing factors section needs input from the {team} team.",
            "We rolled back the {module} deploy at {time2}. Error rate is back to normal. I'll write up what happened in the morning.",
            "Our alert for {metric} fired {n2} times last week and only one of those needed action. I'd like to raise the threshold; any objections?",
            "Customers on the older plan saw timeouts when exporting large reports. The fix is merged and will go out with the next release.",
        ],
    },
    "hiring": {
        "subjects": [
            "Interview panel for {role}",
            "Feedback: {role} candidate",
            "Can you do a tech interview on {day}?",
            "Hiring update",
        ],
        "cores": [
            "We have {n} candidates for the {role} role. Could you do the technical interview on {day} at {time}? It's the usual hour-long pairing exercise.",
            "Feedback on the {role} candidate: strong on {skill}, a bit weaker on system design. I'd lean towards yes, but I'd like to hear what the others thought.",
            "Please put your interview notes in the hiring tool by end of day so we can make a decision on {day}.",
            "We made an offer for the {role} position and it was accepted. Start date is {date_short}. Thanks to everyone who helped with interviews.",
            "I've updated the take-home exercise so it can be done in two hours. Would you mind trying it out and telling me if it's still too long?",
        ],
    },
    "planning": {
        "subjects": [
            "Roadmap for Q{q}",
            "Thoughts on {project}",
            "Next quarter priorities",
            "Team lunch next week",
            "Proposal: {topic} cleanup",
        ],
        "cores": [
            "Here's my first pass at the roadmap for next quarter. The big items are {project} and the {topic} cleanup; everything else is small.",
            "I think we are trying to do too much in {project}. If we drop the reporting part we could ship the core in about {n} weeks.",
            "Team lunch is at {place} next Thursday at 12:30. Please reply if you have any dietary requirements.",
            "Before we commit to {project} I'd like a short written proposal: what problem, who benefits, how we know it worked.",
            "The {team} team asked whether we can help with {topic}. I said probably in Q{q}, but not before.",
            "Summary of the survey: people like the new release process but want fewer meetings on {day2}s. I'll propose a no-meeting afternoon.",
        ],
    },
    "customer": {
        "subjects": [
            "{customer}: export issue",
            "Escalation from {customer}",
            "{customer} renewal",
            "Question from {customer} about {topic}",
        ],
        "cores": [
            "{customer} reported that exports from the dashboard are missing the last day of data. Can someone from the {team} team take a look this week?",
            "{customer} would like a call about {topic} on {day}. They are generally happy, but they found the last release notes confusing.",
            "Their contract renews in {n} weeks. They mentioned they might add another {n2} seats if the single sign-on work lands in time.",
            "I replied to {customer} with the workaround and said we'd have a proper fix in the next release. Ticket is {ticket}.",
            "Could you join the call with {customer} on {day} at {time}? They have detailed questions about the {module} API that I can't answer.",
        ],
    },
}

WORK_EXTRAS = [
    "Let me know if that doesn't work for you.",
    "No rush on this, but it would be good to sort it before the end of next week.",
    "Happy to jump on a quick call if that's easier.",
    "I've copied in a couple of people because this touches their area too.",
    "Sorry for the long email!",
    "Shout if I missed anything.",
    "I'm out on {day2} afternoon, so mornings are best.",
    "The doc is in the usual shared folder.",
    "Thanks again for picking this up.",
    "I'll update the ticket once we decide.",
]

WORK_GREETINGS = [
    "Hi {first},",
    "Hi {first},",
    "Hey {first},",
    "{first},",
    "Morning {first},",
    "Hi all,",
    "Hello {first},",
    "Hi team,",
]
SIGNOFFS = [
    "Thanks,",
    "Cheers,",
    "Best,",
    "Thanks!",
    "Speak soon,",
    "Ta,",
    "Regards,",
    "Many thanks,",
    "Best wishes,",
    "All the best,",
]


def work_signature(rng, person):
    style = rng.randint(0, 3)
    phone = f"+44 20 7946 0{rng.randint(100, 999)}"
    if style == 0:
        return f"{person['first']}"
    if style == 1:
        return f"{person['name']}\n{person['role']} | Corvid Labs"
    if style == 2:
        return f"-- \n{person['name']}\n{person['role']}\nCorvid Labs | {phone}"
    return f"{person['first']}\n\nSent from my phone"


# ---------------------------------------------------------------------------
# Ham generators.  Each returns a draft dict for render().
# ---------------------------------------------------------------------------


def ham_work(rng):
    kind = rng.choice(sorted(WORK_KINDS))
    spec = WORK_KINDS[kind]
    bank = dict(WORK)
    bank.update(spec.get("extra_slots", {}))
    ctx = {}
    sender = colleague(rng) if chance(rng, 0.85) else None
    if sender is None:
        pname, paddr, company = rng.choice(PARTNERS)
        sender = {"name": pname, "first": pname.split()[0], "addr": paddr, "role": f"Account Manager, {company}"}
        infra = "org"
    else:
        infra = "corp"
    subject = fill(rng, rng.choice(spec["subjects"]), ctx, bank)
    greet = fill(rng, rng.choice(WORK_GREETINGS), {"first": OWNER_FIRST}, bank)
    cores = rng.sample(spec["cores"], k=min(len(spec["cores"]), rng.choice([1, 1, 2, 2, 3])))
    paras = [fill(rng, c, ctx, bank) for c in cores]
    if chance(rng, 0.5):
        paras.append(fill(rng, rng.choice(WORK_EXTRAS), ctx, bank))
    body = greet + "\n\n" + "\n\n".join(paras) + "\n\n" + rng.choice(SIGNOFFS) + "\n" + work_signature(rng, sender)
    date = random_date(rng, business_hours=True)
    d = {
        "from": (sender["name"], sender["addr"]),
        "rcpt": OWNER_WORK,
        "to": [(OWNER_NAME, OWNER_WORK)],
        "subject": subject,
        "date": date,
        "infra": infra,
    }
    if chance(rng, 0.35):
        others = [colleague(rng, exclude=(sender["name"],)) for _ in range(rng.randint(1, 3))]
        seen = []
        for o in others:
            if (o["name"], o["addr"]) not in seen:
                seen.append((o["name"], o["addr"]))
        if chance(rng, 0.5):
            d["cc"] = seen
        else:
            d["to"] = d["to"] + seen
    # replies with quoted text
    if chance(rng, 0.35):
        prev_date = date - dt.timedelta(hours=rng.randint(1, 30), minutes=rng.randint(0, 59))
        prev = fill(rng, rng.choice(spec["cores"]), ctx, bank)
        prev_txt = f"Hi {sender['first']},\n\n{prev}\n\n{OWNER_FIRST}"
        body = wrap(body) + "\n\n" + quote_block(prev_txt, f"{OWNER_NAME} <{OWNER_WORK}>", prev_date)
        d["subject"] = "Re: " + subject if not subject.startswith("Re:") else subject
        d["in_reply_to"] = message_id(rng, WORK_DOMAIN, prev_date)
    else:
        body = wrap(body)
    d["text"] = body + "\n"
    if chance(rng, 0.25):
        d["html"] = text_to_html(body, rng.choice(["plain", "div"]))
    if kind == "budget" and chance(rng, 0.5):
        rows = ["category,planned,actual"]
        for cat in ["travel", "licences", "hardware", "training", "contractors", "events"]:
            p = rng.randint(2, 60) * 500
            rows.append(f"{cat},{p},{p + rng.randint(-40, 40) * 50}")
        d["attachments"] = [(f"budget_q{ctx.get('q', '3')}.csv", "text/csv", "\n".join(rows) + "\n")]
    elif kind in ("meeting", "planning") and chance(rng, 0.25):
        d["attachments"] = [("invite.ics", "text/calendar", make_ics(rng, subject, date))]
    elif kind in ("incident", "travel") and chance(rng, 0.2):
        lines = [subject, "", f"Prepared by {sender['name']}", f"Date: {date.strftime('%d %B %Y')}", ""] + wrap(
            " ".join(paras), 80
        ).split("\n")
        fname = "postmortem.pdf" if kind == "incident" else "itinerary.pdf"
        d["attachments"] = [(fname, "application/pdf", make_pdf(rng, lines, rng.randint(0, 3000)))]
    d["mailer"] = rng.choice(HAM_MAILERS) if chance(rng, 0.6) else None
    d["charsets"] = [("utf-8", 5), ("us-ascii", 3), ("iso-8859-1", 1)]
    d["ctes"] = [("7bit", 5), ("quoted-printable", 4), ("base64", 1), ("8bit", 1)]
    return d


def make_ics(rng, summary, date):
    start = (date + dt.timedelta(days=rng.randint(1, 9))).astimezone(dt.UTC)
    start = start.replace(minute=rng.choice([0, 30]), second=0)
    end = start + dt.timedelta(minutes=rng.choice([30, 45, 60, 90]))
    f = "%Y%m%dT%H%M%SZ"
    summary = summary.replace(",", "\\,")
    return (
        "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//nbcli sample//calendar//EN\nMETHOD:REQUEST\n"
        "BEGIN:VEVENT\n"
        f"UID:{hexid(rng, 24)}@corvidlabs.example\nDTSTAMP:{date.astimezone(dt.UTC).strftime(f)}\n"
        f"DTSTART:{start.strftime(f)}\nDTEND:{end.strftime(f)}\nSUMMARY:{summary}\n"
        f"LOCATION:{rng.choice(['Kestrel room', 'Video call', 'Osprey room', 'Cafe on level 2'])}\n"
        "END:VEVENT\nEND:VCALENDAR\n"
    )


PERSONAL = dict(COMMON)
PERSONAL.update(
    {
        "activity": [
            "a walk along the canal",
            "the pub quiz",
            "a board game night",
            "brunch",
            "the farmers' market",
            "a picnic in the park",
            "the new climbing wall",
            "a film",
        ],
        "event": [
            "the wedding",
            "Tess's birthday",
            "the beach weekend",
            "the camping trip",
            "Sunday's barbecue",
            "the christening",
            "our hike up the ridge",
        ],
        "thing": [
            "a folding chair",
            "sun cream",
            "your guitar",
            "a dessert",
            "the badminton set",
            "wellies",
            "a bottle of something",
        ],
        "kid": ["Milo", "Ada", "Rory", "Lottie", "Finn", "Isla"],
        "pet": ["the dog", "Biscuit", "the cat", "Pepper"],
        "food": ["lasagne", "lemon drizzle cake", "chickpea curry", "shepherd's pie", "flapjacks", "banana bread"],
        "show": [
            "that detective series",
            "the baking programme",
            "the documentary about octopuses",
            "the new sci-fi series",
        ],
        "small_price": lambda r: f"£{r.randint(60, 190)}",
        "book": [
            "the novel about the lighthouse keeper",
            "that memoir you lent me",
            "the gardening book",
            "the crime novel set in Oslo",
        ],
    }
)

PERSONAL_KINDS = {
    "news": {
        "subjects": ["News from home", "Catching up", "Quick update", "Hello from us", "Sunday"],
        "cores": [
            "Just checking you got home okay. Dad says the tomato plants are finally doing something after all that rain.",
            "{kid} lost a tooth on Tuesday and insisted on writing a letter to the tooth fairy asking for a receipt.",
            "We finally had the boiler fixed. The engineer said it was a miracle it lasted this long, which was reassuring.",
            "{pet} has discovered the neighbour's pond and comes back muddy every single morning.",
            "Your aunt phoned and asked after you. I told her you were busy with work but doing well.",
            "The weather has been lovely, so we've been eating outside most evenings. The garden looks better than it has in years.",
            "I started {book} and I can't put it down. I'll pass it on when I'm done if you want it.",
            "We watched {show} last night. No spoilers, but the ending was a surprise.",
        ],
    },
    "plans": {
        "subjects": ["{day2}?", "Plans for the weekend", "Are you free {day}?", "This weekend", "Re: {activity}"],
        "cores": [
            "Are you free on {day2}? A few of us are going to {activity} around {time2}. Bring {thing} if you have one.",
            "We were thinking of {activity} on Saturday, then food at ours afterwards. Let me know if you can make it.",
            "Can we move our catch-up to {day2}? Work has gone a bit mad this week.",
            "I can pick you up at {time2} if that helps. Text me when you're leaving.",
            "Shall we book the cottage for the long weekend? It's {small_price} each if six of us go.",
            "Don't forget it's {kid}'s party on Saturday. They've asked for a dinosaur cake, so no pressure.",
        ],
    },
    "photos": {
        "subjects": ["Photos from {event}", "Pictures!", "A few snaps", "Photos as promised"],
        "cores": [
            "Here are the photos from {event}. The one of everyone squinting into the sun is my favourite.",
            "Attached a few pictures. The rest are too blurry, I need a better phone.",
            "Sorry it took me so long to send these. There are loads more if you want them.",
            "I've attached the group photo. Please don't share the one where I'm mid-sneeze.",
        ],
    },
    "thanks": {
        "subjects": ["Thank you!", "Thanks for {event_short}", "Lovely to see you", "Thanks again"],
        "cores": [
            "Thank you so much for having us. The food was amazing and {kid} hasn't stopped talking about your {pet_short}.",
            "Thanks for the birthday card and the voucher, that was very kind of you.",
            "It was lovely to see you last weekend. Let's not leave it so long next time.",
            "Thanks for lending us the tent. It survived, mostly. I'll drop it back on {day2}.",
        ],
        "extra_slots": {
            "event_short": ["dinner", "Saturday", "the lift", "the weekend", "the present"],
            "pet_short": ["dog", "cat", "chickens", "tortoise"],
        },
    },
    "recipe": {
        "subjects": ["{food} recipe", "The recipe you asked for", "Re: that {food}"],
        "cores": [
            "Here's the {food} recipe you asked for. I never measure anything, so these amounts are a rough guess.",
            "The trick with the {food} is to let it rest before cutting. I learned that the hard way.",
            "I doubled everything last time and it worked fine, it just needed an extra twenty minutes.",
        ],
    },
    "move": {
        "subjects": ["We got the keys!", "New address", "Moving day", "Housewarming"],
        "cores": [
            "We finally got the keys! The new place is a bit of a mess but the kitchen is great. Housewarming on {date_short}, details to follow.",
            "Our new address is 14 Larch Close, Millford. The post should be redirected, but just in case.",
            "Moving day went fine apart from the sofa, which did not want to go up the stairs. It's in the garden for now.",
            "If you're free on Saturday we could really use an extra pair of hands with the boxes. Pizza provided.",
        ],
    },
}

PERSONAL_GREETINGS = ["Hi Dana,", "Hiya,", "Hi love,", "Dana!", "Hey you,", "Hi both,", "Hello!", "Hi sweetheart,", ""]
PERSONAL_SIGNOFFS = [
    "Love,",
    "Lots of love,",
    "xx",
    "Speak soon,",
    "Take care,",
    "See you soon,",
    "Cheers,",
    "Love you,",
    "Bye for now,",
]


def ham_personal(rng):
    kind = rng.choice(sorted(PERSONAL_KINDS))
    spec = PERSONAL_KINDS[kind]
    bank = dict(PERSONAL)
    bank.update(spec.get("extra_slots", {}))
    ctx = {}
    if chance(rng, 0.45):
        name, addr, signame = FAMILY[rng.choice(sorted(FAMILY))]
    else:
        name, addr = rng.choice(FRIENDS)
        signame = name.split()[0]
    subject = fill(rng, rng.choice(spec["subjects"]), ctx, bank)
    cores = rng.sample(spec["cores"], k=min(len(spec["cores"]), rng.choice([1, 2, 2, 3])))
    paras = [fill(rng, c, ctx, bank) for c in cores]
    if kind == "recipe":
        ings = rng.sample(
            [
                "2 onions",
                "a tin of tomatoes",
                "300g flour",
                "3 eggs",
                "a knob of butter",
                "2 cloves of garlic",
                "a handful of spinach",
                "150g sugar",
                "a splash of milk",
                "1 tsp cumin",
                "a lemon",
                "400g mince",
                "2 bananas",
            ],
            k=rng.randint(4, 7),
        )
        paras.append("\n".join("- " + i for i in ings))
        paras.append(f"Oven at {rng.choice([160, 180, 190, 200])}C for about {rng.choice([25, 35, 45, 60])} minutes.")
    greet = rng.choice(PERSONAL_GREETINGS)
    body = (
        (greet + "\n\n" if greet else "") + "\n\n".join(paras) + "\n\n" + rng.choice(PERSONAL_SIGNOFFS) + "\n" + signame
    )
    if chance(rng, 0.15):
        body += "\n\nSent from my phone"
    date = random_date(rng)
    d = {
        "from": (name, addr),
        "rcpt": OWNER_HOME,
        "to": [(OWNER_NAME, OWNER_HOME)],
        "subject": subject,
        "date": date,
        "infra": "webmail",
    }
    if chance(rng, 0.25):
        prev_date = date - dt.timedelta(hours=rng.randint(2, 72))
        prev = fill(rng, rng.choice(PERSONAL_KINDS["plans"]["cores"] + PERSONAL_KINDS["news"]["cores"]), {}, PERSONAL)
        body = wrap(body) + "\n\n" + quote_block(f"{prev}\n\nD x", f"Dana Whitlock <{OWNER_HOME}>", prev_date)
        d["subject"] = "Re: " + subject
        d["in_reply_to"] = message_id(rng, "example.com", prev_date)
    else:
        body = wrap(body)
    d["text"] = body + "\n"
    if chance(rng, 0.35):
        d["html"] = text_to_html(body, "div")
    if kind == "photos" or (kind == "move" and chance(rng, 0.3)):
        d["attachments"] = [
            (f"IMG_{rng.randint(1000, 9999)}.png", "image/png", make_png(rng, rng.randint(24, 48), rng.randint(16, 36)))
            for _ in range(rng.randint(1, 2))
        ]
    d["mailer"] = rng.choice(HAM_MAILERS) if chance(rng, 0.4) else None
    d["charsets"] = [("utf-8", 5), ("iso-8859-1", 2), ("us-ascii", 2)]
    d["ctes"] = [("7bit", 3), ("quoted-printable", 3), ("base64", 2), ("8bit", 2)]
    return d


FOREIGN = {
    "de": {
        "subjects": ["Grüße aus {ort}", "Wochenende?", "Fotos vom Ausflug", "Schöne Grüße", "Besuch im {monat}"],
        "cores": [
            "vielen Dank für die schönen Fotos! Wir haben uns sehr darüber gefreut.",
            "Bei uns ist alles gut. Die Kinder haben jetzt Ferien und sind jeden Tag draußen.",
            "Hast du Lust, im {monat} für ein paar Tage nach {ort} zu kommen? Wir haben genug Platz.",
            "Das Wetter ist leider ziemlich grau, aber am Sonntag waren wir trotzdem wandern.",
            "Ich habe endlich den Kuchen nach deinem Rezept gebacken. Er war köstlich, nur etwas zu süß.",
            "Nächste Woche fahre ich mit dem Zug nach {ort}. Vielleicht können wir uns kurz treffen?",
            "Grüß bitte deine Familie von uns. Wir denken oft an den schönen Sommer am See.",
        ],
        "slots": {
            "ort": ["Freiburg", "Zürich", "Hamburg", "Würzburg", "Göttingen", "Lübeck"],
            "monat": ["März", "Mai", "Juli", "September", "Oktober"],
        },
        "greet": ["Liebe Dana,", "Hallo Dana,", "Hallo du,"],
        "bye": ["Liebe Grüße", "Viele Grüße", "Bis bald", "Herzliche Grüße"],
    },
    "fr": {
        "subjects": ["Des nouvelles", "Ça va ?", "Vacances à {ville}", "Merci pour tout", "Photos du week-end"],
        "cores": [
            "ça fait longtemps ! J'espère que tout va bien de ton côté et que le travail n'est pas trop fatigant.",
            "Nous avons passé une semaine à {ville}, il a fait très beau et nous avons mangé beaucoup trop de fromage.",
            "Est-ce que tu serais libre en {mois} ? On pourrait se retrouver à Paris pour un café.",
            "Merci encore pour le cadeau, les enfants l'adorent. Ils jouent avec tous les soirs.",
            "Je t'envoie quelques photos du week-end. La dernière est floue mais elle me fait rire.",
            "Le nouveau travail se passe bien, même si les trajets sont un peu longs. Je lis beaucoup dans le train.",
        ],
        "slots": {
            "ville": ["Nantes", "Annecy", "Bordeaux", "Besançon", "Montpellier"],
            "mois": ["avril", "juin", "août", "octobre", "décembre"],
        },
        "greet": ["Chère Dana,", "Salut Dana,", "Coucou,"],
        "bye": ["Bises", "Grosses bises", "À bientôt", "Amitiés"],
    },
    "es": {
        "subjects": ["¡Hola desde {ciudad}!", "¿Qué tal?", "Noticias", "Fotos de la boda", "Visita en {mes}"],
        "cores": [
            "¿Qué tal todo? Aquí seguimos bien, aunque con mucho calor estos días.",
            "Te escribo porque en {mes} vamos a estar en Londres unos días. ¿Te apetece quedar a cenar?",
            "La boda fue preciosa. Te mando algunas fotos, aunque la mayoría salieron un poco oscuras.",
            "Mi hermano por fin terminó la carrera. Hicimos una pequeña fiesta en casa con toda la familia.",
            "Estoy aprendiendo a tocar la guitarra. Todavía suena fatal, pero me lo paso muy bien.",
            "Hemos estado en {ciudad} el fin de semana. Comimos paella junto al mar y caminamos muchísimo.",
        ],
        "slots": {
            "ciudad": ["Málaga", "Valencia", "Cádiz", "León", "Córdoba", "Logroño"],
            "mes": ["marzo", "mayo", "julio", "septiembre", "noviembre"],
        },
        "greet": ["¡Hola Dana!", "Querida Dana:", "Hola guapa,"],
        "bye": ["Un abrazo", "Besos", "Hasta pronto", "Un beso fuerte"],
    },
}


def ham_foreign(rng):
    lang = rng.choice(sorted(FOREIGN))
    spec = FOREIGN[lang]
    name, addr = rng.choice(FOREIGN_FRIENDS[lang])
    ctx = {}
    subject = fill(rng, rng.choice(spec["subjects"]), ctx, spec["slots"])
    paras = [fill(rng, c, ctx, spec["slots"]) for c in rng.sample(spec["cores"], k=rng.randint(2, 4))]
    body = (
        wrap(
            rng.choice(spec["greet"])
            + "\n\n"
            + "\n\n".join(paras)
            + "\n\n"
            + rng.choice(spec["bye"])
            + "\n"
            + name.split()[0]
        )
        + "\n"
    )
    d = {
        "from": (name, addr),
        "rcpt": OWNER_HOME,
        "to": [(OWNER_NAME, OWNER_HOME)],
        "subject": subject,
        "date": random_date(rng),
        "infra": "webmail",
        "text": body,
        "charsets": [("iso-8859-1", 1), ("utf-8", 1)],
        "ctes": [("quoted-printable", 3), ("8bit", 2), ("base64", 1)],
    }
    if chance(rng, 0.3):
        d["html"] = text_to_html(body.strip(), "div")
    if chance(rng, 0.25):
        d["attachments"] = [
            (f"foto_{rng.randint(1, 99)}.png", "image/png", make_png(rng, rng.randint(20, 40), rng.randint(16, 30)))
        ]
    if chance(rng, 0.5):
        d["mailer"] = rng.choice(HAM_MAILERS)
    return d


# --- mailing lists ----------------------------------------------------------

LISTS = {
    "wrenfield": {
        "addr": "wrenfield-dev@lists.wrenfield.example",
        "id": "Wrenfield development <wrenfield-dev.lists.wrenfield.example>",
        "prefix": "[wrenfield-dev] ",
        "host": "lists.wrenfield.example",
        "footer": (
            "_______________________________________________\nwrenfield-dev mailing list\n"
            "wrenfield-dev@lists.wrenfield.example\n"
            "https://lists.wrenfield.example/mailman/listinfo/wrenfield-dev"
        ),
        "archive": "https://lists.wrenfield.example/archives/wrenfield-dev/",
        "unsub": "<https://lists.wrenfield.example/mailman/options/wrenfield-dev>, "
        "<mailto:wrenfield-dev-request@lists.wrenfield.example?subject=unsubscribe>",
        "threads": [
            (
                "Proposal: drop Python 3.{pyold} support",
                [
                    "I'd like to propose dropping support for Python 3.{pyold} in the next minor release. It is past end of life and it's blocking us from using the newer typing features in the validator.",
                    "Download statistics say about {pct}% of installs still come from 3.{pyold}, mostly from CI images. That's not nothing, but it's shrinking every month.",
                    "Agreed in principle, but I'd rather not break users who pin old versions of their tooling. Could we announce it in the release notes first and drop it in the release after?",
                ],
            ),
            (
                "{version}rc{n} available for testing",
                [
                    "The release candidate is tagged and uploaded. Please try it against your projects and report anything odd on the tracker. If nothing serious turns up, the final release will follow in about a week.",
                    "I ran the benchmark suite on the release candidate: parsing is about {pct}% faster than the previous release, validation is unchanged. Numbers are in the wiki.",
                    "Tested against our internal configs (about {n2}0 files): no regressions, and the new error messages are much clearer.",
                ],
            ),
            (
                "Memory growth when loading large schemas",
                [
                    'When loading a schema with around {n2},000 keys, memory use keeps growing across reloads. It looks like the resolver cache is never cleared. Minimal example:\n\n    import wrenfield\n    for _ in range(100):\n        wrenfield.load_schema("big.yaml", cache=True)',
                    "I can reproduce this. The cache is keyed on the schema object instead of its path, so every reload adds a new entry. A weak reference should fix it.",
                    "Would it be enough to document cache=False for this use case? Changing the cache key could break people who rely on the current behaviour.",
                ],
            ),
            (
                "Moving CI to the new runners",
                [
                    "The old CI machines are being retired at the end of the month. I have a branch that moves everything to the new runners; the only thing that still fails is the Windows job, which times out while installing the test dependencies.",
                    "The Windows timeout is the dependency cache. If you key it on the lock file hash it goes from twelve minutes to about two.",
                    "Thanks for doing this. Can we also drop the nightly job on the old architecture while we're at it? Nobody has looked at its results in months.",
                ],
            ),
            (
                "Docs: translation workflow",
                [
                    "For the translations, I'd suggest we keep the English docs as the source and use the usual gettext workflow. Two volunteers have already offered to do Spanish and German.",
                    "Sounds good. We should mark the translated pages with the version they were translated from, so readers know when they are out of date.",
                    "I'm happy to review the German pages. Please keep code samples untranslated, otherwise they get out of sync.",
                ],
            ),
            (
                "[PATCH] fix off-by-one in error line numbers",
                [
                    "Error messages report the line before the actual problem. I think the cleanest fix is to count lines from 1 in the tokenizer instead of adjusting the number in every message. Patch below, all tests pass locally.\n\n    --- a/wrenfield/tokenizer.py\n    +++ b/wrenfield/tokenizer.py\n    @@ -41,7 +41,7 @@\n    -        self.line = 0\n    +        self.line = 1",
                    "Looks right to me. Could you add a test with an error on the very first line? That's the case that has bitten us before.",
                    "Applied to main, thanks! It will be in {version}.",
                ],
            ),
            (
                "Deprecating the legacy loader API",
                [
                    "The legacy loader API has been undocumented for two releases. I propose a thin compatibility shim for one more release that emits a DeprecationWarning, and then removing it entirely.",
                    "+1 from me. Please make the warning message say exactly which function to use instead.",
                    "We still use it in two internal tools, but a release of warning is plenty of time to migrate.",
                ],
            ),
            (
                "Flaky test_{testname} on Windows",
                [
                    "test_{testname} fails about one run in five on Windows. It only happens when the temporary directory path contains a space.",
                    'Traceback from my run:\n\n    Traceback (most recent call last):\n      File "run_checks.py", line {n2}, in <module>\n        main()\n      File "wrenfield/validate.py", line 212, in check\n        raise SchemaError(f"unknown key {key!r}")\n    wrenfield.errors.SchemaError: unknown key \'timeout_ms\'',
                    "I have a fix that quotes the path; will open a pull request tonight.",
                ],
            ),
            (
                "Type hints for the public API",
                [
                    "Adding type hints to the public API would help a lot of users. Is anyone already working on it?",
                    "Let's ship a py.typed marker only once the core modules are fully annotated, otherwise users get confusing errors from their type checkers.",
                    "I started on the loader module last week. I'll push a draft branch so we don't duplicate work.",
                ],
            ),
        ],
        "replies": [
            "+1",
            "Thanks, that makes sense.",
            "Good catch.",
            "I'm fine with either option.",
            "Let's discuss at the next community call.",
        ],
        "slots": {
            "pyold": ["8", "9"],
            "version": ["2.4.0", "2.5.0", "3.0.0"],
            "testname": ["loader", "paths", "unicode_keys", "include_cycle"],
        },
    },
    "cycling": {
        "addr": "rcc-members@lists.riversidecc.example",
        "id": "Riverside Cycling Club members <rcc-members.lists.riversidecc.example>",
        "prefix": "[rcc] ",
        "host": "lists.riversidecc.example",
        "footer": (
            "--\nRiverside Cycling Club - members list\nTo leave this list, visit "
            "https://lists.riversidecc.example/leave or reply with 'unsubscribe'."
        ),
        "archive": "https://lists.riversidecc.example/archive/",
        "unsub": "<https://lists.riversidecc.example/leave>",
        "threads": [
            (
                "Sunday ride: {route}",
                [
                    "Sunday's ride leaves the clock tower at 8:30. We're doing the {route} loop, about {km} km with one proper climb. Average pace around 25 km/h, no one gets dropped.",
                    "Is there a shorter option for anyone coming back from injury? I'd like to join but not for the full distance.",
                    "Forecast looks dry until midday. Mudguards please if it changes, the people behind you will thank you.",
                ],
            ),
            (
                "Club kit order - {pct}% off until Friday",
                [
                    "The club kit order is open until Friday. Members get {pct}% off jerseys and bib shorts, and shipping is free if we reach twenty orders. Sizes are on the club website.",
                    "Do the jerseys come up small? Last year's ones were very tight.",
                    "Order placed, thanks for organising. Any chance of adding a winter jacket next time?",
                ],
            ),
            (
                "AGM minutes",
                [
                    "Minutes from the AGM are on the club page. Main points: subs stay the same, we're buying a second workstand, and the summer sportive is back in June.",
                    "Thanks for writing these up. Could we add the ride leader training to the list of actions?",
                ],
            ),
            (
                "Lost: pump at the cafe stop",
                [
                    "Someone left a black mini pump at the cafe stop on Saturday. It's with me, just reply if it's yours.",
                    "That's mine! Thank you, I'll grab it from you on Sunday.",
                ],
            ),
            (
                "Winter training sessions",
                [
                    "Winter turbo sessions start on {day2}s at 7pm in the community hall. Bring your own trainer, a towel and plenty of water.",
                    "Will there be a beginners' group? I've never used a turbo trainer before.",
                    "Yes, the first half hour is easy spinning for everyone, then we split into groups.",
                ],
            ),
            (
                "Route change for Saturday",
                [
                    "Heads-up: the bridge on the river road is closed for repairs, so we'll go through the village instead. It adds about 3 km.",
                    "The village road has a lot of potholes after the winter, so take care on the descent.",
                ],
            ),
            (
                "Ride report: {route}",
                [
                    "Great turnout today, {n2} riders and only two punctures. Special thanks to whoever brought the flapjacks.",
                    "Lovely ride, thanks for leading. Photos are on the club page.",
                ],
            ),
            (
                "Puncture repair evening",
                [
                    "Learn to fix a puncture in under ten minutes! Free session on {day2} evening, tyre levers and coffee provided.",
                    "Can you also show us how to set up tubeless tyres? Mine keep losing air.",
                ],
            ),
        ],
        "replies": ["Count me in.", "Thanks for organising!", "See you there.", "Sounds great."],
        "slots": {
            "route": ["Three Bridges", "Windmill Hill", "Reservoir", "Old Quarry", "Coast Road"],
            "km": lambda r: str(r.randint(45, 110)),
        },
    },
    "camera": {
        "addr": "lantern-camera@groups.example.org",
        "id": "Lantern Street Camera Club <lantern-camera.groups.example.org>",
        "prefix": "[lantern] ",
        "host": "groups.example.org",
        "footer": (
            "--\nYou received this because you are a member of the Lantern Street Camera Club group.\n"
            "Manage your membership: https://groups.example.org/g/lantern-camera/settings"
        ),
        "archive": "https://groups.example.org/g/lantern-camera/topics",
        "unsub": "<mailto:lantern-camera+unsubscribe@groups.example.org>",
        "threads": [
            (
                "Monthly challenge: {theme}",
                [
                    "This month's challenge theme is '{theme}'. Up to three images each, deadline is the last Sunday of the month. Please keep files under 5 MB.",
                    "Are edited images allowed, or only straight out of camera?",
                    "Editing is fine, as long as you don't add anything that wasn't in the scene.",
                ],
            ),
            (
                "Exhibition at the library",
                [
                    "Our exhibition at the library opens on {date_long}. We still need two volunteers to help hang the prints on Friday afternoon.",
                    "I can help on Friday after three. Do we have enough hanging wire?",
                ],
            ),
            (
                "For sale: {gear}",
                [
                    "I'm selling my {gear}, lightly used, with both caps and the original box. Club members get first refusal at a friendly price.",
                    "Interested! Could I try it at the next meeting?",
                ],
            ),
            (
                "Results of the {theme} challenge",
                [
                    "Congratulations to everyone who entered. The judges particularly liked the use of reflections this time. Full results and comments are on the group page.",
                    "Thanks to the judges for the detailed feedback, it's really helpful.",
                ],
            ),
            (
                "Night walk on {day2}",
                [
                    "Night photography walk on {day2}: meet by the old harbour at 8pm. Bring a tripod and a head torch, and dress warmly.",
                    "Is it still on if it rains? Wet streets might actually look great.",
                ],
            ),
            (
                "Printing workshop",
                [
                    "The printing workshop is full, but we'll run it again in the spring if there's enough interest.",
                    "Please put me on the list for the spring one.",
                ],
            ),
        ],
        "replies": ["Lovely idea.", "Thanks for sorting this.", "Count me in."],
        "slots": {
            "theme": ["Reflections", "Textures", "Street portraits", "Minimalism", "Blue hour", "Doors and windows"],
            "gear": ["50mm f/1.8 lens", "carbon tripod", "old film camera", "flash unit"],
        },
    },
}


def ham_list(rng):
    key = wchoice(rng, [("wrenfield", 5), ("cycling", 3), ("camera", 2)])
    spec = LISTS[key]
    bank = dict(COMMON)
    bank.update(spec["slots"])
    ctx = {}
    person = random_person(rng)
    subj_t, posts = rng.choice(spec["threads"])
    subj = fill(rng, subj_t, ctx, bank)
    date = random_date(rng)
    reply = len(posts) > 1 and chance(rng, 0.5)
    if reply:
        k = rng.randint(1, len(posts) - 1)
        paras = [fill(rng, posts[k], ctx, bank)]
        if chance(rng, 0.3):
            paras.append(rng.choice(spec["replies"]))
    else:
        paras = [fill(rng, posts[0], ctx, bank)]
    greet = rng.choice(["Hi all,", "Hello everyone,", "Hi folks,", "", "All,"] if not reply else ["", "", "Hi,"])
    body = (
        (greet + "\n\n" if greet else "")
        + "\n\n".join(paras)
        + "\n\n"
        + rng.choice(["Thanks,", "Cheers,", "Best,", "--", "Regards,"])
        + "\n"
        + person["first"]
    )
    if reply:
        prev_person = random_person(rng)
        prev = fill(rng, posts[k - 1] if chance(rng, 0.6) else posts[0], ctx, bank)
        quoted = quote_block(
            prev, f"{prev_person['name']} <{prev_person['addr']}>", date - dt.timedelta(hours=rng.randint(1, 50))
        )
        body = (
            (wrap(body) + "\n\n" + quoted) if chance(rng, 0.3) else (quoted + "\n\n" + wrap(body))
        )  # top-posting or bottom-posting
    else:
        body = wrap(body)
    body += "\n\n" + spec["footer"] + "\n"
    subject = spec["prefix"] + subj
    if reply:
        subject = rng.choice(["Re: ", "RE: ", "Re: "]) + subject
    d = {
        "from": (person["name"], person["addr"]),
        "rcpt": OWNER_HOME,
        "to": [("", spec["addr"])],
        "subject": subject,
        "date": date,
        "infra": "list",
        "sender_domain": spec["host"],
        "text": body,
        "mid_domain": person["addr"].split("@", 1)[1],
        "return_path": spec["addr"].replace("@", "-bounces@"),
        "extra_headers": [
            ("List-Id", spec["id"]),
            ("List-Unsubscribe", spec["unsub"]),
            ("List-Archive", f"<{spec['archive']}>"),
            ("List-Post", f"<mailto:{spec['addr']}>"),
            ("Precedence", "list"),
        ],
        "charsets": [("us-ascii", 3), ("utf-8", 3), ("iso-8859-1", 1)],
        "ctes": [("7bit", 5), ("quoted-printable", 2), ("8bit", 1)],
    }
    if reply:
        d["in_reply_to"] = message_id(rng, rng.choice(WEBMAIL_DOMAINS), date)
    if chance(rng, 0.5):
        d["mailer"] = rng.choice(HAM_MAILERS)
    return d


# --- shops, receipts, newsletters, bank notices (the "hard ham") ----------

SHOPS = [
    {
        "name": "Bookworm Lane",
        "addr": "orders@bookwormlane.example",
        "domain": "bookwormlane.example",
        "items": [
            "Paperback: The Salt Road",
            "Hardback: A Field Guide to Moss",
            "Notebook, dotted A5",
            "Paperback: Quiet Engines",
            "Bookmark set",
            "Gift card",
            "Paperback: Small Harbours",
        ],
    },
    {
        "name": "Pinecrest Outfitters",
        "addr": "hello@pinecrest-outfitters.example",
        "domain": "pinecrest-outfitters.example",
        "items": [
            "Merino base layer",
            "Waterproof jacket",
            "Trail running socks (3 pack)",
            "Head torch",
            "Insulated bottle 750ml",
            "Hiking poles",
            "Fleece beanie",
        ],
    },
    {
        "name": "Kettle & Crumb",
        "addr": "shop@kettleandcrumb.example",
        "domain": "kettleandcrumb.example",
        "items": [
            "Cast iron skillet",
            "Loaf tin",
            "Coffee grinder",
            "Tea towels (set of 2)",
            "Digital scales",
            "Proving basket",
            "Enamel mug",
        ],
    },
    {
        "name": "VoltHaus Electronics",
        "addr": "noreply@volthaus.example",
        "domain": "volthaus.example",
        "items": [
            "USB-C cable 2m",
            "Wireless mouse",
            "Laptop stand",
            "Bluetooth speaker",
            "Power bank 10000mAh",
            "HDMI adapter",
            "Mechanical keyboard",
        ],
    },
    {
        "name": "Greenleaf Garden Centre",
        "addr": "orders@greenleaf-garden.example",
        "domain": "greenleaf-garden.example",
        "items": [
            "Compost 40L",
            "Tomato seedlings (6)",
            "Secateurs",
            "Bird feeder",
            "Terracotta pot 30cm",
            "Lavender plant",
            "Watering can",
        ],
    },
]


def _order_lines(rng, shop):
    items = rng.sample(shop["items"], k=rng.randint(1, 4))
    rows, total = [], 0
    for it in items:
        qty = rng.choice([1, 1, 1, 2])
        price = rng.randint(3, 90) + rng.choice([0.0, 0.49, 0.99, 0.5])
        total += qty * price
        rows.append((it, qty, price))
    ship = 0.0 if total > 40 or chance(rng, 0.3) else rng.choice([2.99, 3.95, 4.5])
    return rows, ship, total + ship


def ham_order(rng):
    shop = rng.choice(SHOPS)
    order_no = f"{rng.choice(['BL', 'PO', 'KC', 'VH', 'GG'])}-{rng.randint(100000, 999999)}"
    rows, ship, total = _order_lines(rng, shop)
    kind = rng.choice(["confirm", "confirm", "shipped", "receipt", "review"])
    subj = {
        "confirm": f"Your {shop['name']} order {order_no} is confirmed",
        "shipped": f"Good news: your order {order_no} has shipped",
        "receipt": f"Receipt for your purchase ({order_no})",
        "review": f"How was your order from {shop['name']}?",
    }[kind]
    lines = [f"Hi {OWNER_FIRST},", ""]
    lines.append(
        {
            "confirm": "Thanks for your order! We're getting it ready and will email you again when it ships.",
            "shipped": f"Your parcel is on its way with Swiftparcel. Tracking number: SP{rng.randint(10**9, 10**10 - 1)}.",
            "receipt": "Here is your receipt. You don't need to do anything, keep it for your records.",
            "review": "We hope you're enjoying your purchase. Would you mind leaving a quick review? It helps other customers and takes less than a minute.",
        }[kind]
    )
    lines.append("")
    lines.append(f"Order number: {order_no}")
    for it, q, p in rows:
        lines.append(f"  {q} x {it:<32} £{q * p:>7.2f}")
    lines.append(f"  {'Delivery':<36} {'FREE' if ship == 0 else f'£{ship:.2f}':>8}")
    lines.append(f"  {'Total':<36} £{total:>7.2f}")
    lines.append("")
    lines.append(
        rng.choice(
            [
                "Delivery address: Dana Whitlock, 14 Larch Close, Millford.",
                "Paid with card ending " + str(rng.randint(1000, 9999)) + ".",
                "Questions? Just reply to this email and a real person will help.",
            ]
        )
    )
    if chance(rng, 0.6):
        lines += [
            "",
            rng.choice(
                [
                    f"Members get free shipping on every order over £{rng.choice([20, 25, 30])}.",
                    f"Save {rng.choice([10, 15, 20])}% on your next order with code THANKYOU{rng.randint(10, 99)}.",
                    "Our summer sale starts next week - keep an eye on your inbox.",
                    "Refer a friend and you both get a £5 voucher.",
                ]
            ),
        ]
    lines += [
        "",
        f"Thanks for shopping with {shop['name']}.",
        "",
        f"You are receiving this email because you placed an order at {shop['domain']}.",
        f"Manage email preferences: https://{shop['domain']}/account/email",
    ]
    text = "\n".join(lines) + "\n"
    h_rows = "\n".join(
        f"<tr><td>{html.escape(it)}</td><td>{q}</td><td>&pound;{q * p:.2f}</td></tr>" for it, q, p in rows
    )
    htmlb = (
        '<html><body style="font-family:Helvetica,Arial,sans-serif">\n'
        f'<h2 style="color:#2b5d3a">{html.escape(shop["name"])}</h2>\n'
        + "\n".join(f"<p>{html.escape(l)}</p>" for l in lines[:3] if l)
        + '\n<table cellpadding="4" style="border-collapse:collapse">\n'
        '<tr><th align="left">Item</th><th>Qty</th><th>Price</th></tr>\n'
        + h_rows
        + f'\n<tr><td colspan="2"><b>Total</b></td><td><b>&pound;{total:.2f}</b></td></tr>\n</table>\n'
        + "\n".join(f'<p style="font-size:12px;color:#666">{html.escape(l)}</p>' for l in lines[-6:] if l)
        + f'\n<p><a href="https://{shop["domain"]}/orders/{order_no}">View your order</a></p>\n'
        "</body></html>\n"
    )
    d = {
        "from": (shop["name"], shop["addr"]),
        "rcpt": OWNER_HOME,
        "to": [(OWNER_NAME, OWNER_HOME)],
        "subject": subj,
        "date": random_date(rng),
        "infra": rng.choice(["esp", "org"]),
        "sender_domain": rng.choice(ESP_DOMAINS) if chance(rng, 0.5) else shop["domain"],
        "return_path": f"bounce-{hexid(rng, 10)}@{shop['domain']}",
        "text": text if chance(rng, 0.85) else None,
        "html": htmlb,
        "charsets": [("utf-8", 4), ("iso-8859-1", 1)],
        "ctes": [("quoted-printable", 5), ("base64", 2), ("8bit", 1)],
    }
    if kind in ("receipt", "confirm") and chance(rng, 0.3):
        d["attachments"] = [
            (
                f"receipt-{order_no}.pdf",
                "application/pdf",
                make_pdf(
                    rng,
                    [shop["name"], f"Receipt {order_no}", ""]
                    + [f"{q} x {it}  GBP {q * p:.2f}" for it, q, p in rows]
                    + [f"Total GBP {total:.2f}"],
                    rng.randint(500, 4000),
                ),
            )
        ]
    if chance(rng, 0.5):
        d["extra_headers"] = [("List-Unsubscribe", f"<https://{shop['domain']}/unsubscribe?u={hexid(rng, 12)}>")]
    return d


NEWSLETTERS = [
    {
        "name": "The Weekly Commit",
        "addr": "editor@weeklycommit.example",
        "domain": "weeklycommit.example",
        "subjects": ["The Weekly Commit #{issue}: {headline}", "Issue {issue} - {headline}"],
        "headlines": [
            "faster builds without the magic",
            "a gentle intro to property testing",
            "why your logs are too long",
            "what we learned from a year of code review",
            "the case for boring technology",
            "profiling in production safely",
        ],
        "items": [
            "A long read on how one team halved their test suite runtime by deleting tests nobody trusted.",
            "Tutorial: writing a tiny interpreter in an afternoon, with lots of diagrams.",
            "Opinion: stop putting business logic in your database triggers.",
            "Release notes roundup: three popular libraries shipped major versions this week.",
            "Job board: {n2} new remote roles, including two at companies with a four-day week.",
            "Sponsor: try our hosted CI free for 30 days, no credit card required. Limited offer for readers!",
            "Tool of the week: a command-line utility that explains what a shell pipeline does.",
        ],
    },
    {
        "name": "Pinecrest Outfitters",
        "addr": "news@pinecrest-outfitters.example",
        "domain": "pinecrest-outfitters.example",
        "subjects": [
            "Spring sale: up to {pct2}% off waterproofs",
            "Free shipping this weekend only",
            "Last chance: {pct2}% off ends tonight",
            "New in: lightweight trail gear",
            "A gift for you, {first}",
        ],
        "headlines": ["spring sale", "new arrivals", "members weekend"],
        "items": [
            "Our biggest sale of the season is here, with up to {pct2}% off waterproof jackets and boots.",
            "Free shipping on all orders this weekend - no minimum spend.",
            "Members save an extra 10% with the code in your account. Offer ends Sunday at midnight.",
            "New in: ultralight tents, merino layers and our best-selling trail shoes in three new colours.",
            "Join our free guided walk on the first Saturday of the month. Booking is essential.",
            "Shop now while stocks last. Prices shown include VAT.",
        ],
    },
    {
        "name": "Roxy Picturehouse",
        "addr": "listings@roxy-picturehouse.example",
        "domain": "roxy-picturehouse.example",
        "subjects": ["This week at the Roxy", "Members' screening: {headline}", "Your Roxy newsletter"],
        "headlines": ["silent film night with live piano", "the animation weekend", "a classic western double bill"],
        "items": [
            "This week: {headline}, plus our regular Tuesday cheap seats.",
            "Members get two free tickets a year - check your account to see if you still have yours.",
            "The cafe bar now opens at 5pm with a new small plates menu.",
            "Relaxed screenings on Sunday mornings, with lights up and sound down.",
            "Gift memberships are 20% off in December. The perfect present for film lovers!",
        ],
    },
    {
        "name": "Millford Library",
        "addr": "events@library.millford.example",
        "domain": "library.millford.example",
        "subjects": ["What's on at Millford Library in {month}", "Library news: {headline}"],
        "headlines": ["the reading challenge", "new opening hours", "free computer classes"],
        "items": [
            "The summer reading challenge for children starts on {date_long}. Free to join.",
            "Free beginners' computer classes every {day2} morning. No need to book.",
            "Our new opening hours start next month: late opening until 8pm on Thursdays.",
            "Book sale! Hundreds of donated books from 50p, all money goes to the library fund.",
            "Author talk: a local historian on the canal's industrial past. Tickets are free but limited.",
        ],
    },
    {
        "name": "Tidy Budget",
        "addr": "hello@tidybudget.example",
        "domain": "tidybudget.example",
        "subjects": ["Tidy Budget: {headline}", "{n}-minute money tips for {month}"],
        "headlines": [
            "how to audit your subscriptions",
            "building an emergency fund",
            "cheaper energy bills",
            "saving on the weekly shop",
        ],
        "items": [
            "Cancel one subscription you forgot about this month and put the money aside instead.",
            "An emergency fund doesn't have to be big to help. Start with a small, automatic transfer.",
            "Compare your energy tariff once a year. Switching took our editor about fifteen minutes.",
            "Reader question: is it worth paying off a loan early? It depends on the rate and any fees.",
            "We never sell your data and we never recommend products we are paid to promote.",
        ],
    },
]
NEWS_SLOTS = dict(COMMON)
NEWS_SLOTS.update(
    {
        "issue": lambda r: str(r.randint(80, 390)),
        "pct2": ["20", "25", "30", "40", "50"],
        "first": [OWNER_FIRST],
        "month": MONTHS,
    }
)


def ham_newsletter(rng):
    nl = rng.choice(NEWSLETTERS)
    bank = dict(NEWS_SLOTS)
    bank["headline"] = nl["headlines"]
    ctx = {}
    subj = fill(rng, rng.choice(nl["subjects"]), ctx, bank)
    items = [fill(rng, it, ctx, bank) for it in rng.sample(nl["items"], k=rng.randint(2, min(5, len(nl["items"]))))]
    unsub = f"https://{nl['domain']}/unsubscribe?id={hexid(rng, 16)}"
    links = [
        f"https://{nl['domain']}/{rng.choice(['read', 'shop', 'events', 'p'])}/{alnum(rng, 8).lower()}" for _ in items
    ]
    text = (
        f"{nl['name']}\n{'=' * len(nl['name'])}\n\n"
        + "\n\n".join(f"* {it}\n  {ln}" for it, ln in zip(items, links))
        + f"\n\n--\nYou're receiving this because you subscribed at {nl['domain']}.\nUnsubscribe: {unsub}\n"
    )
    htmlb = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>'
        + html.escape(subj)
        + '</title></head>\n<body style="margin:0;background:#f4f4f4">\n'
        '<table width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">\n'
        '<table width="600" style="background:#ffffff;font-family:Georgia,serif">\n'
        f'<tr><td style="padding:20px;font-size:24px">{html.escape(nl["name"])}</td></tr>\n'
        + "\n".join(
            f'<tr><td style="padding:10px 20px">{html.escape(it)} <a href="{ln}">Read more</a></td></tr>'
            for it, ln in zip(items, links)
        )
        + f'\n<tr><td style="padding:20px;font-size:11px;color:#888">You\'re receiving this because you '
        f'subscribed at {nl["domain"]}. <a href="{unsub}">Unsubscribe</a></td></tr>\n'
        "</table>\n</td></tr></table>\n</body></html>\n"
    )
    d = {
        "from": (nl["name"], nl["addr"]),
        "rcpt": OWNER_HOME,
        "to": [("", OWNER_HOME)],
        "subject": subj,
        "date": random_date(rng),
        "infra": "esp",
        "sender_domain": rng.choice(ESP_DOMAINS + [nl["domain"]]),
        "return_path": f"bounces+{hexid(rng, 12)}@{rng.choice(ESP_DOMAINS)}",
        "text": text if chance(rng, 0.8) else None,
        "html": htmlb,
        "extra_headers": [
            ("List-Unsubscribe", f"<{unsub}>"),
            ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
            ("List-Id", f"{nl['name']} <news.{nl['domain']}>"),
            ("X-Campaign-ID", f"{rng.randint(1000, 99999)}"),
        ],
        "charsets": [("utf-8", 5), ("iso-8859-1", 1)],
        "ctes": [("quoted-printable", 5), ("base64", 2), ("7bit", 1)],
    }
    if chance(rng, 0.4):
        d["mailer"] = ("X-Mailer", rng.choice(["Sendwave Campaigns 4.2", "MassMailer Pro 11", "SwiftSend v3.0.7"]))
    return d


ORGS = [
    {
        "name": "Harbourline Bank",
        "addr": "alerts@harbourline.example",
        "domain": "harbourline.example",
        "subjects": [
            "Your statement is ready",
            "Payment received",
            "Your new card is on its way",
            "Changes to your account terms",
            "New device signed in to online banking",
            "Direct debit set up: {payee}",
        ],
        "cores": [
            "Your {month} statement for the account ending {last4} is now available in online banking.",
            "We received your payment of {amount} on {date_long}. Thank you.",
            "Your replacement debit card is in the post and should arrive within {n} working days. Your PIN stays the same.",
            "From {date_long}, the interest rate on your savings account will change to {rate}%. You don't need to do anything.",
            "A new device signed in to your online banking on {date_long}. If this was you, there's nothing to do. If not, call us on the number on the back of your card.",
            "A new direct debit to {payee} for {amount} has been set up on your account ending {last4}.",
        ],
        "footer": "We will never ask you for your full password or PIN by email. To read this securely, log in through our app or type harbourline.example into your browser.\nHarbourline Bank, 1 Quay Street, Millford. Registered in England (fictional).",
    },
    {
        "name": "Brightwater Energy",
        "addr": "billing@brightwater-energy.example",
        "domain": "brightwater-energy.example",
        "subjects": ["Your energy bill for {month}", "Time to submit a meter reading", "Your tariff is ending soon"],
        "cores": [
            "Your bill for {month} is {amount}. It will be collected by direct debit on {date_long}.",
            "Please submit a meter reading by {date_long} so your next bill is accurate.",
            "Your fixed tariff ends in {n} weeks. Log in to your account to compare our current tariffs.",
            "You used {pct}% less energy than the same period last year. Nice work!",
        ],
        "footer": "Brightwater Energy customer services. Manage your account at https://brightwater-energy.example/account",
    },
    {
        "name": "Tellurian Mobile",
        "addr": "mybill@tellurian-mobile.example",
        "domain": "tellurian-mobile.example",
        "subjects": ["Your Tellurian bill is ready", "You've used 80% of your data", "Upgrade offer: you're eligible"],
        "cores": [
            "Your bill of {amount} is ready to view in the app.",
            "You've used 80% of your monthly data allowance. It resets on {date_long}.",
            "Good news, you're eligible for an upgrade. Keep your number and get extra data at no extra cost for 3 months.",
            "Your roaming pass for {city} is active until {date_long}.",
        ],
        "footer": "Tellurian Mobile. To stop marketing messages, update your preferences in the app.",
    },
    {
        "name": "Swiftparcel",
        "addr": "tracking@swiftparcel.example",
        "domain": "swiftparcel.example",
        "subjects": [
            "Your parcel from {shop} is out for delivery",
            "Delivered: your parcel from {shop}",
            "We missed you - your parcel is at the depot",
        ],
        "cores": [
            "Your parcel from {shop} is out for delivery today between {time} and {time2}.",
            "Your parcel was delivered at {time2} and left in your safe place.",
            "We tried to deliver your parcel today but nobody was in. We'll try again tomorrow, or you can collect it from the depot with photo ID.",
            "Tracking number SP{track}. You can change your delivery preferences in the Swiftparcel app.",
        ],
        "footer": "Swiftparcel will never ask you to pay a fee by text or email to release a parcel.",
    },
    {
        "name": "Millford Dental Practice",
        "addr": "reception@millford-dental.example",
        "domain": "millford-dental.example",
        "subjects": ["Appointment reminder", "Time for your check-up"],
        "cores": [
            "This is a reminder of your appointment on {date_long} at {time}.",
            "It's been six months since your last check-up. Please call us to book.",
            "If you need to cancel, please let us know at least 24 hours in advance.",
        ],
        "footer": "Millford Dental Practice, 22 High Street, Millford.",
    },
]
ORG_SLOTS = dict(COMMON)
ORG_SLOTS.update(
    {
        "month": MONTHS,
        "last4": lambda r: str(r.randint(1000, 9999)),
        "amount": lambda r: money(r, 8, 480, "£"),
        "rate": ["1.25", "2.10", "3.40", "3.75"],
        "payee": ["Millford Council", "Brightwater Energy", "Tellurian Mobile", "Oakhurst Gym"],
        "shop": [s["name"] for s in SHOPS],
        "track": lambda r: str(r.randint(10**9, 10**10 - 1)),
    }
)


def ham_org(rng):
    org = rng.choice(ORGS)
    ctx = {}
    subj = fill(rng, rng.choice(org["subjects"]), ctx, ORG_SLOTS)
    paras = [fill(rng, c, ctx, ORG_SLOTS) for c in rng.sample(org["cores"], k=rng.randint(1, 2))]
    text = wrap(f"Dear {OWNER_NAME},\n\n" + "\n\n".join(paras) + "\n\n" + org["footer"]) + "\n"
    d = {
        "from": (org["name"], org["addr"]),
        "rcpt": OWNER_HOME,
        "to": [(OWNER_NAME, OWNER_HOME)],
        "subject": subj,
        "date": random_date(rng),
        "infra": "org",
        "text": text,
        "return_path": f"no-reply@{org['domain']}",
        "charsets": [("utf-8", 3), ("us-ascii", 2), ("iso-8859-1", 1)],
        "ctes": [("quoted-printable", 3), ("7bit", 3), ("base64", 1)],
    }
    if chance(rng, 0.6):
        d["html"] = text_to_html(text.strip(), "div")
    return d


def ham_misc(rng):
    """Shared documents, school notes, club invoices: assorted legitimate mail."""
    kind = rng.choice(["share", "school", "invoice", "survey", "calendar"])
    date = random_date(rng)
    if kind == "share":
        p = colleague(rng)
        doc = rng.choice(
            [
                "Q3 planning notes",
                "Incident timeline",
                "Onboarding checklist",
                "Design spec v2",
                "Interview rubric",
                "Team offsite agenda",
            ]
        )
        text = (
            f'{p["name"]} shared a document with you\n\n"{doc}"\n\n{p["first"]} wrote: '
            f'"{rng.choice(["Can you have a look before Thursday?", "Comments welcome.", "FYI", "Please fill in your section."])}"\n\n'
            f"Open: https://docs.corvidlabs.example/d/{alnum(rng, 22)}\n\n"
            "You received this email because someone shared a document with you.\n"
        )
        return {
            "from": (f"{p['name']} (via Docs)", "docs-noreply@corvidlabs.example"),
            "rcpt": OWNER_WORK,
            "to": [(OWNER_NAME, OWNER_WORK)],
            "reply_to": (p["name"], p["addr"]),
            "subject": f'Document shared with you: "{doc}"',
            "date": date,
            "infra": "corp",
            "text": text,
            "html": text_to_html(text.strip()),
            "ctes": [("quoted-printable", 1), ("7bit", 1)],
        }
    if kind == "school":
        kid = rng.choice(["Milo", "Ada", "Rory"])
        text = (
            wrap(
                f"Dear parents and carers,\n\n{rng.choice(['Year 3 will be visiting the science museum on ' + rng.choice(WEEKDAYS) + '. Please send a packed lunch.', 'The summer fair raised over £2,000 for new playground equipment. Thank you!', 'Reminder: school photographs are on Thursday. Order forms will come home in book bags.', 'Non-uniform day this Friday in exchange for a donation to the food bank.'])}\n\n"
                f"{rng.choice(['Please return the consent form by Friday.', 'Any questions, please contact the school office.', 'Thank you for your continued support.'])}\n\nMrs K. Hartwell\nHeadteacher, Larch Hill Primary"
            )
            + "\n"
        )
        return {
            "from": ("Larch Hill Primary", "office@larchhill-school.example"),
            "rcpt": OWNER_HOME,
            "to": "parents@larchhill-school.example",
            "subject": rng.choice(
                ["Newsletter", "Trip reminder", "Summer fair thank you", f"Note for parents of {kid}'s class"]
            ),
            "date": date,
            "infra": "org",
            "text": text,
            "attachments": [
                (
                    "newsletter.pdf",
                    "application/pdf",
                    make_pdf(rng, ["Larch Hill Primary", "Newsletter"] + text.split("\n")[:20], rng.randint(0, 2500)),
                )
            ]
            if chance(rng, 0.4)
            else [],
            "charsets": [("utf-8", 1), ("iso-8859-1", 1)],
        }
    if kind == "invoice":
        amt = money(rng, 30, 250, "£")
        text = (
            wrap(
                f"Hi Dana,\n\nPlease find attached the invoice for this year's membership ({amt}). "
                "Bank details are on the invoice; please use your surname as the reference.\n\n"
                "Thanks,\nPriya\nTreasurer, Meadowbank Allotment Society"
            )
            + "\n"
        )
        inv = make_pdf(
            rng,
            [
                "Meadowbank Allotment Society",
                "INVOICE",
                f"Amount due: {amt.replace('£', 'GBP ')}",
                "Plot 14B",
                "Payment within 30 days",
            ],
            rng.randint(0, 2000),
        )
        return {
            "from": ("Priya Kaur", "treasurer@meadowbank-allotments.example"),
            "rcpt": OWNER_HOME,
            "to": [(OWNER_NAME, OWNER_HOME)],
            "subject": "Allotment membership invoice",
            "date": date,
            "infra": "webmail",
            "sender_domain": "postbox.example",
            "text": text,
            "attachments": [(f"invoice_{rng.randint(100, 999)}.pdf", "application/pdf", inv)],
        }
    if kind == "survey":
        shop = rng.choice(SHOPS)
        text = (
            wrap(
                f"Hi {OWNER_FIRST},\n\nWe'd love to hear what you think about {shop['name']}. "
                "Our short survey takes about three minutes, and as a thank you we'll enter you into a "
                "prize draw to win a £100 voucher.\n\nhttps://"
                + shop["domain"]
                + "/survey/"
                + alnum(rng, 10)
                + "\n\nThank you!\nThe "
                + shop["name"]
                + " team\n\nUnsubscribe: https://"
                + shop["domain"]
                + "/unsubscribe"
            )
            + "\n"
        )
        return {
            "from": (shop["name"], shop["addr"]),
            "rcpt": OWNER_HOME,
            "to": [("", OWNER_HOME)],
            "subject": "Tell us what you think (and win a £100 voucher)",
            "date": date,
            "infra": "esp",
            "sender_domain": rng.choice(ESP_DOMAINS),
            "text": text,
            "html": text_to_html(text.strip()),
            "ctes": [("quoted-printable", 3), ("base64", 1)],
        }
    p = colleague(rng)
    what = rng.choice(["Design review", "1:1", "Quarterly planning", "Team retro", "Coffee chat"])
    text = (
        f"{p['name']} has invited you to: {what}\n\nWhen: {date.strftime('%A %d %B %Y')}\n"
        f"Where: {rng.choice(['Kestrel room', 'Video call', 'Osprey room'])}\n\nAccept or decline in your calendar.\n"
    )
    return {
        "from": (p["name"], p["addr"]),
        "rcpt": OWNER_WORK,
        "to": [(OWNER_NAME, OWNER_WORK)],
        "subject": f"Invitation: {what} @ {date.strftime('%a %d %b %Y')}",
        "date": date,
        "infra": "corp",
        "text": text,
        "attachments": [("invite.ics", "text/calendar", make_ics(rng, what, date))],
    }


# ---------------------------------------------------------------------------
# Spam building blocks
# ---------------------------------------------------------------------------

SALAD_WORDS = (
    "anchor basket candle drizzle elbow fountain gravel harbour island jacket kettle lantern meadow "
    "needle orchard pebble quarry ribbon saddle thimble umbrella velvet walnut yarrow zephyr almond "
    "blanket cobbler dimple ember feather goblet hinge inkwell juniper kestrel ladder marble nutmeg "
    "oyster parsley quill rafter sparrow tangle upland vessel willow crescent bramble copper thistle "
    "meeting schedule project report budget review release coffee garden weekend family birthday "
    "invoice library ticket holiday dinner photo recipe travel holiday office train morning evening "
    "gentle quietly purple sturdy hollow brisk curious distant eager fragile humble jolly mellow "
    "narrow polite rustic tender vivid wistful swiftly loudly barely roughly softly certainly"
).split()

POISON_SENTENCES = [
    "The garden path was wet after the rain and the neighbour's dog barked twice.",
    "We moved the meeting to Thursday because the room was already booked.",
    "She left the umbrella by the door and forgot it again in the morning.",
    "The train was late, so I read two chapters of my book on the platform.",
    "Dinner was simple: soup, fresh bread and a little cheese.",
    "Please review the attached notes before the weekly sync.",
    "The kettle clicked off just as the phone started ringing.",
    "Our team finished the release notes before lunch.",
    "The library closes early on Saturdays during the summer.",
    "He fixed the bicycle chain with an old rag and some patience.",
    "The photos from the weekend came out better than expected.",
    "Thanks for the update, I will look at the budget tomorrow.",
    "A heron stood very still at the edge of the canal.",
    "The children built a small fort out of cushions and blankets.",
    "I think the test failed because the config file was missing.",
    "Let's grab coffee after the design review on Friday.",
]


def salad(rng, n):
    return " ".join(rng.choice(SALAD_WORDS) for _ in range(n))


_OBF = {"a": ["@", "4", "a"], "i": ["1", "!", "i", "l"], "o": ["0", "o"], "e": ["3", "e"], "s": ["$", "s", "5"]}


def obfuscate(rng, word, p=0.5):
    if not chance(rng, p):
        return word
    style = rng.randint(0, 3)
    if style == 0:
        return "".join(rng.choice(_OBF.get(c.lower(), [c])) if chance(rng, 0.4) else c for c in word)
    if style == 1:
        return rng.choice([".", "-", "_", " "]).join(word)
    if style == 2:
        k = rng.randint(1, max(1, len(word) - 1))
        return word[:k] + rng.choice([".", "-", "*"]) + word[k:]
    return word.upper()


SPAM_TLDS = ["test", "invalid", "example", "example.net", "example.com"]


def spam_domain(rng, words):
    parts = rng.sample(words, k=2)
    sep = rng.choice(["-", "", "-"])
    return f"{parts[0]}{sep}{parts[1]}{rng.choice(['', str(rng.randint(1, 99))])}.{rng.choice(SPAM_TLDS)}"


def spam_url(rng, domain=None, words=("offer", "deal", "now", "go", "click")):
    if domain is None or chance(rng, 0.2):
        domain = (
            ip_doc(rng)
            if chance(rng, 0.3)
            else spam_domain(rng, list(words) + ["secure", "online", "best", "direct", "top", "web"])
        )
    path = rng.choice(["", "index.php", "r", "go", "lp", "track", "x"])
    q = rng.choice(["", f"?id={rng.randint(1000, 99999)}", f"?u={alnum(rng, 10)}", f"?ref={hexid(rng, 8)}"])
    return f"http://{domain}/{path}{'/' if path and chance(rng, 0.5) else ''}{q}"


def decorate_subject(rng, s):
    r = rng.random()
    if r < 0.15:
        s = s.upper()
    elif r < 0.3:
        s = s + rng.choice(["!!!", "!!", " !!!", " $$$", " ***"])
    elif r < 0.4:
        s = s + "  " + alnum(rng, rng.randint(4, 8)).lower()
    elif r < 0.48:
        s = rng.choice(["Re: ", "RE: ", "Fwd: ", "FW: "]) + s
    return s


def spam_to(rng):
    r = rng.random()
    if r < 0.55:
        return [(rng.choice([OWNER_NAME, "", "", "Dana"]), OWNER_HOME)], OWNER_HOME
    if r < 0.65:
        return [("", OWNER_WORK)], OWNER_WORK
    if r < 0.78:
        return "undisclosed-recipients:;", OWNER_HOME
    if r < 0.9:
        alts = [
            "dana@example.com",
            "d.whitlock@example.com",
            "dwhitlock@example.com",
            "info@example.com",
            "sales@example.com",
            "admin@example.com",
        ]
        others = rng.sample(alts, k=rng.randint(1, 4))
        return [("", a) for a in others] + ([("", OWNER_HOME)] if chance(rng, 0.5) else []), OWNER_HOME
    return [("", random_person(rng)["addr"])], OWNER_HOME


def spam_sender(rng, names, domain_words, brand_domain=None):
    r = rng.random()
    if brand_domain:
        domain = brand_domain
    else:
        domain = spam_domain(rng, domain_words)
    if r < 0.25:
        # a compromised or throwaway webmail account
        p = random_person(rng, WEBMAIL_DOMAINS)
        name = rng.choice(names) if names and chance(rng, 0.6) else p["name"]
        return {
            "from": (name, p["addr"]),
            "infra": "webmail",
            "sender_domain": p["addr"].split("@")[1],
            "return_path": p["addr"],
        }
    local = rng.choice(
        [
            "info",
            "support",
            "news",
            "noreply",
            "service",
            "offers",
            "admin",
            "mail",
            rng.choice(FIRST_NAMES).lower(),
            alnum(rng, 6).lower(),
        ]
    )
    addr = f"{local}@{domain}"
    name = rng.choice(names) if names else ""
    if r < 0.45:
        esp = rng.choice(ESP_DOMAINS)
        return {
            "from": (name, addr),
            "infra": "esp",
            "sender_domain": esp,
            "return_path": f"bounce-{hexid(rng, 10)}@{esp}",
        }
    rp = addr if chance(rng, 0.5) else f"{alnum(rng, 8).lower()}@{spam_domain(rng, domain_words)}"
    return {"from": (name, addr), "infra": "bot", "sender_domain": domain, "return_path": rp}


def spam_html(rng, paras, links, title=None, image_only=False, hidden=True, colors=True):
    """HTML spam body with the usual tricks."""
    out = ["<html>", "<head>"]
    if title:
        out.append(f"<title>{html.escape(title)}</title>")
    out += ["</head>", f'<body bgcolor="{rng.choice(["#ffffff", "#fffff0", "#f0f8ff"])}">']
    if image_only:
        for ln in links[: rng.randint(1, 2)]:
            out.append(
                f'<center><a href="{ln}"><img src="{ln.rsplit("/", 1)[0]}/img/{alnum(rng, 6).lower()}.gif" '
                f'width="{rng.choice([480, 500, 600])}" height="{rng.choice([300, 360, 420])}" border="0" '
                'alt=""></a></center>'
            )
        if paras and chance(rng, 0.7):
            out.append(f'<p><font size="1">{html.escape(paras[-1])}</font></p>')
    else:
        for i, p in enumerate(paras):
            esc = html.escape(p)
            if colors and chance(rng, 0.4):
                color = rng.choice(["#ff0000", "#cc0000", "#0000ff", "#008000", "#ff6600"])
                out.append(
                    f'<p><font face="Arial" size="{rng.choice([3, 4, 5])}" color="{color}"><b>{esc}</b></font></p>'
                )
            elif chance(rng, 0.3):
                out.append(f"<center><h2>{esc}</h2></center>")
            else:
                out.append(f"<p>{esc}</p>")
            if links and chance(rng, 0.5):
                ln = links[i % len(links)]
                label = rng.choice(
                    [
                        "CLICK HERE",
                        "Click here",
                        "Order now",
                        "Learn more",
                        "Visit our site",
                        ">> Get it now <<",
                        "Claim yours",
                    ]
                )
                out.append(f'<p><a href="{ln}"><b>{label}</b></a></p>')
    if hidden and chance(rng, 0.6):
        junk = salad(rng, rng.randint(20, 70))
        style = rng.choice(
            ["display:none", "font-size:1px;color:#ffffff", "visibility:hidden;height:0", "color:#fefefe;font-size:2px"]
        )
        out.append(f'<div style="{style}">{junk}</div>')
    if links:
        out.append(
            f'<p><font size="1" color="#999999">To stop receiving these messages '
            f'<a href="{links[-1].split("?")[0]}?remove={alnum(rng, 8)}">click here</a>.</font></p>'
        )
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def spam_text(paras, links, rng):
    out = []
    for i, p in enumerate(paras):
        out.append(p)
        if links and chance(rng, 0.5):
            out.append(links[i % len(links)])
    if links and not any(l in out for l in links):
        out.append(links[0])
    return wrap("\n\n".join(out)) + "\n"


def finish_spam(rng, d, paras, links, title=None, structure=None, salad_p=0.3, poison_p=0.25):
    """Choose structure and tricks, fill in text/html/mailer/encodings."""
    if chance(rng, poison_p):
        paras = paras + [" ".join(rng.sample(POISON_SENTENCES, k=rng.randint(1, 3)))]
    structure = structure or wchoice(rng, [("html", 4), ("alt", 3), ("plain", 3), ("image", 1)])
    if structure == "plain":
        d["text"] = spam_text(paras, links, rng)
        if chance(rng, salad_p):
            d["text"] += "\n" + textwrap.fill(salad(rng, rng.randint(15, 60)), 72) + "\n"
    elif structure == "alt":
        d["text"] = spam_text(paras, links, rng)
        d["html"] = spam_html(rng, paras, links, title)
    elif structure == "image":
        d["html"] = spam_html(rng, paras, links, title, image_only=True)
        if chance(rng, 0.3):
            d["text"] = links[0] + "\n"
    else:
        d["html"] = spam_html(rng, paras, links, title)
    if "mailer" not in d:
        d["mailer"] = rng.choice(SPAM_MAILERS) if chance(rng, 0.5) else None
    d.setdefault("charsets", [("utf-8", 3), ("iso-8859-1", 3), ("us-ascii", 2)])
    d.setdefault("ctes", [("7bit", 3), ("quoted-printable", 3), ("base64", 2), ("8bit", 1)])
    d.setdefault("date", random_date(rng))
    if chance(rng, 0.15):
        d["encode_subject"] = True
    return d


def spam_base(rng, names, domain_words, subject, brand_domain=None):
    s = spam_sender(rng, names, domain_words, brand_domain)
    to, rcpt = spam_to(rng)
    d = {
        "from": s["from"],
        "infra": s["infra"],
        "sender_domain": s["sender_domain"],
        "return_path": s["return_path"],
        "to": to,
        "rcpt": rcpt,
        "subject": decorate_subject(rng, subject),
    }
    if chance(rng, 0.2):
        d["reply_to"] = ("", f"{alnum(rng, 7).lower()}@{rng.choice(WEBMAIL_DOMAINS)}")
    return d


SPAM = dict(COMMON)
SPAM.update(
    {
        "drug": ["Viagra", "Cialis", "Levitra", "Xanax", "Valium", "Tramadol", "Ambien", "Propecia", "Phentermine"],
        "price": lambda r: f"${r.randint(0, 2)}.{r.randint(10, 99)}",
        "big_pct": ["70", "75", "80", "85", "90"],
        "loan": lambda r: f"${r.choice([5, 10, 15, 25, 50, 75, 100, 250])},000",
        "apr": ["1.9", "2.4", "2.9", "3.5", "3.9"],
        "prize": lambda r: r.choice(["EUR ", "US$", "GBP "]) + f"{r.choice([450, 850, 950, 1200, 2500, 4500])},000.00",
        "ref": lambda r: (
            f"{r.choice(['EML', 'INT', 'WPL'])}/{r.randint(100, 999)}/{r.randint(1000, 9999)}/{r.choice(['24', '25', '26'])}"
        ),
        "barrister": [
            "Barrister Felix Okoro",
            "Dr. Raymond Castellano",
            "Mr. Peter Lindqvist-Mbah",
            "Barrister Samuel Adeyemi-Harrow",
            "Mrs. Helen Dunmore",
        ],
        "country": ["Burkina Faso", "Ghana", "Malaysia", "Cote d'Ivoire", "Benin", "the Netherlands", "Spain"],
        "sum": lambda r: f"US${r.choice([7.5, 10.5, 12.8, 18.2, 25.6])} million",
        "ticker": ["QRXL", "BLZN", "ZVGT", "MNTR", "KPHX", "SOLV"],
        "company": [
            "Quantrex Labs Inc.",
            "Bluezone Mining Corp",
            "Zavago Therapeutics",
            "Mintara Energy Ltd",
            "Kepharix Holdings",
            "Solvane Water Tech",
        ],
        "target": lambda r: f"${r.randint(1, 6)}.{r.randint(10, 99)}",
        "now_price": lambda r: f"${r.choice(['0.0', '0.1', '0.2'])}{r.randint(1, 9)}",
        "coin": ["BTC", "ETH", "USDT", "SOL"],
        "platform": ["CoinVesta", "Bitquant AI", "Nexora Trade", "Lumix Capital", "QuantumYield"],
        "gains": ["312%", "480%", "1,200%", "27% per week", "3x in 30 days"],
        "girl": ["Natalia", "Irina", "Kristina", "Sveta", "Elena", "Marina", "Olesya"],
        "age": lambda r: str(r.randint(23, 34)),
        "watch": ["Swiss replica watches", "luxury designer watches", "premium chronographs", "designer handbags"],
        "soft": [
            "OfficePro Suite 2025",
            "PhotoMaster CS Ultimate",
            "Antivirus Total Security",
            "PDF Creator Pro",
            "CAD Designer 3D",
            "Video Studio Deluxe",
        ],
        "bank": ["Harbourline Bank", "Postbox Mail", "Tellurian Mobile", "your email provider", "Account Services"],
        "courier": ["Swiftparcel", "Parcel Delivery Service", "Express Post", "International Courier"],
        "fee": ["$1.99", "$2.49", "£1.45", "€2.99", "$3.00"],
        "hours": ["24", "48", "12", "72"],
        "biz": ["your website", "your business", "your online store", "your company"],
    }
)


def spam_pharmacy(rng):
    ctx = {}
    drug = fill(rng, "{drug}", ctx, SPAM)
    od = obfuscate(rng, drug, 0.7)
    subj = rng.choice(
        [
            f"{od} from {fill(rng, '{price}', ctx, SPAM)} per pill",
            "Your doctor won't tell you this",
            f"Cheap {od}, no prescription needed",
            f"Men's health {fill(rng, '{big_pct}', ctx, SPAM)}% OFF",
            f"Re: your {od} order",
            "Discreet delivery worldwide",
            f"{od} - {fill(rng, '{big_pct}', ctx, SPAM)}% discount today",
        ]
    )
    d = spam_base(
        rng,
        ["Online Pharmacy", "RX Direct", "Canadian Health Store", "Dr. Mike", "Meds Express", ""],
        ["meds", "rx", "pharma", "pills", "health", "cheap", "direct", "care"],
        subj,
    )
    drugs = rng.sample(SPAM["drug"], k=rng.randint(2, 5))
    price_lines = [f"{obfuscate(rng, x, 0.5)} ...... {fill(rng, '{price}', {}, SPAM)} per pill" for x in drugs]
    paras = [
        fill(
            rng,
            rng.choice(
                [
                    "Top quality meds at the LOWEST prices on the web. No prescription, no doctor visits, no waiting.",
                    "Save up to {big_pct}% on brand and generic medications. Shipped discreetly to your door in 3-5 days.",
                    "Why pay more at your local pharmacy? We ship from licensed suppliers to over 100 countries.",
                    "Feel young again! Our customers report results in as little as 15 minutes.",
                ]
            ),
            ctx,
            SPAM,
        ),
        "\n".join(price_lines),
        fill(
            rng,
            rng.choice(
                [
                    "Free shipping on orders over $99. 100% money back guarantee.",
                    "Order today and get 10 bonus pills FREE!",
                    "Secure ordering, total privacy, fast delivery.",
                ]
            ),
            ctx,
            SPAM,
        ),
    ]
    dom = spam_domain(rng, ["meds", "rx", "pharma", "pills", "care", "health"])
    links = [spam_url(rng, dom) for _ in range(rng.randint(1, 3))]
    return finish_spam(rng, d, paras, links, title="Online Pharmacy")


def spam_loan(rng):
    ctx = {}
    subj = fill(
        rng,
        rng.choice(
            [
                "Pre-approved: {loan} loan, bad credit OK",
                "Consolidate your debt TODAY",
                "Lower your monthly payments",
                "Final notice: your application is waiting",
                "Cash in 24 hours - no credit check",
                "Rates as low as {apr}% APR",
                "You qualify for debt relief",
            ]
        ),
        ctx,
        SPAM,
    )
    d = spam_base(
        rng,
        ["Loan Approval Dept", "Debt Relief Center", "Fast Cash Online", "Mortgage Team", ""],
        ["loan", "cash", "credit", "fund", "debt", "rate", "approve", "quick"],
        subj,
    )
    paras = [
        fill(rng, p, ctx, SPAM)
        for p in rng.sample(
            [
                "Congratulations! You have been PRE-APPROVED for a personal loan of up to {loan}, even with bad credit.",
                "Stop drowning in debt. Our program can cut your payments by up to {big_pct}% and stop collection calls.",
                "Rates from {apr}% APR. No fees, no hidden costs, no obligation.",
                "Money in your account within 24 hours. Approval takes less than 2 minutes.",
                "This offer expires in {hours} hours. Don't miss out - thousands have already applied.",
                "Homeowners: refinance now before rates go up again. Save hundreds every month.",
                "Your application reference is {ref}. Complete it now to receive your funds.",
            ],
            k=rng.randint(2, 4),
        )
    ]
    links = [spam_url(rng, None, ("loan", "cash", "apply", "fund")) for _ in range(rng.randint(1, 3))]
    return finish_spam(rng, d, paras, links)


def spam_advance_fee(rng):
    ctx = {}
    kind = rng.choice(["lottery", "inheritance", "business", "charity"])
    if kind == "lottery":
        subj = rng.choice(
            [
                "CONGRATULATIONS! You have won",
                "Winning Notification",
                "Your email has won {prize}",
                "Final Claim Notice",
                "E-mail Lottery Award",
            ]
        )
        body = [
            "We are pleased to inform you that your email address was selected in our international e-mail promotion draw held on {date_long}.",
            "You have therefore been approved for a lump sum payment of {prize} in cash. Your reference number is {ref}.",
            "To claim your prize, contact our claims agent {barrister} with your full name, address, phone number and a copy of your ID.",
            "Note: a small processing and transfer fee applies. Keep this notification confidential until your claim has been processed.",
        ]
    elif kind == "inheritance":
        subj = rng.choice(
            [
                "Next of kin",
                "Inheritance claim",
                "Urgent attention: unclaimed funds",
                "Dear Beneficiary",
                "Your late relative",
            ]
        )
        body = [
            "I am {barrister}, personal attorney to a late client who shares your surname and who died in a car accident in {country}.",
            "He left a deposit of {sum} with a bank here, and no next of kin has come forward. The bank has asked me to present a relative or the funds will be confiscated.",
            "I propose that you stand as next of kin so that the funds can be released to you. We will share the sum 50/50 and everything will be done legally.",
            "Please reply with your full name, private telephone number and address so that I can send you the details.",
        ]
    elif kind == "business":
        subj = rng.choice(
            [
                "URGENT BUSINESS PROPOSAL",
                "Confidential proposal",
                "Partnership request",
                "Strictly private and confidential",
            ]
        )
        body = [
            "I am the chief accountant of a state company in {country}. During an audit I found an over-invoiced contract worth {sum}.",
            "I need a trustworthy foreign partner to receive these funds. You will receive 30% of the total for your assistance.",
            "This transaction is 100% risk free. Kindly treat it with the utmost confidentiality.",
            "Reply to my private email with your direct phone number so we can discuss further.",
        ]
    else:
        subj = rng.choice(["Donation for you", "Charity grant", "God bless you", "Philanthropy award"])
        body = [
            "My name is {barrister}. I am suffering from a long illness and my doctors say I have only a few months to live.",
            "I have decided to donate {sum} to charity through a kind person. I got your email from a random search.",
            "If you accept, I will instruct my bank to release the funds to you. Please reply quickly.",
            "May God bless you as you do the right thing.",
        ]
    subj = fill(rng, subj, ctx, SPAM)
    d = spam_base(
        rng,
        [fill(rng, "{barrister}", ctx, SPAM), "Claims Department", "Award Team", "Mrs. Grace Dunmore", ""],
        ["award", "claims", "promo", "lotto", "intl", "trust", "bank", "legal"],
        subj,
    )
    paras = [fill(rng, "Dear " + rng.choice(["Friend", "Beneficiary", "Winner", "Sir/Madam", "Sir"]) + ",", ctx, SPAM)]
    paras += [fill(rng, p, ctx, SPAM) for p in body]
    paras.append(
        fill(rng, rng.choice(["Yours faithfully,", "Best regards,", "Sincerely,"]) + "\n{barrister}", ctx, SPAM)
    )
    d["reply_to"] = (
        "",
        f"{rng.choice(['claims', 'private', 'agent', 'office'])}{rng.randint(1, 99)}@{rng.choice(WEBMAIL_DOMAINS)}",
    )
    d["text"] = wrap("\n\n".join(paras)) + "\n"
    if chance(rng, 0.3):
        d["text"] = d["text"].upper()
    if chance(rng, 0.25):
        d["html"] = text_to_html(d["text"].strip())
    d["charsets"] = [("iso-8859-1", 2), ("us-ascii", 2), ("utf-8", 1)]
    d["ctes"] = [("7bit", 3), ("quoted-printable", 2), ("base64", 2), ("8bit", 1)]
    if chance(rng, 0.1):
        d["attachments"] = [
            (
                "claim_form.pdf",
                "application/pdf",
                make_pdf(
                    rng,
                    [
                        "CLAIM FORM",
                        "Reference: " + fill(rng, "{ref}", ctx, SPAM),
                        "Full name:",
                        "Address:",
                        "Telephone:",
                        "Bank name:",
                        "Account number:",
                    ],
                    rng.randint(500, 3000),
                ),
            )
        ]
    d["date"] = random_date(rng)
    d["mailer"] = rng.choice(SPAM_MAILERS) if chance(rng, 0.4) else None
    return d


def spam_phish_account(rng):
    ctx = {}
    brand = fill(rng, "{bank}", ctx, SPAM)
    subj = fill(
        rng,
        rng.choice(
            [
                "Action required: verify your account",
                "Your password expires in {hours} hours",
                "Unusual sign-in activity detected",
                "Your mailbox is almost full",
                "Account suspended - confirm your details",
                "Security alert: confirm your identity",
                "Your account will be closed",
                "Important: update your billing information",
            ]
        ),
        ctx,
        SPAM,
    )
    lookalike = rng.choice(
        [
            "harbourline-secure.test",
            "harb0urline.example.net",
            "postbox-verify.invalid",
            "secure-login-update.test",
            "account-services.example.net",
            "tellurian-billing.invalid",
            "webmail-quota.test",
        ]
    )
    d = spam_base(
        rng,
        [brand, f"{brand} Security", "Account Team", "IT Helpdesk", "Mail Administrator"],
        ["secure", "verify", "account", "login", "update", "service"],
        subj,
        brand_domain=lookalike,
    )
    link = rng.choice(
        [
            f"http://{lookalike}/login?session={hexid(rng, 16)}",
            f"http://{ip_doc(rng)}/{rng.choice(['verify', 'secure', 'owa', 'signin'])}/",
            f"http://{lookalike}/update/{alnum(rng, 12)}",
        ]
    )
    paras = [f"Dear {rng.choice(['Customer', 'User', 'Valued Member', OWNER_NAME, 'dana.whitlock'])},"]
    paras += [
        fill(rng, p, ctx, SPAM)
        for p in rng.sample(
            [
                "We detected unusual activity on your {bank} account and have temporarily limited access for your protection.",
                "Your password is due to expire. To keep using your account, please confirm your current password using the secure link below.",
                "Your mailbox has exceeded its storage limit and you will not be able to send or receive new messages.",
                "Failure to verify within {hours} hours will result in permanent suspension of your account.",
                "This is an automated security message. Please do not reply to this email.",
                "To restore full access, verify your identity and update your payment details.",
            ],
            k=rng.randint(2, 4),
        )
    ]
    paras.append(f"Verify now: {link}")
    paras.append(
        rng.choice(
            [f"Thank you,\n{brand} Security Team", "Regards,\nAccount Services", "IT Helpdesk\n(c) All rights reserved"]
        )
    )
    if chance(rng, 0.5):
        # HTML with misleading link text
        shown = rng.choice(
            [
                "https://harbourline.example/secure",
                "https://postbox.example/account",
                "https://tellurian-mobile.example/login",
            ]
        )
        body_html = "\n".join(f"<p>{html.escape(p).replace(chr(10), '<br>')}</p>" for p in paras[:-2])
        d["html"] = (
            '<html><body style="font-family:Arial">\n<table width="560"><tr><td>\n'
            f'<h3 style="color:#1a4f8b">{html.escape(brand)}</h3>\n{body_html}\n'
            f'<p><a href="{link}" style="background:#1a4f8b;color:#fff;padding:10px 18px;text-decoration:none">'
            f"{rng.choice(['Verify Account', 'Confirm Now', 'Keep my password', 'Restore Access'])}</a></p>\n"
            f'<p style="font-size:11px;color:#777">Or copy this address: {shown}</p>\n'
            "</td></tr></table>\n</body></html>\n"
        )
        if chance(rng, 0.5):
            d["text"] = wrap("\n\n".join(paras)) + "\n"
    else:
        d["text"] = wrap("\n\n".join(paras)) + "\n"
    if chance(rng, 0.12):
        page = (
            f'<html><body><form action="{link}" method="post"><h2>{html.escape(brand)} sign in</h2>'
            '<input name="email"><input name="password" type="password"><button>Sign in</button>'
            "</form></body></html>\n"
        )
        d["attachments"] = [("secure_message.html", "text/html", page)]
    d["date"] = random_date(rng)
    d["mailer"] = rng.choice(SPAM_MAILERS) if chance(rng, 0.3) else None
    d["charsets"] = [("utf-8", 3), ("us-ascii", 2), ("iso-8859-1", 1)]
    d["ctes"] = [("quoted-printable", 3), ("7bit", 3), ("base64", 2)]
    return d


def spam_parcel(rng):
    ctx = {}
    courier = fill(rng, "{courier}", ctx, SPAM)
    subj = fill(
        rng,
        rng.choice(
            [
                "Your package could not be delivered",
                "Customs fee of {fee} required",
                "Delivery attempt failed - reschedule now",
                "{courier}: action required for parcel",
                "Your parcel is on hold",
                "Final notice: unclaimed parcel",
            ]
        ),
        ctx,
        SPAM,
    )
    dom = rng.choice(
        [
            "swiftparcel-redelivery.test",
            "parcel-tracking-info.invalid",
            "express-post.example.net",
            "delivery-reschedule.test",
            "customs-fee-pay.invalid",
        ]
    )
    d = spam_base(
        rng,
        [courier, f"{courier} Notification", "Delivery Team", "Customs Office"],
        ["parcel", "delivery", "track", "post", "ship"],
        subj,
        brand_domain=dom,
    )
    track = (
        f"{rng.choice(['SP', 'EX', 'RT', 'CN'])}{rng.randint(10**9, 10**10 - 1)}{rng.choice(['GB', 'US', 'DE', ''])}"
    )
    link = spam_url(rng, dom, ("parcel", "track"))
    paras = [
        fill(rng, p, ctx, SPAM)
        for p in [
            rng.choice(["Dear customer,", "Hello,", "Notice:"]),
            rng.choice(
                [
                    "We were unable to deliver your parcel because the address was incomplete.",
                    "Your package is being held at our depot because of an unpaid customs fee of {fee}.",
                    "Our driver attempted delivery today but nobody was available to sign for the parcel.",
                ]
            ),
            f"Tracking number: {track}",
            rng.choice(
                [
                    "Please confirm your address and pay the fee within {hours} hours or the parcel will be returned to the sender.",
                    "Schedule a new delivery here. Payment of {fee} is required to release the package.",
                    "Click below to choose a new delivery date.",
                ]
            ),
        ]
    ]
    return finish_spam(
        rng,
        d,
        paras,
        [link],
        structure=wchoice(rng, [("alt", 2), ("html", 2), ("plain", 2)]),
        salad_p=0.15,
        poison_p=0.1,
    )


def spam_stock(rng):
    ctx = {}
    subj = fill(
        rng,
        rng.choice(
            [
                "This small-cap is about to EXPLODE",
                "{ticker}: strong buy alert",
                "Hot stock pick - act before Monday",
                "Insiders are buying {ticker}",
                "Get in before the news breaks",
                "Our next 10-bagger",
            ]
        ),
        ctx,
        SPAM,
    )
    d = spam_base(
        rng,
        ["Stock Alert", "Market Insider", "Penny Pick Weekly", "Trader Report", ""],
        ["stock", "alert", "market", "trade", "invest", "pick"],
        subj,
    )
    paras = [
        fill(rng, p, ctx, SPAM)
        for p in rng.sample(
            [
                "Company: {company}\nSymbol: {ticker}\nCurrent price: {now_price}\nShort term target: {target}",
                "{company} ({ticker}) is about to announce a major contract that could send the share price through the roof.",
                "Our last three picks gained over {gains}. This one could be even bigger.",
                "Big news is expected this week. Watch {ticker} trade on Monday morning!",
                "Volume is surging and smart money is already moving in. Don't be the one who missed it.",
                "Add {ticker} to your radar NOW. Once the press release is out it will be too late.",
            ],
            k=rng.randint(3, 5),
        )
    ]
    paras.append("Disclaimer: this is not investment advice. We may hold shares in the companies we profile.")
    links = [spam_url(rng, None, ("stock", "alert", "pick")) for _ in range(rng.randint(0, 2))]
    return finish_spam(
        rng, d, paras, links, structure=wchoice(rng, [("plain", 3), ("html", 2), ("image", 1)]), salad_p=0.5
    )


def spam_dating(rng):
    ctx = {}
    girl = fill(rng, "{girl}", ctx, SPAM)
    subj = fill(
        rng,
        rng.choice(
            [
                "Hi, I saw your profile",
                "{girl} sent you a message",
                "Are you still single?",
                "Lonely tonight?",
                "hello dear",
                "I'm waiting for your answer",
                "Someone likes you!",
                "new message from {girl}",
            ]
        ),
        ctx,
        SPAM,
    )
    d = spam_base(
        rng,
        [girl, f"{girl} {rng.choice(LAST_NAMES)}", "Date Finder", "Singles Near You"],
        ["date", "love", "singles", "meet", "match", "flirt"],
        subj,
    )
    paras = [
        fill(rng, p, ctx, SPAM)
        for p in rng.sample(
            [
                "Hi! My name is {girl}, I am {age} years old. I found your email on a dating site and I decided to write to you.",
                "I am looking for a serious relationship with a kind and honest man. Maybe it is you?",
                "I have some photos I would like to show you, but I can only send them from my private page.",
                "There are {n2} singles in your area who want to meet you tonight. Registration is free!",
                "Send me a message and I will tell you more about me. I am waiting!",
                "I hope you are not angry that I wrote to you. I am a bit shy, but I liked your smile.",
            ],
            k=rng.randint(2, 4),
        )
    ]
    paras.append(rng.choice([f"{girl}", f"Kisses, {girl}", f"Yours, {girl} :)"]))
    links = [spam_url(rng, None, ("date", "love", "meet", "profile"))]
    return finish_spam(rng, d, paras, links, salad_p=0.4)


def spam_replica(rng):
    ctx = {}
    soft = chance(rng, 0.5)
    if soft:
        subj = fill(
            rng,
            rng.choice(
                [
                    "{soft} - {big_pct}% off",
                    "OEM software: download today",
                    "Cheap software, instant download",
                    "Save $$$ on {soft}",
                    "Genuine licences from $29",
                ]
            ),
            ctx,
            SPAM,
        )
        paras = [
            fill(rng, p, ctx, SPAM)
            for p in rng.sample(
                [
                    "Get {soft} for a fraction of the retail price. Instant download, full version, lifetime licence.",
                    "Why pay hundreds of dollars? Our OEM versions are 100% genuine and work forever.",
                    "Windows and Mac versions available. Download straight after payment.",
                    "Over {n2},000 satisfied customers. 24/7 support in 5 languages.",
                ],
                k=3,
            )
        ]
    else:
        subj = fill(
            rng,
            rng.choice(
                [
                    "{watch} - best prices",
                    "Luxury for less",
                    "Replica watches up to {big_pct}% off",
                    "Treat yourself today",
                    "Look rich for less",
                ]
            ),
            ctx,
            SPAM,
        )
        paras = [
            fill(rng, p, ctx, SPAM)
            for p in rng.sample(
                [
                    "Our {watch} look exactly like the originals. Only an expert could tell the difference!",
                    "Swiss movement, sapphire glass, stainless steel. All models in stock.",
                    "Prices from $149. Free worldwide shipping on orders of two or more.",
                    "Impress your friends, colleagues and partner without spending a fortune.",
                ],
                k=3,
            )
        ]
    d = spam_base(
        rng,
        ["Replica Shop", "Soft Outlet", "Luxury Store", "Deals Team", ""],
        ["replica", "soft", "lux", "watch", "oem", "store", "deal"],
        subj,
    )
    paras = [" ".join(obfuscate(rng, w, 0.08) for w in p.split(" ")) for p in paras]
    links = [spam_url(rng, None, ("replica", "soft", "lux", "watch")) for _ in range(rng.randint(1, 3))]
    return finish_spam(rng, d, paras, links)


def spam_crypto(rng):
    ctx = {}
    subj = fill(
        rng,
        rng.choice(
            [
                "Double your {coin} in 24 hours",
                "Exclusive presale: last chance",
                "Your wallet has been credited 0.{n}5 BTC",
                "AI trading bot made {gains}",
                "{platform}: your account is ready",
                "Withdraw your {coin} balance now",
                "The next 100x coin",
            ]
        ),
        ctx,
        SPAM,
    )
    d = spam_base(
        rng,
        [fill(rng, "{platform}", ctx, SPAM), "Crypto Desk", "Wallet Support", "Satoshi Club", ""],
        ["coin", "crypto", "wallet", "token", "chain", "yield", "bit"],
        subj,
    )
    paras = [
        fill(rng, p, ctx, SPAM)
        for p in rng.sample(
            [
                "Our AI-powered trading bot has made {gains} for early members. Start with as little as $250.",
                "Send any amount of {coin} to the address below and receive DOUBLE back within 24 hours. Limited time only!",
                "Your {platform} account holds an unclaimed balance. Log in and withdraw before it expires.",
                "The token presale closes in {hours} hours. Early buyers get a {big_pct}% bonus.",
                "No experience needed. The algorithm does everything for you while you sleep.",
                "Deposit address: bc1q" + alnum(rng, 30, "023456789acdefghjklmnpqrstuvwxyz"),
                "Join {n2},000 members who quit their jobs this year thanks to {platform}.",
            ],
            k=rng.randint(2, 4),
        )
    ]
    links = [spam_url(rng, None, ("coin", "yield", "token", "wallet")) for _ in range(rng.randint(1, 2))]
    return finish_spam(rng, d, paras, links)


def spam_seo(rng):
    ctx = {}
    first = rng.choice(FIRST_NAMES)
    subj = fill(
        rng,
        rng.choice(
            [
                "Quick question about {biz}",
                "Rank #1 on search engines",
                "I noticed some issues with your website",
                "Get 10,000 real followers",
                "Business leads for your sector",
                "Re: website redesign proposal",
                "Partnership opportunity",
                "Guest post on your blog?",
            ]
        ),
        ctx,
        SPAM,
    )
    d = spam_base(
        rng,
        [f"{first} {rng.choice(LAST_NAMES)}", f"{first} | Growth Agency", "SEO Experts", "Digital Team"],
        ["seo", "rank", "growth", "leads", "digital", "media", "web"],
        subj,
    )
    paras = [
        fill(rng, p, ctx, SPAM)
        for p in rng.sample(
            [
                "I was looking at {biz} and noticed a few issues that are probably costing you traffic: slow pages, missing meta tags and broken links.",
                "We can get you to the first page of search results within 90 days, or you don't pay.",
                "Our team has helped over {n2}0 companies increase their organic traffic by {big_pct}% or more.",
                "We have a verified database of {n2},000 decision makers in your industry, with emails and phone numbers.",
                "Would you be open to a quick 10-minute call this week? I can send over a free audit.",
                "We offer high authority backlinks and guest posts starting at $49.",
                "If you're not the right person, could you forward this to whoever handles marketing?",
            ],
            k=rng.randint(2, 4),
        )
    ]
    paras.append(f"Best regards,\n{first}\nSenior Consultant")
    paras.append(
        rng.choice(
            [
                "If you don't want to hear from me again, just reply with 'no thanks'.",
                "Reply STOP to opt out.",
                "P.S. Sorry if this reached you by mistake.",
            ]
        )
    )
    links = [spam_url(rng, None, ("seo", "rank", "growth")) for _ in range(rng.randint(0, 1))]
    d["mailer"] = rng.choice(HAM_MAILERS + SPAM_MAILERS) if chance(rng, 0.6) else None
    return finish_spam(
        rng, d, paras, links, structure=wchoice(rng, [("plain", 5), ("alt", 2)]), salad_p=0.05, poison_p=0.1
    )


def spam_personal(rng):
    """Short, personal-looking spam - deliberately hard to tell from ham."""
    kind = rng.choice(["link", "favour", "photo", "job", "invoice", "catchup", "schedule"])
    p = random_person(rng, WEBMAIL_DOMAINS)
    link = spam_url(rng, None, ("photo", "video", "share", "doc", "cloud", "drive"))
    if kind == "link":
        subj = rng.choice(
            [
                "hey",
                "hi",
                "long time",
                "did you see this?",
                "check this out",
                "you need to see this",
                "Re: hello",
                "is this you?",
            ]
        )
        text = rng.choice(
            [
                f"hey, long time no see! thought you'd like this :)\n\n{link}\n\n{p['first']}",
                f"Hi,\n\nis this you in this video?? {link}\n\nsent from my phone",
                f"{link}\n\n{rng.choice(['lol', 'wow', ':)', 'crazy'])}",
                f"Hi Dana, I found this and thought of you straight away: {link}\nspeak soon",
            ]
        )
    elif kind == "favour":
        boss = colleague(rng)
        p = {
            "name": boss["name"],
            "first": boss["first"],
            "addr": f"{boss['first'].lower()}.{rng.choice(['office', 'ceo', 'work', 'private'])}{rng.randint(1, 99)}@{rng.choice(WEBMAIL_DOMAINS)}",
        }
        subj = rng.choice(["Quick favour", "Are you available?", "urgent", "Request", "Need your help"])
        text = rng.choice(
            [
                f"Hi {OWNER_FIRST},\n\nAre you available? I need you to handle a task for me quickly. I'm in a meeting and can't talk, reply by email.\n\n{p['first']}\n\nSent from my phone",
                f"{OWNER_FIRST}, I need to get gift cards for a few clients today as a surprise. Can you buy them and send me the codes? I'll pay you back this afternoon.\n\nThanks\n{p['first']}",
                f"Hello,\n\nDo you have a moment? I need a small favour, it's urgent and confidential.\n\nRegards,\n{p['name']}",
            ]
        )
    elif kind == "photo":
        subj = rng.choice(["photos", "pics from the party", "Re: photos", "the pictures you asked for"])
        text = f"Hi,\n\nhere are the photos, I put them in a shared folder because they were too big:\n{link}\n\n{rng.choice(['x', 'cheers', p['first']])}"
    elif kind == "catchup":
        subj = rng.choice(["Catching up", "hello from me", "Long time!", "How are you?", "Quick hello"])
        text = (
            f"Hi {OWNER_FIRST},\n\n"
            + fill(rng, rng.choice(PERSONAL_KINDS["news"]["cores"]), {}, PERSONAL)
            + " "
            + rng.choice(
                [
                    "Anyway, the real reason I'm writing: I've lost nearly 10 kg in six weeks with these drops and I "
                    "can't stop telling people about them.",
                    "By the way, I've started working from home with an online programme and it's going really well, "
                    "I made more last month than in my old job.",
                    "I also finally started my own little shop and I'd love it if you had a look, there's a discount "
                    "for friends this week.",
                ]
            )
            + f"\n\n{link}\n\n{rng.choice(['Love', 'Take care', 'Speak soon'])},\n{p['first']}"
        )
    elif kind == "schedule":
        boss = colleague(rng)
        subj = rng.choice(
            ["Re: updated schedule", "Agenda for next week", "Re: meeting notes", "Shared file", "Q3 figures"]
        )
        text = (
            f"Hi,\n\nAs discussed, the {rng.choice(['updated schedule', 'meeting notes', 'budget sheet', 'agenda'])} "
            f"is in the shared folder. You'll need to sign in with your work email to view it.\n\n{link}\n\n"
            f"Thanks,\n{boss['first']}"
        )
        p = {
            "name": boss["name"],
            "first": boss["first"],
            "addr": f"{boss['first'].lower()}.{boss['name'].split()[1].lower()}@{rng.choice(WEBMAIL_DOMAINS)}",
        }
    elif kind == "job":
        subj = rng.choice(["Work from home opportunity", "Part-time position", "Re: your CV", "job offer"])
        text = (
            f"Hello,\n\nWe found your CV online and would like to offer you a part-time remote position as a "
            f"{rng.choice(['payment processing assistant', 'mystery shopper', 'regional agent', 'data entry clerk'])}. "
            f"You can earn ${rng.randint(300, 900)} per week working 2-3 hours a day.\n\nIf interested, reply with your "
            f"full name and phone number.\n\nRegards,\n{p['name']}\nHR Department"
        )
    else:
        subj = rng.choice(
            [
                f"Invoice {rng.randint(1000, 9999)}",
                "Overdue payment",
                "Payment confirmation",
                "Re: invoice",
                "Document for review",
            ]
        )
        text = (
            f"Hello,\n\nPlease find the {rng.choice(['invoice', 'document', 'payment details'])} at the link below. "
            f"Let me know if you have any questions.\n\n{link}\n\nKind regards,\n{p['name']}"
        )
    to, rcpt = spam_to(rng)
    if kind == "favour":
        to, rcpt = [(OWNER_NAME, OWNER_WORK)], OWNER_WORK
    d = {
        "from": (p["name"], p["addr"]),
        "infra": "webmail" if chance(rng, 0.6) else "bot",
        "sender_domain": p["addr"].split("@")[1],
        "return_path": p["addr"],
        "to": to,
        "rcpt": rcpt,
        "subject": subj,
        "text": wrap(text) + "\n",
        "date": random_date(rng),
        "mailer": rng.choice(HAM_MAILERS) if chance(rng, 0.4) else None,
        "charsets": [("utf-8", 3), ("us-ascii", 2), ("iso-8859-1", 1)],
        "ctes": [("7bit", 3), ("quoted-printable", 2), ("base64", 2)],
    }
    if kind == "invoice" and chance(rng, 0.4):
        d["attachments"] = [
            (
                f"Invoice_{rng.randint(1000, 9999)}.pdf",
                "application/pdf",
                make_pdf(rng, ["INVOICE", "Please see link for payment details", link], rng.randint(1000, 6000)),
            )
        ]
    if chance(rng, 0.3):
        d["html"] = text_to_html(d["text"].strip(), "div")
    return d


# --- generators that deliberately blur the ham/spam boundary --------------

SERVICES = [
    ("Postbox Mail", "no-reply@postbox.example", "postbox.example"),
    ("Roxy Picturehouse", "accounts@roxy-picturehouse.example", "roxy-picturehouse.example"),
    ("Tellurian Mobile", "account@tellurian-mobile.example", "tellurian-mobile.example"),
    ("Wrenfield Package Index", "noreply@pkg.wrenfield.example", "pkg.wrenfield.example"),
    ("Harbourline Bank", "security@harbourline.example", "harbourline.example"),
    ("Oakhurst Gym", "members@oakhurst-gym.example", "oakhurst-gym.example"),
    ("Kettle & Crumb", "account@kettleandcrumb.example", "kettleandcrumb.example"),
]


def ham_transactional(rng):
    """Legitimate account mail: confirmations, resets, codes (looks like phishing)."""
    name, addr, domain = rng.choice(SERVICES)
    kind = rng.choice(["confirm", "reset", "code", "renew", "signin"])
    token = alnum(rng, 24)
    if kind == "confirm":
        subj = rng.choice(
            ["Confirm your email address", "Please verify your email", f"Welcome to {name} - one more step"]
        )
        paras = [
            f"Thanks for signing up for {name}. Please confirm your email address by clicking the link below.",
            f"https://{domain}/verify?token={token}",
            "This link expires in 24 hours. If you didn't create an account, you can safely ignore this email.",
        ]
    elif kind == "reset":
        subj = rng.choice(["Reset your password", "Password reset request", f"Your {name} password"])
        paras = [
            "We received a request to reset the password for your account. Use the link below to choose a new one.",
            f"https://{domain}/reset/{token}",
            "If you didn't ask for this, you don't need to do anything: your password won't change.",
        ]
    elif kind == "code":
        code = f"{rng.randint(0, 999999):06d}"
        subj = rng.choice([f"Your verification code is {code}", f"{code} is your {name} code", "Your sign-in code"])
        paras = [
            f"Your verification code is {code}.",
            f"It expires in 10 minutes. Never share this code with anyone, including {name} staff.",
        ]
    elif kind == "renew":
        subj = rng.choice(["Your subscription renews soon", "Membership renewal reminder", "Your plan is renewing"])
        paras = [
            f"Your {name} subscription will renew automatically on {rng.randint(1, 28)} {rng.choice(MONTHS)} "
            f"for {money(rng, 4, 60, '£')}.",
            f"To change or cancel your plan, visit https://{domain}/account/billing",
            "Thanks for being a member!",
        ]
    else:
        subj = rng.choice(["New sign-in to your account", "Security alert: new device", "Was this you?"])
        paras = [
            f"Your {name} account was just used to sign in on a new device near {rng.choice(COMMON['city'])}.",
            "If this was you, you can ignore this message.",
            f"If not, please change your password straight away at https://{domain}/security and review your recent activity.",
        ]
    text = wrap(f"Hi {OWNER_FIRST},\n\n" + "\n\n".join(paras) + f"\n\nThe {name} team") + "\n"
    d = {
        "from": (name, addr),
        "rcpt": OWNER_HOME,
        "to": [("", OWNER_HOME)],
        "subject": subj,
        "date": random_date(rng),
        "infra": rng.choice(["org", "esp"]),
        "sender_domain": rng.choice([domain, domain, "sendwave.example"]),
        "return_path": f"bounce@{domain}",
        "text": text,
        "charsets": [("utf-8", 3), ("us-ascii", 2)],
        "ctes": [("quoted-printable", 3), ("7bit", 2), ("base64", 1)],
    }
    if chance(rng, 0.6):
        d["html"] = text_to_html(text.strip(), "div")
    return d


def ham_forward(rng):
    """A colleague warning about phishing, or a relative asking 'is this real?' -
    legitimate mail that quotes spam."""
    spam_rng = random.Random(rng.getrandbits(64))
    src = rng.choice([spam_phish_account, spam_parcel, spam_advance_fee, spam_personal, spam_crypto])
    sd = src(spam_rng)
    quoted = sd.get("text") or re.sub(r"<[^>]+>", "", sd.get("html", "")).strip()
    quoted = "\n".join(ln for ln in quoted.split("\n") if ln.strip())[:1500]
    fwd_head = (
        f"---------- Forwarded message ---------\nFrom: {sd['from'][0] or sd['from'][1]} <{sd['from'][1]}>\n"
        f"Subject: {sd['subject']}\n\n"
    )
    if chance(rng, 0.55):
        p = colleague(rng)
        if chance(rng, 0.6):
            p = {
                "name": "Pavel Szabo",
                "first": "Pavel",
                "role": "Security Engineer",
                "addr": f"pavel.szabo@{WORK_DOMAIN}",
            }
        intro = rng.choice(
            [
                "Heads-up: several people have received the message below. It's phishing - please don't click the link, "
                "and if you already did, change your password and let the security team know.",
                "FYI, this one got past the filter this morning. Please report anything similar with the report button.",
                "We're seeing a wave of these today. The sender address looks almost right, so check carefully.",
            ]
        )
        body = f"Hi all,\n\n{intro}\n\n{p['first']}\n\n" + fwd_head + quoted
        d = {
            "from": (p["name"], p["addr"]),
            "rcpt": OWNER_WORK,
            "to": [("Engineering", f"engineering@{WORK_DOMAIN}")],
            "subject": "Fwd: " + sd["subject"] if chance(rng, 0.5) else "Phishing warning: " + sd["subject"],
            "infra": "corp",
        }
    else:
        key = rng.choice(["mum", "dad", "aunt"])
        name, addr, signame = FAMILY[key]
        intro = rng.choice(
            [
                "Is this real? I don't remember entering anything.",
                "Got this today, should I reply? It sounds too good to be true.",
                "Can you have a look at this for me, I don't trust it.",
                "Your dad says it's a scam but I wanted to check with you.",
            ]
        )
        body = f"Hi love,\n\n{intro}\n\n{signame}\n\n" + fwd_head + quoted
        d = {
            "from": (name, addr),
            "rcpt": OWNER_HOME,
            "to": [(OWNER_NAME, OWNER_HOME)],
            "subject": "Fwd: " + sd["subject"],
            "infra": "webmail",
        }
    d.update(
        {
            "text": wrap(body) + "\n",
            "date": random_date(rng),
            "mailer": rng.choice(HAM_MAILERS) if chance(rng, 0.5) else None,
            "charsets": [("utf-8", 3), ("iso-8859-1", 1)],
            "ctes": [("quoted-printable", 3), ("7bit", 2), ("base64", 1)],
        }
    )
    return d


PROMO_LINES = [
    "Our biggest sale of the year starts NOW - up to {pct2}% off everything!",
    "FREE delivery on all orders this weekend only.",
    "Hurry, these deals end at midnight on Sunday!",
    "Don't miss out: limited stock on our best sellers.",
    "Members save an extra 10% at checkout - no code needed.",
    "Treat yourself (or someone special) to something new this season.",
    "New customers get {pct2}% off their first order with code WELCOME{n2}.",
    "Click below to shop the sale before it's gone.",
]


def ham_promo(rng):
    """Marketing from shops the owner really buys from: spammy words, legitimate mail."""
    shop = rng.choice(SHOPS)
    bank = dict(NEWS_SLOTS)
    ctx = {}
    subj = fill(
        rng,
        rng.choice(
            [
                "LAST CHANCE: {pct2}% off ends tonight!",
                "Free shipping this weekend only",
                "{first}, your exclusive offer is inside",
                "SALE: up to {pct2}% off!!",
                "Don't miss out - prices slashed",
                "A little gift for you: {pct2}% off",
            ]
        ),
        ctx,
        bank,
    )
    paras = [fill(rng, p, ctx, bank) for p in rng.sample(PROMO_LINES, k=rng.randint(3, 5))]
    items = rng.sample(shop["items"], k=3)
    paras.append("Featured: " + ", ".join(items) + ".")
    unsub = f"https://{shop['domain']}/unsubscribe?e={hexid(rng, 14)}"
    links = [f"https://{shop['domain']}/sale?utm_source=email&utm_campaign={alnum(rng, 6).lower()}"]
    htmlb = spam_html(rng, paras, links, title=subj, hidden=False)
    htmlb = htmlb.replace(
        "To stop receiving these messages",
        f"You are receiving this because you shop at {html.escape(shop['name'])}. To stop receiving these messages",
    )
    text = wrap("\n\n".join(paras) + f"\n\nShop now: {links[0]}\n\n--\n{shop['name']}\nUnsubscribe: {unsub}") + "\n"
    return {
        "from": (shop["name"], shop["addr"].replace("orders@", "news@").replace("noreply@", "deals@")),
        "rcpt": OWNER_HOME,
        "to": [("", OWNER_HOME)],
        "subject": subj,
        "date": random_date(rng),
        "infra": "esp",
        "sender_domain": rng.choice(ESP_DOMAINS),
        "return_path": f"bounces+{hexid(rng, 12)}@{rng.choice(ESP_DOMAINS)}",
        "text": text if chance(rng, 0.6) else None,
        "html": htmlb,
        "extra_headers": [("List-Unsubscribe", f"<{unsub}>")],
        "mailer": ("X-Mailer", rng.choice(["Sendwave Campaigns 4.2", "MassMailer Pro 11"]))
        if chance(rng, 0.5)
        else None,
        "charsets": [("utf-8", 3), ("iso-8859-1", 2)],
        "ctes": [("quoted-printable", 4), ("base64", 2), ("7bit", 1)],
    }


def spam_deals(rng):
    """Spam dressed up as a newsletter."""
    ctx = {}
    name = rng.choice(
        ["Daily Deals Digest", "Smart Shopper Weekly", "Bargain Alert", "Top Offers Today", "Members Rewards"]
    )
    subj = fill(
        rng,
        rng.choice(
            [
                "Today's top deals: up to {big_pct}% off",
                "Your weekly offers are here",
                "{n2} deals picked for you",
                "Exclusive member rewards - claim now",
                "You've been selected for a $500 gift card",
            ]
        ),
        ctx,
        SPAM,
    )
    d = spam_base(rng, [name], ["deals", "offers", "reward", "shopper", "bargain", "save"], subj)
    items = [
        fill(rng, p, ctx, SPAM)
        for p in rng.sample(
            [
                "Wireless earbuds - was $129, now $19.99!",
                "Designer sunglasses up to {big_pct}% off.",
                "Claim your free $500 gift card - only 3 left!",
                "Miracle anti-ageing cream: results in 7 days.",
                "Smart watch clearance, prices from $9.",
                "Complete our 30-second survey and win a new phone.",
                "Garden furniture sets from $49 with free delivery.",
                "Weight loss secret the experts don't want you to know.",
            ],
            k=rng.randint(3, 5),
        )
    ]
    dom = spam_domain(rng, ["deals", "offers", "save", "shop"])
    links = [spam_url(rng, dom) for _ in items]
    unsub = spam_url(rng, dom)
    d["html"] = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>'
        + html.escape(subj)
        + '</title></head>\n<body style="margin:0;background:#f4f4f4">\n'
        '<table width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">\n'
        '<table width="600" style="background:#ffffff;font-family:Georgia,serif">\n'
        f'<tr><td style="padding:20px;font-size:24px">{html.escape(name)}</td></tr>\n'
        + "\n".join(
            f'<tr><td style="padding:10px 20px">{html.escape(it)} <a href="{ln}">Read more</a></td></tr>'
            for it, ln in zip(items, links)
        )
        + f'\n<tr><td style="padding:20px;font-size:11px;color:#888">You\'re receiving this because you '
        f'subscribed to our partner offers. <a href="{unsub}">Unsubscribe</a></td></tr>\n'
        "</table>\n</td></tr></table>\n</body></html>\n"
    )
    if chance(rng, 0.5):
        d["text"] = "\n\n".join(f"* {it}\n  {ln}" for it, ln in zip(items, links)) + f"\n\nUnsubscribe: {unsub}\n"
    d["extra_headers"] = [("List-Unsubscribe", f"<{unsub}>")]
    d["date"] = random_date(rng)
    d["mailer"] = (
        ("X-Mailer", rng.choice(["Sendwave Campaigns 4.2", "MassMailer Pro 11", "QuickBlast 5.2"]))
        if chance(rng, 0.5)
        else None
    )
    d["charsets"] = [("utf-8", 3), ("iso-8859-1", 1)]
    d["ctes"] = [("quoted-printable", 4), ("base64", 2), ("7bit", 1)]
    return d


def spam_phish_clone(rng):
    """Phishing that copies the wording of a real notice, with a bad link."""
    org = rng.choice([o for o in ORGS if o["name"] != "Millford Dental Practice"])
    ctx = {}
    subj = fill(rng, rng.choice(org["subjects"]), ctx, ORG_SLOTS)
    paras = [fill(rng, c, ctx, ORG_SLOTS) for c in rng.sample(org["cores"], k=rng.randint(1, 2))]
    look = org["domain"].replace(
        ".example", rng.choice(["-secure.test", "-account.invalid", "-online.example.net", "-support.test"])
    )
    link = rng.choice(
        [
            f"http://{look}/{rng.choice(['login', 'view', 'secure', 'account'])}?id={hexid(rng, 12)}",
            f"http://{ip_doc(rng)}/{org['domain'].split('.')[0]}/",
        ]
    )
    paras.append(
        rng.choice(
            [
                f"To view the details, please sign in here: {link}",
                f"Please confirm your details within 48 hours: {link}",
                f"View it securely online: {link}",
            ]
        )
    )
    text = (
        wrap(
            f"Dear {rng.choice(['Customer', OWNER_NAME, 'Member'])},\n\n" + "\n\n".join(paras) + "\n\n" + org["footer"]
        )
        + "\n"
    )
    d = spam_base(rng, [org["name"]], ["secure", "account"], subj, brand_domain=look)
    d["subject"] = subj
    d["text"] = text
    if chance(rng, 0.6):
        d["html"] = text_to_html(text.strip(), "div")
    d["date"] = random_date(rng)
    d["mailer"] = None
    d["charsets"] = [("utf-8", 3), ("us-ascii", 2), ("iso-8859-1", 1)]
    d["ctes"] = [("quoted-printable", 3), ("7bit", 3), ("base64", 1)]
    return d


# ---------------------------------------------------------------------------
# Mail corpus assembly
# ---------------------------------------------------------------------------

HAM_MIX = [
    (ham_work, 112),
    (ham_personal, 62),
    (ham_foreign, 18),
    (ham_list, 68),
    (ham_order, 36),
    (ham_newsletter, 32),
    (ham_promo, 20),
    (ham_org, 28),
    (ham_transactional, 20),
    (ham_forward, 12),
    (ham_misc, 12),
]
SPAM_MIX = [
    (spam_pharmacy, 24),
    (spam_loan, 22),
    (spam_advance_fee, 28),
    (spam_phish_account, 22),
    (spam_phish_clone, 14),
    (spam_parcel, 20),
    (spam_stock, 16),
    (spam_dating, 20),
    (spam_replica, 20),
    (spam_crypto, 22),
    (spam_seo, 26),
    (spam_personal, 32),
    (spam_deals, 14),
]


def build_mail(mix, label, total):
    assert sum(n for _, n in mix) == total, (label, sum(n for _, n in mix))
    out = []
    for func, n in mix:
        for i in range(n):
            rng = random.Random(f"{SEED}:{label}:{func.__name__}:{i}")
            draft = func(rng)
            if "date" not in draft:
                draft["date"] = random_date(rng)
            out.append(render(draft, rng))
    return out


def split(items, seed_label):
    items = list(items)
    random.Random(f"{SEED}:split:{seed_label}").shuffle(items)
    cut = round(len(items) * TRAIN_FRACTION)
    return items[:cut], items[cut:]


def write_mail(root: Path):
    for label, mix, total in (("ham", HAM_MIX, N_HAM), ("spam", SPAM_MIX, N_SPAM)):
        msgs = build_mail(mix, label, total)
        train, test = split(msgs, label)
        for part, group in (("train", train), ("test", test)):
            folder = root / part / label
            folder.mkdir(parents=True, exist_ok=True)
            for i, data in enumerate(group, 1):
                (folder / f"{i:04d}.eml").write_bytes(data)


# ---------------------------------------------------------------------------
# Topics corpus: short documents in four classes
# ---------------------------------------------------------------------------

TOPIC_COMMON = {
    "n": lambda r: str(r.randint(2, 9)),
    "n2": lambda r: str(r.randint(10, 30)),
    "day": ["Monday", "Tuesday", "Friday", "Saturday", "Sunday", "the weekend"],
    "hour": ["9pm", "10pm", "11pm", "midnight", "2am", "just after sunset"],
    "city": ["Zürich", "Málaga", "Lyon", "São Paulo", "Kraków", "Leeds", "Porto", "Montréal"],
}

TOPICS = {
    "astronomy": {
        "slots": {
            "object": [
                "Saturn",
                "Jupiter",
                "the Orion Nebula",
                "the Andromeda galaxy",
                "the Pleiades",
                "Mars",
                "Venus",
                "the Moon",
                "the Ring Nebula",
                "the Double Cluster",
                "Betelgeuse",
                "Sirius",
                "the Whirlpool galaxy",
                "Uranus",
            ],
            "scope": [
                "8-inch Dobsonian",
                "small refractor",
                "old reflector",
                "10x50 binoculars",
                "new 130mm telescope",
                "Maksutov",
                "star tracker",
            ],
            "place": [
                "my back garden",
                "the dark-sky park",
                "the hills outside town",
                "the observatory open night",
                "a campsite in the mountains",
                "our balcony",
                "the beach",
            ],
            "event": [
                "meteor shower",
                "lunar eclipse",
                "transit of Mercury",
                "conjunction of Venus and Jupiter",
                "solar eclipse",
                "aurora display",
            ],
        },
        "sentences": [
            "Last night I finally saw {object} through my {scope}.",
            "Seeing was terrible, but {object} still looked amazing from {place}.",
            "Does anyone know a good filter for observing {object} under light-polluted skies?",
            "The {event} was clouded out here, which was really disappointing.",
            "I stacked {n}00 frames of {object} and the detail in the final image surprised me.",
            "Is it worth upgrading from a {scope} to something with more aperture?",
            "New data from the space telescope suggests the exoplanet has water vapour in its atmosphere.",
            "Astronomers reported a supernova in a galaxy about {n2} million light years away.",
            "My star chart says {object} rises around {hour} tonight.",
            "The collimation on my {scope} was way off, no wonder the stars looked like little comets.",
            "Light from the new stadium floodlights has ruined my observing site.",
            "The surface temperature of a red dwarf is only around three thousand kelvin.",
            "I watched the rocket launch live and later spotted the upper stage passing overhead.",
            "The planetarium show about black holes was better than I expected.",
            "A dark site makes more difference than any eyepiece you can buy.",
            "Orbital mechanics are strange: to catch up with the space station you first slow down.",
            "The galaxy cluster bends light from the objects behind it through gravitational lensing.",
            "Mercury is tricky to spot because it never strays far from the Sun.",
            "How long should I let my telescope cool down before the image settles?",
            "Our astronomy society is hosting a public stargazing evening on {day}.",
            "The spectrometer picked up the hydrogen alpha line really clearly.",
            "The Moon was too bright for faint galaxies, so I sketched craters instead.",
            "Has anyone tried imaging the Sun with a proper solar filter?",
            "The nebula looked like a faint grey smudge, nothing like the long-exposure photos.",
            "Jupiter's moons lined up tonight, with Io just leaving the edge of the planet.",
            "Neutron stars are so dense that a teaspoon of their matter would weigh millions of tonnes.",
            "I'm writing a small script to log my observing sessions and the sky conditions.",
            "Data from the probe's flyby will take months to arrive from deep space.",
            "Polar alignment took me forty minutes but the long exposures were worth it.",
            "Hotels along the eclipse path near {city} are already booked out.",
            "The space station pass tonight was the brightest I've seen, like a plane without blinking lights.",
            "The cosmic microwave background has been mapped with incredible precision.",
            "Dew kept forming on the lens, so I need a heater strap before next winter.",
            "Counted {n2} meteors in an hour from {place}, including one bright fireball.",
            "The comet's tail was visible with the naked eye just after dusk.",
            "The telescope mount's tracking drifted, so every star came out as a short streak.",
        ],
    },
    "cooking": {
        "slots": {
            "dish": [
                "risotto",
                "sourdough loaf",
                "chicken curry",
                "lasagne",
                "banana bread",
                "ramen",
                "paella",
                "shakshuka",
                "beef stew",
                "lemon tart",
                "focaccia",
                "crème brûlée",
                "jalapeño cornbread",
                "dal",
                "tiramisu",
                "pad thai",
            ],
            "ingredient": [
                "garlic",
                "smoked paprika",
                "brown butter",
                "fresh basil",
                "miso",
                "anchovies",
                "lemon zest",
                "jalapeños",
                "cardamom",
                "tahini",
                "parmesan",
                "coriander",
            ],
            "technique": [
                "braising",
                "searing",
                "proofing dough",
                "tempering chocolate",
                "deglazing the pan",
                "blind baking",
                "making an emulsion",
                "fermenting vegetables",
            ],
            "herb": ["basil", "coriander", "thyme", "rosemary", "parsley", "dill"],
            "temp": ["160", "180", "190", "200", "220"],
            "mins": ["20", "25", "35", "45", "50"],
        },
        "sentences": [
            "I made {dish} tonight and added {ingredient}; it was a big improvement.",
            "My {dish} always comes out dry, is the oven temperature too high?",
            "Any tips for {technique}? Mine keeps going wrong.",
            "Preheat the oven to {temp} degrees and bake for about {mins} minutes.",
            "The secret to a good {dish} is patience and plenty of {ingredient}.",
            "I swapped butter for olive oil in the {dish} recipe and nobody noticed.",
            "The {dish} was the star of the dinner party.",
            "Is it safe to freeze {dish} once it has been cooked?",
            "The café down the road does a brilliant {dish} and I'm trying to copy it at home.",
            "My cast iron pan finally has a proper seasoning after months of use.",
            "Salt the pasta water generously, it should taste like the sea.",
            "How long should I rest the dough before shaping it?",
            "We had the tasting menu at a small restaurant in {city} and the dessert was unforgettable.",
            "Roasting the vegetables first gives the soup a much deeper flavour.",
            "The sauce split because I added the cream while it was boiling.",
            "Good knife skills make everything faster; practise on onions.",
            "I meal-prep on Sundays: a big pot of {dish}, some rice and a tray of roasted vegetables.",
            "Does anyone have a good vegetarian alternative for {dish}?",
            "Use a thermometer: the internal temperature of the chicken should reach 75 degrees.",
            "My sourdough starter is bubbling nicely after three days of feeding.",
            "Toast the whole spices in a dry pan before grinding them.",
            "A pinch of sugar balances the acidity of the tomatoes.",
            "The grill at the club barbecue was a disaster and everything burnt.",
            "I wrote a tiny script to scale my recipes for different numbers of guests.",
            "The kitchen smelled amazing when the bread came out of the oven.",
            "Blanch the beans for two minutes and then plunge them into iced water.",
            "Our family recipe for {dish} uses a splash of vinegar right at the end.",
            "The jalapeño salsa was far too hot for the kids.",
            "What is the actual difference between baking soda and baking powder?",
            "Let the steak rest for five minutes before you slice it.",
            "I burnt the garlic again, so the whole pan of {dish} tasted bitter.",
            "Whisk the eggs and sugar until pale and fluffy, then fold in the flour.",
            "Fresh {herb} makes a huge difference compared to the dried stuff.",
            "The pressure cooker turned a tough cut of beef into something tender in an hour.",
            "We grow our own herbs on the windowsill now and use them in almost every meal.",
            "Chill the pastry before rolling or it tears and shrinks in the tin.",
        ],
    },
    "football": {
        "slots": {
            "team": [
                "Northbridge United",
                "Kessler Athletic",
                "Riverside Rovers",
                "FC Portomar",
                "Ashdown City",
                "Real Valdoro",
                "Sporting Lisle",
                "Grimsworth Town",
            ],
            "player": [
                "our striker",
                "the young winger",
                "their keeper",
                "the captain",
                "the new centre-back",
                "the left-back",
                "our number ten",
                "the substitute",
            ],
            "comp": ["the league", "the cup", "the European cup", "the derby", "the play-offs", "the qualifiers"],
            "score": ["2-1", "3-2", "1-0", "4-1", "2-0", "3-3"],
        },
        "sentences": [
            "{team} won {score} with a late header from {player}.",
            "What a match, {team} came back from two goals down.",
            "The referee missed an obvious penalty in the first half.",
            "VAR took five minutes to rule on an offside that everyone could see.",
            "{player} has scored {n} goals in his last {n2} games.",
            "Their manager switched to a back three at half-time and it changed everything.",
            "The pitch looked terrible after all the rain.",
            "We need a proper defensive midfielder before the transfer window closes.",
            "Season tickets went up again and I'm not sure I'll renew.",
            "The keeper made an incredible save from the free kick.",
            "Who do you think will win {comp} this season?",
            "The atmosphere in the stadium was electric for the derby.",
            "Our under-12 side finally won a game and the kids were thrilled.",
            "The star of the show was {player}, who ran the midfield all afternoon.",
            "Their pressing was relentless and we couldn't keep the ball.",
            "Set pieces are our weakness; we concede from corners every week.",
            "Is the new formation working or are we just lucky?",
            "The transfer fee seems huge for a player with one good season.",
            "The match was abandoned because of thick fog.",
            "I play five-a-side every Tuesday and my knees are not happy about it.",
            "A red card in the tenth minute ruined the game as a contest.",
            "{team} are top of the table after a {n2}-match unbeaten run.",
            "Extra time, then penalties, then a save from {player} - unbelievable.",
            "The club released a new kit and fans are already complaining about the colour.",
            "Training was cancelled because the floodlights failed.",
            "He curled it into the top corner from twenty-five yards.",
            "The away fans sang for the full ninety minutes.",
            "Our defence has kept {n} clean sheets in a row.",
            "I built a spreadsheet to track everyone's predictions for the league table.",
            "Watched the game in a café in {city} surrounded by local supporters.",
            "The women's team sold out the stadium for the first time.",
            "{team} drew {score} in {comp} and the fans booed at full time.",
            "The youth academy keeps producing brilliant full-backs.",
            "Our goalkeeper came up for the last corner and nearly scored.",
            "The new signing looked lost in his first game, but give him time.",
            "We dominated possession and still lost to a counter-attack.",
        ],
    },
    "programming": {
        "slots": {
            "lang": ["Python", "Rust", "Go", "JavaScript", "TypeScript", "Java", "C++", "Kotlin"],
            "lang2": ["Python", "Rust", "Go", "Haskell", "C#", "Elixir"],
            "tool": [
                "git bisect",
                "the debugger",
                "the profiler",
                "pytest",
                "the linter",
                "Docker",
                "a memory sanitiser",
            ],
            "concept": [
                "recursion",
                "async code",
                "dependency injection",
                "memory leaks",
                "race conditions",
                "type hints",
                "closures",
                "unit testing",
            ],
        },
        "sentences": [
            "My {lang} function returns None and I can't figure out why.",
            "Has anyone migrated a large codebase from {lang} to {lang2}?",
            "The build fails on CI but passes locally, as usual.",
            "I finally understand {concept} after reading the source of a small library.",
            "Is it bad practice to catch every exception at the top level?",
            "We moved our services to containers and deployment got much simpler.",
            "The code review took longer than writing the feature.",
            "{tool} saved me hours tracking down a bug in the parser.",
            "How do you structure tests for code that talks to a database?",
            "Our API returns a 500 error when the request body is empty.",
            "Refactoring the legacy module removed two thousand lines of dead code.",
            "Pair programming with a junior developer taught me a lot about explaining things.",
            "The compiler error was forty lines long and the fix was one missing character.",
            "Should I learn {lang} or {lang2} as my second language?",
            "Merge conflicts in the lock file again.",
            "My recursive function to walk the JSON tree hit the recursion limit.",
            "The startup pitched its product to investors with a live demo that crashed.",
            "Our team lead gave a great pitch for adopting {lang}.",
            "The recipe for a good pull request: small, focused and with tests.",
            "The new release doubled the performance of the query engine.",
            "Off-by-one errors are still my most common bug after ten years.",
            "I starred the repository so I can find the example again later.",
            "Memory usage keeps climbing, I suspect a leak in the cache.",
            "Type hints caught three bugs before the code even ran.",
            "We use feature flags so we can ship unfinished work safely.",
            "The regex worked on my machine but not in production because of line endings.",
            "Our sprint retro turned into a debate about tabs versus spaces.",
            "I'm building a small app to keep track of my telescope observations.",
            "The hackathon in {city} was fun but I barely slept.",
            "Logging every request filled the disk in two days.",
            "Binary search is simple until you have to handle duplicates.",
            "A function signature changed in the new version and broke our build.",
            "Stack traces involving {concept} are hard to read.",
            "The temperature sensor on the Raspberry Pi returns garbage until I add a delay.",
            "Writing the documentation first made the API design much cleaner.",
            "Our deploy script deleted the wrong folder, so now we have backups and a checklist.",
        ],
    },
}

GENERIC_SENTENCES = [
    "Thanks in advance for any advice.",
    "Honestly, I didn't expect that.",
    "Any recommendations welcome.",
    "I'll post an update next week.",
    "It was a long day but totally worth it.",
    "My partner thinks I'm obsessed.",
    "Not sure if this is the right place to ask.",
    "Edit: fixed a typo.",
    "Has anyone else had the same experience?",
    "Still can't believe it.",
    "I'm new here, so please be gentle.",
    "Long time reader, first post.",
    "Cheers, everyone.",
    "The weather didn't help either.",
    "This happened to me last year too.",
    "Took me ages to figure it out.",
    "Worth every minute.",
    "I'll try again on {day}.",
    "My friends think this is boring but I love it.",
    "Does anyone know a good shop for this?",
    "Results were mixed, to be honest.",
    "Feeling pretty proud of myself right now.",
    "What would you do in my place?",
    "Sorry for the long post.",
    "Photos in the comments.",
    "It's the little things.",
    "Not bad for a beginner, I think.",
    "Next time I'll plan better.",
]

# Sentences that fit several topics and blur the boundaries on purpose.
AMBIGUOUS_SENTENCES = [
    "What a night, everyone was a star.",
    "Timing is everything.",
    "The temperature dropped fast after sunset.",
    "It was a real team effort.",
    "The launch went better than expected.",
    "I needed a lot more space.",
    "The first half was better than the second.",
    "Took a few shots before I got it right.",
    "Broke my personal record tonight.",
    "The whole thing crashed at the worst possible moment.",
    "I followed the instructions to the letter and it still failed.",
    "Everyone had a different theory.",
    "The new season starts next month.",
    "Patience is the main skill here.",
    "Half the group gave up early.",
    "The table was full by eight.",
    "We should have started earlier.",
    "Got there in the end.",
    "I ran out of time, as always.",
    "The old one worked better, honestly.",
    "It's all about the preparation.",
    "The score at the end surprised everyone.",
    "Clear skies and a cold wind.",
    "Prep took longer than the main event.",
]


# Low-signal sentences: a human can guess the topic, a word counter struggles.
WEAK_SENTENCES = {
    "astronomy": [
        "Clear skies at last, so I stayed out until two in the morning.",
        "Cloudy again, third week in a row.",
        "The view from the hill was worth the cold fingers.",
        "My kids loved the open night.",
        "Set everything up and then the fog rolled in.",
        "Saw something moving slowly overhead, no idea what it was.",
        "The new lens arrived and I can't wait to try it out.",
        "I spent the evening waiting for a gap in the clouds.",
        "It looked tiny but I could see the rings.",
        "Nothing beats a quiet night in the countryside.",
        "The club meets on the first Friday of the month.",
        "Bright, steady and a bit orange tonight.",
    ],
    "cooking": [
        "Dinner was a disaster but we laughed about it.",
        "Tried something new tonight and the family approved.",
        "Leftovers for lunch all week now.",
        "My grandmother never wrote anything down.",
        "Too much salt, lesson learned.",
        "Second attempt was much better than the first.",
        "The whole house smelled wonderful.",
        "Friends are coming over on Saturday and I'm already nervous.",
        "I keep buying gadgets I never use.",
        "Served it with a simple green salad.",
        "It took all afternoon but it was worth it.",
        "Everyone went back for seconds.",
    ],
    "football": [
        "We lost again on Saturday.",
        "What a finish in the last minute.",
        "Three points is three points.",
        "My son's team has training twice a week now.",
        "The second half was painful to watch.",
        "Can't wait for the weekend.",
        "Our neighbours support the other lot, so the house was tense.",
        "Forty thousand people and not one empty seat.",
        "He's been injured for most of the year.",
        "They just never gave up.",
        "Rain, wind and a very long journey home.",
        "Still buzzing from last night.",
    ],
    "programming": [
        "Spent the whole afternoon fixing one bug.",
        "It works now and I have no idea why.",
        "The documentation is out of date again.",
        "I rewrote it from scratch and it's half the size.",
        "My laptop fan sounds like a jet engine.",
        "Turns out the problem was a single character.",
        "The old version was faster, annoyingly.",
        "Deadline is Friday and nothing is finished.",
        "I keep a notebook of mistakes so I don't repeat them.",
        "Everything broke after the update.",
        "Our new hire found the issue in ten minutes.",
        "Tried three different libraries before one worked.",
    ],
}


LOWERCASE_OK = [
    "The",
    "My",
    "A",
    "We",
    "It",
    "Their",
    "He",
    "Is",
    "Has",
    "Does",
    "How",
    "What",
    "Any",
    "Who",
    "Should",
    "Seeing",
    "Our",
    "Set",
    "Everyone",
    "Nothing",
    "Too",
    "Tried",
    "Spent",
]


def make_doc(rng, topic):
    spec = TOPICS[topic]
    bank = dict(TOPIC_COMMON)
    bank.update(spec["slots"])
    ctx = {}
    n_topic = wchoice(rng, [(1, 5), (2, 4), (3, 2)])
    sents = [fill(rng, s, ctx, bank) for s in rng.sample(spec["sentences"], k=n_topic)]
    for i in range(len(sents)):
        if chance(rng, WEAK_RATE):
            w = rng.choice(WEAK_SENTENCES[topic])
            if w not in sents:
                sents[i] = w
    # occasionally borrow a whole sentence from another topic (people mix subjects)
    if chance(rng, 0.10):
        other = rng.choice([t for t in sorted(TOPICS) if t != topic])
        ob = dict(TOPIC_COMMON)
        ob.update(TOPICS[other]["slots"])
        sents.insert(rng.randint(0, len(sents)), fill(rng, rng.choice(TOPICS[other]["sentences"]), {}, ob))
    extras = wchoice(rng, [(0, 4), (1, 4), (2, 2)])
    for _ in range(extras):
        pool = AMBIGUOUS_SENTENCES if chance(rng, 0.5) else GENERIC_SENTENCES
        s = fill(rng, rng.choice(pool), ctx, bank)
        if s not in sents:
            sents.insert(rng.randint(0, len(sents)), s)
    sents = sents[:4]
    first_word = sents[0].split(" ", 1)[0]
    if chance(rng, 0.15) and first_word in LOWERCASE_OK:
        prefix = (
            "Quick question: " if sents[0].endswith("?") else rng.choice(["So, ", "Update: ", "Okay, ", "Honestly, "])
        )
        sents[0] = prefix + sents[0][0].lower() + sents[0][1:]
    return " ".join(sents)


def write_topics(root: Path):
    root.mkdir(parents=True, exist_ok=True)
    train, test = [], []
    seen = set()
    for topic in sorted(TOPICS):
        rng = random.Random(f"{SEED}:topics:{topic}")
        docs = []
        while len(docs) < TOPIC_DOCS:
            text = make_doc(rng, topic)
            if text in seen:
                continue
            seen.add(text)
            docs.append({"text": text, "label": topic})
        tr, te = split(docs, f"topics:{topic}")
        train += tr
        test += te
    random.Random(f"{SEED}:topics:shuffle:train").shuffle(train)
    random.Random(f"{SEED}:topics:shuffle:test").shuffle(test)
    n = 0
    for name, docs in (("train.jsonl", train), ("test.jsonl", test)):
        lines = []
        for doc in docs:
            n += 1
            lines.append(
                json.dumps({"id": f"t{n:04d}", "text": doc["text"], "label": doc["label"]}, ensure_ascii=False)
            )
        (root / name).write_bytes(("\n".join(lines) + "\n").encode("utf-8"))


# ---------------------------------------------------------------------------


def write_inbox(mail_dir: Path) -> None:
    """mail/inbox.mbox: the first three held-out ham and spam messages as one
    mbox (From_ lines, ">From " escaping), for trying `nbcli filter`."""
    entries = []
    for label in ("ham", "spam"):
        for path in sorted((mail_dir / "test" / label).glob("*.eml"))[:3]:
            raw = path.read_bytes().replace(b"\nFrom ", b"\n>From ")
            entries.append(b"From MAILER-DAEMON Mon Mar  2 10:00:00 2026\n" + raw.rstrip(b"\n") + b"\n\n")
    (mail_dir / "inbox.mbox").write_bytes(b"".join(entries))


def main() -> int:
    mail_dir = OUT_DIR / "mail"
    topics_dir = OUT_DIR / "topics"
    for d in (mail_dir, topics_dir):
        if d.exists():
            shutil.rmtree(d)
    write_mail(mail_dir)
    write_inbox(mail_dir)
    write_topics(topics_dir)
    n_mail = sum(1 for _ in mail_dir.rglob("*.eml"))
    print(f"wrote {n_mail} messages to {mail_dir} and topics corpus to {topics_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
