"""Text to tokens: the analyzer, built once from options.

The analyzer turns a batch of documents into a `TokenBatch`: the 64-bit
hash of every token (see `hashing`), grouped by document, plus a way to get
a token's text back when it is needed (new vocabulary terms, debugging).
Working on a whole batch at once keeps the per-token cost inside numpy.

Tokens, in order of application:

1. The text is lowercased (`str.lower`).
2. Word tokens: by default, maximal runs of two or more word characters,
   exactly the tokens of `re.findall(r"(?u)\\b\\w\\w+\\b", text)`, found with
   numpy rather than the regex engine. The text of email messages (see
   `mail`) uses the mail rule instead: maximal runs of word characters and
   $ ' ! - that contain a word character, exactly the tokens of
   `re.findall(MAIL_TOKEN_PATTERN, text)`. With a custom token pattern P the
   tokens of everything are exactly `re.findall(P, text)`.
3. Stop words are removed.
4. With n-grams N > 1, every run of 2..N consecutive tokens of a document
   is added as the term "w1 w2 ...", joined by single spaces.

`AnalyzerOptions.check` refuses bad options with errors.ParameterError,
naming the field (ngrams, token_pattern, ...); the command line says the
flag. A model file's corruption message (`from_dict`) keeps the field's
name, as its other checks do ("analyzer: ngrams is not an integer"): a
model file has fields, not flags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from nbcli.defaults import DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_CAP
from nbcli.errors import NbcliError, ParameterError
from nbcli.text import hashing
from nbcli.text.decode import decode_bytes
from nbcli.text.hashing import TokenBatch
from nbcli.text.mail import extract, looks_like_mail

DEFAULT_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
# The mail rule, as a regular expression (the analyzer uses numpy instead).
MAIL_TOKEN_PATTERN = r"[\w$'!-]*\w[\w$'!-]*"
_DEFAULT_PATTERNS = {DEFAULT_TOKEN_PATTERN, r"\b\w\w+\b", r"(?u)\w\w+", r"\w\w+"}

# Our own list of very common English function words.
ENGLISH_STOP_WORDS = frozenset(
    """
    a about above after again against all almost also although always am among an
    and another any anyone anything are around as at be became because become been
    before being below between both but by can cannot could did do does doing done
    down during each either else enough even ever every few for from further had has
    have having he her here hers herself him himself his how however i if in into is
    it its itself just least less let like made many may me might mine more most
    much must my myself neither never no nor not now of off often on once one only
    onto or other others our ours ourselves out over own per perhaps quite rather
    same she should since so some such than that the their theirs them themselves
    then there these they this those though through thus to too toward towards
    under until up upon us very via was we well were what whatever when where
    whether which while who whom whose why will with within without would yet you
    your yours yourself yourselves
    """.split()
)

_WORD = re.compile(r"\w")
_ASCII_WORD = np.array([bool(_WORD.match(chr(c))) for c in range(256)], dtype=np.int8)
_ASCII_WORD[128:] = 0  # only consulted for ASCII text
# Every code point's answer, found once: 0 not yet known, 1 no, 2 yes. Zeros, so
# that only the pages of the code points some text had become resident (numpy's
# zeros come from calloc: the 1.1 MB table filled with -1 was all resident in
# every process that ever met non-Latin-1 text, a daemon's worker among them).
_unicode_word: np.ndarray | None = None


def _word_mask(codes: np.ndarray) -> np.ndarray:
    """1 where the code point is a regex word character (\\w), else 0 (int8)."""
    global _unicode_word
    if codes.dtype == np.uint8:
        return _ASCII_WORD[codes]
    if _unicode_word is None:
        _unicode_word = np.zeros(0x110000, dtype=np.int8)
        _unicode_word[:256] = [2 if _WORD.match(chr(c)) else 1 for c in range(256)]
    known = _unicode_word[codes]
    unknown = known == 0
    if unknown.any():
        # a set, not np.unique: numpy 2's unique with no other output asked imports numpy.ma (1.3 MB resident)
        for c in set(codes[unknown].tolist()):
            _unicode_word[c] = 2 if _WORD.match(chr(c)) else 1
        known = _unicode_word[codes]
    return known - 1


@dataclass(frozen=True)
class AnalyzerOptions:
    """What turns text into terms; stored in the model file."""

    token_pattern: str | None = None  # None: the default word tokens
    ngrams: int = 1
    stop_words: tuple[str, ...] = field(default=())
    mail: bool = True  # analyse documents that parse as mail with `nbcli.text.mail`
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES

    def to_dict(self) -> dict:
        return {
            "token_pattern": self.token_pattern,
            "ngrams": self.ngrams,
            "stop_words": list(self.stop_words),
            "mail": self.mail,
            "max_message_bytes": self.max_message_bytes,
        }

    @classmethod
    def from_dict(cls, d: dict) -> AnalyzerOptions:
        """The options stored in a model file, checked as `check` checks
        the options of `nbcli train` (a model file may be crafted): raises
        ValueError saying what is wrong, naming the model file's field
        ("analyzer: ngrams must be between 1 and 8, not 0"): `check`'s
        library text, since a model file has fields, not flags."""
        d = dict(d)
        pattern = d.get("token_pattern")
        ngrams = d.get("ngrams", 1)
        stop_words = d.get("stop_words", [])
        mail = d.get("mail", True)
        cap = d.get("max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES)
        if pattern is not None and not isinstance(pattern, str):
            raise ValueError("analyzer: token_pattern is not a string")
        if not isinstance(stop_words, list) or not all(isinstance(w, str) for w in stop_words):
            raise ValueError("analyzer: stop_words is not a list of strings")
        for name, value, want in (("ngrams", ngrams, int), ("max_message_bytes", cap, int), ("mail", mail, bool)):
            if type(value) is not want:  # bool is an int, and an int is not a bool
                raise ValueError(f"analyzer: {name} is not {'an integer' if want is int else 'true or false'}")
        options = cls(
            token_pattern=pattern, ngrams=ngrams, stop_words=tuple(stop_words), mail=mail, max_message_bytes=cap
        )
        try:
            options.check()
        except NbcliError as exc:
            raise ValueError(f"analyzer: {exc.message}") from None
        return options

    def check(self) -> re.Pattern | None:
        """Refuse options that nbcli would not train with (a ParameterError
        naming the field; the command line says its flag); returns the compiled custom token pattern, or None for the
        default tokens. The same bounds hold for `nbcli train` and for a
        model file, so every model nbcli writes loads again."""
        if not 1 <= self.ngrams <= MAX_NGRAMS:
            raise ParameterError(
                "ngrams", "{ngrams} must be between 1 and {most}, not {value}", most=MAX_NGRAMS, value=self.ngrams
            )
        if not 1 <= self.max_message_bytes <= MAX_MESSAGE_BYTES_CAP:
            raise ParameterError(
                "max_message_bytes",
                "{max_message_bytes} must be between 1 byte and {most}M, not {value}",
                hint="the analysis of one message is bounded by it",
                most=MAX_MESSAGE_BYTES_CAP >> 20,
                value=self.max_message_bytes,
            )
        if len(self.stop_words) > MAX_STOP_WORDS or any(len(w) > MAX_STOP_WORD_CHARS for w in self.stop_words):
            raise ParameterError(
                "stop_words",
                "{stop_words}: at most {most:,} words of at most {chars} characters each",
                most=MAX_STOP_WORDS,
                chars=MAX_STOP_WORD_CHARS,
            )
        pattern = self.token_pattern
        if pattern is None or pattern in _DEFAULT_PATTERNS:
            return None
        if len(pattern) > MAX_TOKEN_PATTERN_CHARS:
            raise ParameterError(
                "token_pattern", "{token_pattern} is longer than {most} characters", most=MAX_TOKEN_PATTERN_CHARS
            )
        try:
            regex = re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as exc:
            # re.compile raises OverflowError for a repeat count past its limit (\w{4294967295}) and
            # RecursionError for groups nested past its parser's depth (about 500 levels)
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise ParameterError(
                "token_pattern",
                "{token_pattern} {pattern} is not a valid regular expression ({problem})",
                hint="check the pattern's syntax (Python 're')",
                pattern=_shown(pattern),
                problem=why,
            ) from None
        if regex.groups > 1:
            raise ParameterError(
                "token_pattern",
                "{token_pattern} {pattern} has {groups} capturing groups",
                hint="use at most one capturing group; write the others as (?:...)",
                pattern=_shown(pattern),
                groups=regex.groups,
            )
        problem = token_pattern_problem(pattern)
        if problem:
            raise ParameterError(
                "token_pattern",
                "{token_pattern} {pattern} is refused: it {problem}",
                hint="Python's regex engine backtracks; use a pattern without nested repeats, such as [a-z]+ or \\S+",
                pattern=_shown(pattern),
                problem=problem,
            )
        return regex


def _shown(pattern: str) -> str:
    """A token pattern as an error line names it: quoted, and a long one cut
    to its start and its length (a pattern may have 4,096 characters; the
    error must stay one line a user can read)."""
    if len(pattern) <= SHOWN_PATTERN_CHARS:
        return repr(pattern)
    return f"{pattern[:SHOWN_PATTERN_CHARS]!r}... ({len(pattern):,} characters)"


# Bounds on the analyzer's settings, for `nbcli train` and for model files
# alike (see docs/guide/model-file.md). --ngrams has the range train
# has always accepted; the message cap bounds the analysis of one message
# (a model that asked for more could make a filter read 1 GB of every
# message); the others keep a crafted model from costing more to load
# than a real one.
MAX_NGRAMS = 8
MAX_STOP_WORDS = 1_000_000
MAX_STOP_WORD_CHARS = 1000
MAX_TOKEN_PATTERN_CHARS = 4096
SHOWN_PATTERN_CHARS = 60  # of a token pattern in an error line (`_shown`)


def token_pattern_problem(pattern: str) -> str | None:
    """Why a custom token pattern could make `re.findall` backtrack
    catastrophically (time exponential in the length of the text), or None.

    Python's `re` is a backtracking engine, and a model file says which
    pattern to run over every message, so the check is conservative: a
    static look at the pattern's parse tree (`re._parser`) that refuses
    the constructs behind exponential backtracking, whatever the text:

    - a repeat (*, +, {m,n} with n > 1) inside another repeat: (a+)+, (\\w+\\s?)+$;
    - an alternative (|) inside a repeat: (a|ab)*, (a|a)*b;
    - a capturing group inside a repeat: (ab)+ (re.findall would return
      only the group's last repetition anyway);
    - backreferences (\\1) and conditional groups ((?(1)a|b)).

    Patterns refused here may be harmless (such as (?:ab)+); the common
    token patterns ([a-z]+, \\S+, \\b\\w\\w+\\b, [\\w$'!-]*\\w[\\w$'!-]*) pass.
    What passes is at worst polynomial: a pattern like \\w+x rescans a long
    run of word characters from each start, quadratic in the run's length,
    which the message cap (--max-message-bytes) bounds for mail.
    """
    try:
        tree = _sre_parse(pattern)
    except re.error:
        return None  # re.compile says what is wrong with it
    return _tree_problem(tree, in_repeat=False)


def _sre_parse(pattern: str):
    try:
        from re import _parser  # type: ignore[attr-defined]  # Python 3.11+; typeshed has no stub of this private module
    except ImportError:  # pragma: no cover - older Pythons
        import sre_parse as _parser
    return _parser.parse(pattern)


def _tree_problem(items, in_repeat: bool) -> str | None:
    try:
        from re import _constants as c  # type: ignore[attr-defined]  # private: no stub in typeshed
    except ImportError:  # pragma: no cover - older Pythons
        import sre_constants as c
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}
    for op, av in items:
        subs, inner = [], in_repeat
        if op in (c.GROUPREF, c.GROUPREF_EXISTS, getattr(c, "GROUPREF_IGNORE", c.GROUPREF)):
            return "uses a backreference or a conditional group"
        if op in repeats:
            repeated = av[1] > 1
            if repeated and in_repeat:
                return "has a repeat inside a repeat, as in (a+)+, which can backtrack exponentially"
            subs, inner = [av[2]], in_repeat or repeated
        elif op is c.SUBPATTERN:
            problem = _tree_problem(av[3], in_repeat)  # the worse problem first
            if problem is None and av[0] is not None and in_repeat:
                problem = (
                    "repeats a capturing group, as in (ab)+, which re.findall gives only the last repetition of; "
                    "write (?:...)"
                )
            if problem:
                return problem
        elif op is c.BRANCH:
            if in_repeat:
                return "has an alternative (|) inside a repeat, as in (a|ab)*, which can backtrack exponentially"
            subs = av[1]
        elif op in (c.ASSERT, c.ASSERT_NOT):
            subs = [av[1]]
        elif op is getattr(c, "ATOMIC_GROUP", None):
            subs = [av]
        for sub in subs:
            problem = _tree_problem(sub, inner)
            if problem:
                return problem
    return None


class _Unigrams:
    """Word tokens of a batch: hashes, lengths, document pointers, texts;
    spans, when the tokens were cut from one text: (its code points, starts,
    ends), token k being the code points starts[k]:ends[k] (`_spaced_texts`
    makes n-grams' texts from them)."""

    def __init__(self, hashes, lengths, doc_ptr, strings_of, spans=None):
        self.hashes = hashes
        self.lengths = lengths
        self.doc_ptr = doc_ptr
        self.strings_of = strings_of
        self.spans = spans

    def select(self, keep: np.ndarray) -> _Unigrams:
        kept = np.flatnonzero(keep)
        doc_ptr = _ptr_from_kept(keep, self.doc_ptr)
        parent = self.strings_of
        spans = None if self.spans is None else (self.spans[0], self.spans[1][kept], self.spans[2][kept])
        return _Unigrams(self.hashes[kept], self.lengths[kept], doc_ptr, lambda idx: parent(kept[idx]), spans)


def _ptr_from_kept(keep: np.ndarray, doc_ptr: np.ndarray) -> np.ndarray:
    cum = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    return cum[doc_ptr]


class Analyzer:
    """Turns batches of documents into TokenBatches, per AnalyzerOptions."""

    def __init__(self, options: AnalyzerOptions | None = None):
        options = options or AnalyzerOptions()
        self.options = options
        self._regex = options.check()
        stop = [w.lower() for w in options.stop_words]
        self._stop = np.unique(hashing.hash_strings(stop)) if stop else None

    # -- public ----------------------------------------------------------------

    def analyze(self, docs: list, kinds: list[str] | None = None) -> TokenBatch:
        """Tokens of `docs`, each a str, or bytes: a message if it is mail
        (kind 'mail', or kind 'auto' and it looks like mail) and the
        analyzer's mail option is on, else text decoded by `decode_bytes`.
        The batch says how many were read as mail (`TokenBatch.mail_docs`)."""
        batch, mail = self._analyze(docs, kinds)
        batch.mail_docs = mail
        return batch

    def _analyze(self, docs: list, kinds: list[str] | None) -> tuple[TokenBatch, int]:
        # Text segments, lowercased, in four groups by token rule (text or
        # mail) and by whether they are ASCII (numpy works on bytes then,
        # which is several times cheaper than on 32-bit code points).
        # Segments are numbered in document order (`seq`) so that, however
        # they are grouped, each document's tokens come out in reading order:
        # its segments, then its literal tokens.
        groups: dict[tuple[bool, bool], tuple[list, list, list, list]] = {}
        literals: list[str] = []
        lit_doc: list[int] = []
        lit_key: list[int] = []
        seq = 0
        mail = 0
        for i, data in enumerate(docs):
            kind = kinds[i] if kinds is not None else "auto"
            if (
                self.options.mail
                and isinstance(data, bytes)
                and (kind == "mail" or (kind == "auto" and looks_like_mail(data)))
            ):
                found = extract(data, self.options.max_message_bytes)
                for prefix, text in found.segments:  # lowercased already
                    texts, docs_of, prefixes, seqs = groups.setdefault((True, text.isascii()), ([], [], [], []))
                    texts.append(text)
                    docs_of.append(i)
                    prefixes.append(prefix)
                    seqs.append(2 * seq)
                    seq += 1
                literals.extend(found.literals)
                lit_doc.extend([i] * len(found.literals))
                lit_key.extend([2 * seq - 1] * len(found.literals))
                mail += 1
            else:
                text = (data if isinstance(data, str) else decode_bytes(data)).lower()
                texts, docs_of, prefixes, seqs = groups.setdefault((False, text.isascii()), ([], [], [], []))
                texts.append(text)
                docs_of.append(i)
                prefixes.append("")
                seqs.append(2 * seq)
                seq += 1
        if not groups:
            return TokenBatch(np.zeros(0, np.uint64), np.zeros(len(docs) + 1, np.int64), lambda idx: []), mail
        parts, seg_doc, seg_prefix, seg_key = [], [], [], []
        for (mail_rule, _), (texts, docs_of, prefixes, seqs) in sorted(groups.items()):
            parts.append(self._segment_tokens(texts, mail_rule))
            seg_doc += docs_of
            seg_prefix += prefixes
            seg_key += seqs
        if len(parts) == 1 and not literals and len(seg_doc) == len(docs):
            return parts[0], mail  # plain text, one segment per document, in order
        segments = parts[0]
        for part in parts[1:]:
            segments = _concat(segments, part)
        assembled = _assemble(
            segments,
            len(docs),
            np.array(seg_doc, dtype=np.int64),
            np.array(seg_key, dtype=np.int64),
            seg_prefix,
            literals,
            lit_doc,
            lit_key,
        )
        return assembled, mail

    def tokens(self, doc, kind: str = "auto") -> list[str]:
        """The terms of one document, in order (for `nbcli tokens` and tests)."""
        return self.analyze([doc], [kind]).doc_tokens(0)

    def _segment_tokens(self, texts: list[str], mail_rule: bool) -> TokenBatch:
        """Word tokens, stop words removed, n-grams added, per text segment."""
        if self._regex is not None:
            uni = self._regex_tokens(texts)
        else:
            uni = _run_tokens(texts, mail_rule)
        if self._stop is not None and len(uni.hashes):
            pos = np.searchsorted(self._stop, uni.hashes).clip(max=len(self._stop) - 1)
            uni = uni.select(self._stop[pos] != uni.hashes)
        if self.options.ngrams == 1:
            return TokenBatch(uni.hashes, uni.doc_ptr, uni.strings_of)
        return _with_ngrams(uni, self.options.ngrams)

    def _regex_tokens(self, texts: list[str]) -> _Unigrams:
        if self._regex is None:  # only called for a custom token pattern
            raise ValueError("the analyzer has no custom token pattern")
        findall = self._regex.findall
        per_doc = [findall(t) for t in texts]
        counts = np.fromiter(map(len, per_doc), dtype=np.int64, count=len(per_doc))
        doc_ptr = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(counts, out=doc_ptr[1:])
        flat = [tok for toks in per_doc for tok in toks]
        lengths = np.fromiter(map(len, flat), dtype=np.int64, count=len(flat))
        hashes = hashing.hash_strings(flat)
        return _Unigrams(hashes, lengths, doc_ptr, lambda idx: [flat[i] for i in idx.tolist()])


_MAIL_EXTRA = np.zeros(256, dtype=np.int8)  # code point 255 maps to 0: np.minimum folds all above onto it
for _ch in "$'!-":
    _MAIL_EXTRA[ord(_ch)] = 1
# bytes.translate tables for ASCII text: byte 1 for token characters, else 0
_WORD_TABLE = bytes(_ASCII_WORD.astype(bool).astype(np.uint8))
_MAIL_TABLE = bytes((_ASCII_WORD.astype(bool) | _MAIL_EXTRA.astype(bool)).astype(np.uint8))


def _run_tokens(texts: list[str], mail_rule: bool = False) -> _Unigrams:
    """Word tokens of a whole batch at once, found with numpy.

    Text rule: maximal runs of >= 2 word characters.
    Mail rule: maximal runs of word characters and $ ' ! - that contain at
    least one word character (so "$50", "don't", "free!!!" and "e-mail" are
    single tokens).
    """
    joined = "\n".join(texts)  # "\n" is not a token character: no token spans two texts
    # tok[1:-1]: is each character a token character; a False on either side
    # makes every run start and end with a change between neighbours.
    if joined.isascii():  # bytes.translate through 0/1 tables: the fastest lookup there is
        raw = joined.encode("ascii")
        codes = np.frombuffer(raw, dtype=np.uint8)
        word = np.frombuffer(raw.translate(_WORD_TABLE), dtype=bool)
        tok = np.frombuffer(
            b"\0".join((b"", raw, b"")).translate(_MAIL_TABLE if mail_rule else _WORD_TABLE), dtype=bool
        )
    else:
        codes = hashing.codes_of(joined)
        word = _word_mask(codes).astype(bool)
        tok = np.zeros(len(codes) + 2, dtype=bool)
        tok[1:-1] = word | (_MAIL_EXTRA[np.minimum(codes, 255)] > 0) if mail_rule else word
    n = len(codes)
    change = np.flatnonzero(tok[1:] != tok[:-1])
    starts, ends = change[0::2], change[1::2]
    if mail_rule:
        # keep the runs with a word character: a running count of them
        # differs between the run's two ends
        # (int32 where it fits: numpy sums bools into int32 4x faster)
        count_type = np.int32 if n < 2**31 - 1 else np.int64
        seen = np.zeros(n + 1, dtype=count_type)
        np.cumsum(word, out=seen[1:], dtype=count_type)
        keep = np.take(seen, ends) > np.take(seen, starts)
    else:
        keep = ends - starts >= 2
    starts, ends = starts[keep], ends[keep]
    doc_starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts)), out=doc_starts[1:])
    doc_ptr = np.searchsorted(starts, doc_starts)
    hashes = hashing.hash_spans(codes, starts, ends)

    def strings_of(idx):
        return [joined[a:b] for a, b in zip(starts[idx].tolist(), ends[idx].tolist())]

    return _Unigrams(hashes, ends - starts, doc_ptr, strings_of, (codes, starts, ends))


_SPACE = np.uint64(ord(" "))
_P = np.uint64(hashing.P)


def _with_ngrams(uni: _Unigrams, n_max: int) -> TokenBatch:
    """Unigrams plus every 2..n_max-gram within a document, grouped by doc."""
    n_docs = len(uni.doc_ptr) - 1
    n_uni = len(uni.hashes)
    doc_len = np.diff(uni.doc_ptr)
    doc_of = np.repeat(np.arange(n_docs), doc_len)
    pos_in_doc = np.arange(n_uni) - uni.doc_ptr[doc_of]

    parts_h = [uni.hashes]
    parts_first = [np.arange(n_uni)]
    parts_n = [np.ones(n_uni, dtype=np.int64)]
    parts_doc = [doc_of]
    parts_rank = [pos_in_doc]
    per_doc = [doc_len]
    offset = doc_len.copy()  # where order n's grams start inside a doc's block
    for n in range(2, n_max + 1):
        valid = np.flatnonzero(pos_in_doc + n <= doc_len[doc_of])
        h = uni.hashes[valid].copy()
        length = uni.lengths[valid].copy()
        for k in range(1, n):
            nxt = valid + k
            h = h + hashing.pow_p(length) * (_SPACE + _P * uni.hashes[nxt])
            length = length + 1 + uni.lengths[nxt]
        d = doc_of[valid]
        parts_h.append(h)
        parts_first.append(valid)
        parts_n.append(np.full(len(valid), n, dtype=np.int64))
        parts_doc.append(d)
        parts_rank.append(offset[d] + pos_in_doc[valid])
        count_n = np.maximum(doc_len - n + 1, 0)
        per_doc.append(count_n)
        offset = offset + count_n

    doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(offset, out=doc_ptr[1:])
    all_doc = np.concatenate(parts_doc)
    dest = doc_ptr[all_doc] + np.concatenate(parts_rank)
    total = int(doc_ptr[-1])
    hashes = np.empty(total, dtype=np.uint64)
    first = np.empty(total, dtype=np.int64)
    order = np.empty(total, dtype=np.int64)
    hashes[dest] = np.concatenate(parts_h)
    first[dest] = np.concatenate(parts_first)
    order[dest] = np.concatenate(parts_n)

    def strings_of(idx):
        # every gram's text made at once from the code points of its words with a space
        # between them, then cut gram by gram (a lookup and a join per gram cost a learn of a
        # 3-gram message 1 ms, then 250 us, for the texts of its 460 new terms)
        firsts, sizes = first[idx], order[idx]
        ends = np.cumsum(sizes)
        words = np.repeat(firsts - (ends - sizes), sizes) + np.arange(int(ends[-1]) if len(ends) else 0)
        if uni.spans is None:
            texts = uni.strings_of(words)
            bounds = [0, *ends.tolist()]
            return [" ".join(texts[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        return _spaced_texts(uni.spans, words, ends)

    return TokenBatch(hashes, doc_ptr, strings_of)


def _spaced_texts(spans, words: np.ndarray, ends: np.ndarray) -> list[str]:
    """The texts of terms that are runs of words, each its words joined by
    one space: `words` the words' indices, term k the words
    ends[k-1]:ends[k]; spans: `_Unigrams.spans`. One gather of code points
    and one decode for all of them, then a slice per term (what
    " ".join(words) gives, string for string)."""
    codes, word_start, word_end = spans
    if not len(ends):
        return []
    last = np.zeros(len(words), dtype=bool)
    last[ends - 1] = True  # a term's last word: no space after it
    size = word_end[words] - word_start[words]
    slot = size + ~last  # the word's code points, and a space unless it ends its term
    where = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(slot, out=where[1:])
    at = np.repeat(word_start[words] - where[:-1], slot) + np.arange(int(where[-1]))
    spaces = where[1:][~last] - 1
    at[spaces] = 0  # any code point: a space goes there after the gather
    points = codes[at]
    points[spaces] = 32
    joined = (
        points.tobytes().decode("ascii")
        if points.dtype == np.uint8
        else points.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
    )
    bounds = where[np.append(0, ends)].tolist()
    return [joined[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _concat(a: TokenBatch, b: TokenBatch) -> TokenBatch:
    """The segments of `a` followed by those of `b`."""
    n_a = len(a.hashes)
    doc_ptr = np.concatenate([a.doc_ptr, b.doc_ptr[1:] + n_a])

    def strings_of(idx):
        out: list[str] = [""] * len(idx)
        in_a = idx < n_a
        for where, batch, offset in ((np.flatnonzero(in_a), a, 0), (np.flatnonzero(~in_a), b, n_a)):
            if len(where):
                for k, text in zip(where.tolist(), batch.strings(idx[where] - offset)):
                    out[k] = text
        return out

    return TokenBatch(np.concatenate([a.hashes, b.hashes]), doc_ptr, strings_of)


_literal_hashes: dict[str, int] = {}


def _hash_literals(literals: list[str]) -> np.ndarray:
    """hash_strings(literals), through a cache: header, URL and MIME tokens
    recur constantly, and hashing many short strings has overheads."""
    cache = _literal_hashes
    missing = [t for t in dict.fromkeys(literals) if t not in cache]
    if missing:
        if len(cache) > 200_000:
            cache.clear()
            missing = list(dict.fromkeys(literals))
        cache.update(zip(missing, hashing.hash_strings(missing).tolist()))
    return np.fromiter(map(cache.__getitem__, literals), dtype=np.uint64, count=len(literals))


def _assemble(
    segments: TokenBatch,
    n_docs: int,
    seg_doc: np.ndarray,
    seg_key: np.ndarray,
    seg_prefix: list[str],
    literals: list[str],
    lit_doc: list[int],
    lit_key: list[int],
) -> TokenBatch:
    """Documents' tokens from their segments' tokens (each prefixed with its
    segment's prefix) and their literal tokens, grouped by document."""
    n_seg = len(seg_prefix)
    seg_of = np.repeat(np.arange(n_seg, dtype=np.int64), np.diff(segments.doc_ptr))
    prefixes = sorted(set(seg_prefix))
    prefix_id = (
        np.array([prefixes.index(p) for p in seg_prefix], dtype=np.int64)
        if len(prefixes) > 1
        else np.zeros(n_seg, np.int64)
    )
    prefix_hash = hashing.hash_strings(prefixes)[prefix_id]
    prefix_pow = hashing.pow_p(np.array([len(p) for p in prefixes], dtype=np.int64))[prefix_id]
    text_hashes = prefix_hash[seg_of] + prefix_pow[seg_of] * segments.hashes
    n_text = len(text_hashes)
    # Reading order, by blocks rather than tokens: a block is a segment's
    # tokens, or one document's literal tokens (consecutive in `literals`).
    # Sorting the few blocks by key gives each its place in the output;
    # `order` (output position -> input position) follows without sorting
    # the tokens themselves.
    lit_doc_arr = np.array(lit_doc, dtype=np.int64)
    lit_start = np.flatnonzero(np.diff(lit_doc_arr, prepend=-1)) if len(lit_doc_arr) else np.zeros(0, np.int64)
    lit_size = np.diff(np.append(lit_start, len(lit_doc_arr)))
    block_key = np.concatenate([seg_key, np.array(lit_key, dtype=np.int64)[lit_start]])
    block_size = np.concatenate([np.diff(segments.doc_ptr), lit_size])
    block_in = np.concatenate([segments.doc_ptr[:-1], n_text + lit_start])
    block_doc = np.concatenate([seg_doc, lit_doc_arr[lit_start]])
    by_key = np.argsort(block_key, kind="stable")  # equal keys: documents without segments, in order
    sizes = block_size[by_key]
    out_start = np.zeros(len(by_key) + 1, dtype=np.int64)
    np.cumsum(sizes, out=out_start[1:])
    order = np.repeat(block_in[by_key] - out_start[:-1], sizes) + np.arange(out_start[-1], dtype=np.int64)
    hashes = np.concatenate([text_hashes, _hash_literals(literals)])[order]
    doc_ptr = out_start[np.searchsorted(block_doc[by_key], np.arange(n_docs + 1))]

    def strings_of(idx):
        src = order[idx]
        out: list[str] = [""] * len(src)
        is_text = src < n_text
        where_text = np.flatnonzero(is_text)
        if len(where_text):
            words = segments.strings(src[where_text])
            for k, w, seg in zip(where_text.tolist(), words, seg_of[src[where_text]].tolist()):
                out[k] = seg_prefix[seg] + w
        for k in np.flatnonzero(~is_text).tolist():
            out[k] = literals[int(src[k]) - n_text]
        return out

    return TokenBatch(hashes, doc_ptr, strings_of)


def load_stop_words(spec: str) -> tuple[str, ...]:
    """'english' or a file with one word per line ('#' starts a comment)."""
    if spec == "english":
        return tuple(sorted(ENGLISH_STOP_WORDS))
    try:
        with open(spec, "rb") as fh:
            text = decode_bytes(fh.read())
    except OSError as exc:
        raise NbcliError(
            f"cannot read stop-word file {spec}: {exc.strerror}",
            hint="give 'english' or a readable file with one word per line",
        ) from None
    words = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().lower()
        if line:
            words.append(line)
    return tuple(sorted(set(words)))
