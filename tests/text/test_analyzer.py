"""The analyzer: tokens exactly as the documented rules say."""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

from nbcli.errors import NbcliError
from nbcli.text import hashing
from nbcli.text.analyzer import ENGLISH_STOP_WORDS, Analyzer, AnalyzerOptions, load_stop_words

DEFAULT = r"(?u)\b\w\w+\b"
texts = st.text(
    alphabet=st.one_of(
        st.sampled_from("ab Z_9 .,-\n\t'é"),
        st.characters(codec="utf-8"),
    ),
    max_size=80,
)


@settings(max_examples=300)
@given(st.lists(texts, min_size=1, max_size=6))
@example(["İstanbul STRASSE Straße ΣΊΣΥΦΟΣ", "x y", "", "a_b __ 12 ½¾ ٣٤"])
def test_default_tokens_are_exactly_the_regex_tokens(docs):
    batch = Analyzer().analyze(docs)
    for i, doc in enumerate(docs):
        expected = re.findall(DEFAULT, doc.lower())
        assert batch.doc_tokens(i) == expected
        assert batch.hashes[batch.doc_ptr[i] : batch.doc_ptr[i + 1]].tolist() == hashing.hash_strings(expected).tolist()


def test_every_code_point_is_a_word_character_exactly_where_the_regex_says_so():
    """The table of which code points are word characters is filled as
    texts bring them (`analyzer._word_mask`): asked in pieces and out of
    order, then for every code point at once, it answers as re's \\w."""
    from nbcli.text import analyzer

    every = np.arange(0x110000, dtype=np.uint32)
    rng = np.random.default_rng(5)
    for part in (rng.choice(every, 5000), every[0x3000:0x3100], every[::7]):
        assert analyzer._word_mask(part).tolist() == [int(bool(re.match(r"\w", chr(c)))) for c in part.tolist()]
    mask = analyzer._word_mask(every)
    assert mask.dtype == np.int8
    assert np.flatnonzero(mask).tolist() == [c for c in range(0x110000) if re.match(r"\w", chr(c))]


@settings(max_examples=100)
@given(st.lists(texts, min_size=1, max_size=4), st.sampled_from([r"\S+", r"[a-z]+", r"(\w+)@", r"\w", r"\w*"]))
def test_custom_pattern_tokens_are_exactly_re_findall(docs, pattern):
    batch = Analyzer(AnalyzerOptions(token_pattern=pattern)).analyze(docs)
    for i, doc in enumerate(docs):
        assert batch.doc_tokens(i) == re.findall(pattern, doc.lower())


@settings(max_examples=100)
@given(st.lists(st.text(alphabet="ab cd,é", max_size=40), min_size=1, max_size=4), st.integers(1, 4))
def test_ngrams_match_scikit_learn(docs, n):
    ours = Analyzer(AnalyzerOptions(ngrams=n)).analyze(docs)
    theirs = CountVectorizer(ngram_range=(1, n)).build_analyzer()
    for i, doc in enumerate(docs):
        terms = ours.doc_tokens(i)
        assert sorted(terms) == sorted(theirs(doc))
        # every n-gram's hash is the hash of its text
        assert ours.hashes[ours.doc_ptr[i] : ours.doc_ptr[i + 1]].tolist() == hashing.hash_strings(terms).tolist()
    everything = [t for i in range(len(docs)) for t in ours.doc_tokens(i)]
    picked = np.arange(len(everything))[::-3]  # texts asked for in any order and number, as a learn asks
    assert ours.strings(picked) == [everything[k] for k in picked.tolist()]


@settings(max_examples=200)
@given(st.lists(texts, min_size=1, max_size=4), st.integers(2, 4), st.booleans())
@example(["ab  cd\ta,b\n\U0001f600x é😀é zz", "x"], 3, False)
def test_an_ngram_is_its_words_joined_by_one_space_whatever_lay_between_them(docs, n, stop):
    """An n-gram's text is made from its words' code points (one gather for
    all the grams asked for): the words joined by one space, whatever
    separated them (spaces, tabs, punctuation, removed stop words), in any
    script, and its hash is the hash of that text."""
    stop_words = ("ab", "x") if stop else ()
    grams = Analyzer(AnalyzerOptions(ngrams=n, stop_words=stop_words)).analyze(docs)
    words = Analyzer(AnalyzerOptions(stop_words=stop_words)).analyze(docs)
    for i in range(len(docs)):
        w = words.doc_tokens(i)
        expected = [" ".join(w[j : j + k]) for k in range(1, n + 1) for j in range(len(w) - k + 1)]
        got = grams.doc_tokens(i)
        assert sorted(got) == sorted(expected)
        assert grams.hashes[grams.doc_ptr[i] : grams.doc_ptr[i + 1]].tolist() == hashing.hash_strings(got).tolist()


def test_stop_words_are_removed_before_ngrams_like_scikit_learn():
    doc = "The cat sat on the mat with THE hat"
    stop = ("the", "on", "with")
    ours = Analyzer(AnalyzerOptions(ngrams=2, stop_words=stop)).tokens(doc)
    theirs = CountVectorizer(ngram_range=(1, 2), stop_words=list(stop)).build_analyzer()(doc)
    assert sorted(ours) == sorted(theirs)
    assert "cat sat" in ours and "sat mat" in ours


def test_bytes_are_decoded_with_the_documented_rule():
    a = Analyzer()
    assert a.tokens("café crème".encode()) == ["café", "crème"]
    assert a.tokens("café crème".encode("cp1252")) == ["café", "crème"]
    assert a.tokens(b"\xff\xfeh\x00i\x00 \x00t\x00h\x00e\x00r\x00e\x00") == ["hi", "there"]
    assert a.tokens(bytes(range(256)) * 3)  # binary junk still gives tokens, no error


def test_bad_token_patterns_are_one_line_errors():
    with pytest.raises(NbcliError, match="not a valid regular expression"):
        Analyzer(AnalyzerOptions(token_pattern="(unclosed"))
    with pytest.raises(NbcliError, match="capturing groups"):
        Analyzer(AnalyzerOptions(token_pattern=r"(\w)(\w)"))
    # what re.compile raises besides re.error: a repeat count past its limit (OverflowError) and
    # groups nested deeper than its parser goes (RecursionError), once 'internal error's
    for pattern, problem in (
        (r"\w{4294967295}", "the repetition number is too large"),
        ("(" * 2000 + "a" + ")" * 2000, "nested too deeply"),
        ("(?:" * 1000 + "a" + ")" * 1000, "nested too deeply"),
    ):
        with pytest.raises(NbcliError, match=re.escape(f"is not a valid regular expression ({problem})")) as caught:
            Analyzer(AnalyzerOptions(token_pattern=pattern))
        assert len(str(caught.value)) < 200  # a 4,000-character pattern is named by its start and its length
    assert f"{'(?:' * 20!r}... (4,001 characters) is not a valid" in str(caught.value)


def test_stop_word_files(tmp_path):
    path = tmp_path / "stop.txt"
    path.write_text("# my list\nFoo\nbar  # trailing comment\n\n")
    assert load_stop_words(str(path)) == ("bar", "foo")
    assert "the" in load_stop_words("english") and len(load_stop_words("english")) == len(ENGLISH_STOP_WORDS)
    with pytest.raises(NbcliError, match="cannot read stop-word file"):
        load_stop_words(str(tmp_path / "missing.txt"))


@settings(max_examples=300)
@given(
    st.lists(
        st.text(alphabet=st.one_of(st.sampled_from("ab Z9_$'!-. \n"), st.characters(codec="utf-8")), max_size=60),
        min_size=1,
        max_size=5,
    )
)
@example(["$50 don't FREE!!! e-mail -- $$ '' a !x! ü-ß"])
def test_the_mail_rule_is_exactly_its_regex(texts):
    from nbcli.text.analyzer import MAIL_TOKEN_PATTERN, _run_tokens

    uni = _run_tokens(texts, mail_rule=True)
    for i, text in enumerate(texts):
        got = uni.strings_of(np.arange(uni.doc_ptr[i], uni.doc_ptr[i + 1]))
        assert got == re.findall(MAIL_TOKEN_PATTERN, text)


def test_a_batch_says_how_many_documents_were_read_as_mail():
    """Training's mail defaults hang on this count: it comes with each
    batch, not from a counter the analyzer keeps across calls."""
    message = b"From: a@example.com\nSubject: hello\n\nbody words\n"
    analyzer = Analyzer()
    assert analyzer.analyze([message, "plain text", message]).mail_docs == 2
    assert analyzer.analyze(["plain text"]).mail_docs == 0  # nothing carried over
    assert Analyzer(AnalyzerOptions(mail=False)).analyze([message]).mail_docs == 0
    assert not hasattr(analyzer, "mail_docs")
