"""The text of a body part (nbcli/text/body_text.py): HTML read as a reader
sees it, uuencoded files dropped, URLs turned into tokens; the linear rules
checked against plain (quadratic) regular expressions."""

import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nbcli.text.body_text import html_to_text, strip_encoded, url_tokens, urls_in_lowercase


def test_unterminated_head_keeps_its_text_and_a_closed_one_hides_it():
    assert "title" in html_to_text("<head><title>title</title><p>body")[0]
    assert "title" not in html_to_text("<head><title>title</title></head><p>body")[0]


# -- differential: the linear rules against plain regular expressions ------------------

_INLINE = r"/?(?:b|i|u|em|strong|font|span|small|big|sup|sub|a)\b[^>]*>"
# The rules as (quadratic) regular expressions: a script, style or head
# element ends at its first end tag; a script or style without one runs to
# the end; a head or comment without one is a tag ("<" up to ">"), and a
# "<" without ">" after it is text.
_REF_HIDDEN = re.compile(r"(?s)<(script|style|head)\b.*?</\1\s*>|<(?:script|style)\b.*")
_REF_NO_GAP = re.compile(r"(?s)<(?:!--.*?-->|" + _INLINE + ")")
_REF_TAG = re.compile(r"(?s)<[^>]*>")
_REF_UU = re.compile(r"(?m)^begin [0-7]{3,4} ([^\n]*)\n(?:[^\n]*\n)*?end[ \t]*$")

HTML_PIECES = [
    "<!--",
    "-->",
    "--",
    "<script>",
    "</script>",
    "</script >",
    "<style",
    "</style>",
    "<head>",
    "</head>",
    "<b>",
    "</b",
    "<span class=x>",
    "<",
    ">",
    "a",
    "b ",
    " ",
    "\n",
    "&amp;",
    "<p>",
    "!",
]
UU_PIECES = ["begin 644 a.txt\n", "begin 64 x\n", "end\n", "end", "end \n", "xyz\n", "\n", "begin ", "word "]


def pieces(alphabet, max_size=40):
    return st.lists(st.sampled_from(alphabet), max_size=max_size).map("".join)


def test_an_unterminated_script_inside_a_comment_hides_nothing_after_the_comment():
    assert "visible" in html_to_text("<p>a<!-- <script src=x.js> --> visible</p>")[0]
    assert "hidden" not in html_to_text("<p>a<!-- x --> <script src=x.js> hidden</p>")[0]


def _unterminated_raw_element_in_a_comment(markup: str) -> bool:
    for m in re.finditer(r"<(script|style)\b", markup):
        if not re.search(rf"</{m.group(1)}\s*>", markup[m.end() :]):
            spans = [(c.start(), c.end()) for c in re.finditer(r"(?s)<!--.*?(?:-->|\Z)", markup)]
            if any(a < m.start() < b for a, b in spans):
                return True
    return False


@settings(max_examples=300, deadline=None)
@given(pieces(HTML_PIECES))
def test_html_rules_match_the_reference(markup):
    assume(not _unterminated_raw_element_in_a_comment(markup))  # tested above
    text = _REF_HIDDEN.sub(" ", markup)
    text = _REF_NO_GAP.sub("", text)
    text = _REF_TAG.sub(" ", text).replace("&nbsp;", " ").replace("&amp;", "&")
    assert html_to_text(markup)[0] == text


@settings(max_examples=300, deadline=None)
@given(pieces(UU_PIECES))
def test_uuencode_rule_matches_the_reference(text):
    ref_literals: list[str] = []

    def drop(match):
        name = match.group(1).strip()
        ref_literals.append(f"attachment:{(name.rpartition('.')[2].lower() if '.' in name else 'none')[:10]}")
        return " "

    expected = _REF_UU.sub(drop, text)
    literals: list[str] = []
    assert strip_encoded(text, literals) == expected
    assert literals == ref_literals


def test_links_and_written_urls_become_host_and_parent_domain_tokens():
    text, links = html_to_text('<p>Visit <a href="HTTP://Deals.Example.co.uk/x">here</a> &amp; win</p>')
    assert "visit" in text and "win" in text and "&" in text and "deals" not in text
    assert links == ["http://deals.example.co.uk/x"]
    assert urls_in_lowercase("see www.shop.example.org/a or ftp://files.example.net/b") == [
        "www.shop.example.org/a",
        "ftp://files.example.net/b",
    ]
    tokens: list[str] = []
    url_tokens(links[0], tokens)
    assert tokens == ["url-scheme:http", "url:deals.example.co.uk", "url:example.co.uk", "url:co.uk"]
    ip_tokens: list[str] = []
    url_tokens("http://192.168.1.20/login", ip_tokens)
    assert ip_tokens == ["url-scheme:http", "url-ip:192.168.1.20", "url-ip:192.168.1"]


def test_a_uuencoded_file_leaves_only_its_extension():
    literals: list[str] = []
    text = strip_encoded("hello\nbegin 644 invoice.exe\nM9V%R8F%G90``\nend\nbye", literals)
    assert "hello" in text and "bye" in text and "m9v" not in text.lower()
    assert literals == ["attachment:exe"]
