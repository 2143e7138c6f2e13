"""The text form of a model (store/dump.py): what `nbcli dump` writes, and
every line checked on the way back, each error naming its line."""

import json
import re

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.store import dump, dumped


@pytest.fixture
def lines(classifier):
    return list(dumped.dump_lines(classifier))


def test_the_dump_is_a_header_then_terms_in_order(classifier, lines):
    header = json.loads(lines[0])
    assert header["nbcli_dump"] == dump.VERSION and header["columns"] == dump.COLUMNS
    assert header["classes"] == classifier.classes and header["terms"] == len(classifier.vocabulary)
    assert len(lines) == 1 + header["terms"] + header["record"]
    terms = [json.loads(line)[0] for line in lines[1 : 1 + header["terms"]]]
    assert terms == sorted(terms)
    term, counts, doc_freq, fit, seen = json.loads(lines[1])
    assert all(type(c) is int for c in counts) and fit is None and len(seen) == 10


def test_parse_gives_the_model_counts_in_hash_order(classifier, lines):
    classes, class_count, hashes, blob, offsets, tf, df, fit, last_seen = dump.parse(lines, "m.dump").counts
    assert classes == classifier.classes and fit is None
    assert np.array_equal(hashes, classifier.vocabulary.hashes)
    assert np.array_equal(blob, classifier.vocabulary.blob) and np.array_equal(offsets, classifier.vocabulary.offsets)
    assert np.array_equal(tf, classifier.model.feature_count) and np.array_equal(df, classifier.model.doc_freq)
    assert np.array_equal(class_count, classifier.model.class_count)
    assert last_seen.dtype == np.int32 and len(last_seen) == len(hashes)


def test_every_bad_line_is_one_error_naming_it(lines):
    def refused(text_lines, message):
        with pytest.raises(NbcliError, match=message) as info:
            dump.parse(text_lines, "m.dump")
        assert "\n" not in str(info.value)

    refused([], r"m\.dump, line 1: the text ends early")
    refused(["{not json"], r"m\.dump, line 1: not a JSON line")
    refused([json.dumps({**json.loads(lines[0]), "nbcli_dump": 2}), *lines[1:]], "not an nbcli dump")
    refused([lines[0], "[]", *lines[2:]], r"m\.dump, line 2: a term line is \[term, counts")
    row = json.loads(lines[1])
    refused([lines[0], json.dumps([row[0], [1.5, *row[1][1:]], *row[2:]]), *lines[2:]], r"line 2: bad count 1\.5")
    refused([*lines, '["extra"]'], rf"line {len(lines) + 1}: more lines than the header says")
    refused([*lines, "", " ", '["extra"]'], rf"line {len(lines) + 3}: more lines than the header says")  # past blanks
    dump.parse([*lines, "", " "], "m.dump")  # (blank lines at the end are fine)
    entry = json.loads(lines[-1])
    for bad, says in (
        ({**entry, "class": "bogus"}, "its class 'bogus' is not one of the header's classes"),
        ({k: v for k, v in entry.items() if k not in ("when", "copies")}, "it has no 'copies', 'when'"),
        ({**entry, "digest": "xyz"}, "digest is 32 hex digits, message_id 16 hex digits or null"),
        ({**entry, "message_id": 12}, "digest is 32 hex digits, message_id 16 hex digits or null"),
    ):
        refused([*lines[:-1], json.dumps(bad)], rf"line {len(lines)}: bad record line: {re.escape(says)}")
    term = json.loads(lines[1])[0]
    # the repeated line is named, and the line that had the term first: lines 2 and 3, then 2 and 5
    refused([lines[0], lines[1], lines[1], *lines[3:]], rf"m\.dump, line 3: the term {term!r} again \(line 2 has it\)")
    refused([*lines[:4], lines[1], *lines[5:]], rf"m\.dump, line 5: the term {term!r} again \(line 2 has it\)")
    header = json.loads(lines[0])
    refused([json.dumps({**header, "classes": [header["classes"][0]] * 2}), *lines[1:]], "line 1: bad classes: one is")
    record_lines = lines[1 + header["terms"] :]
    refused([json.dumps({**header, "terms": 0}), *record_lines], 'line 1: "terms" is 0: a model needs at least')
    for big in (10**400, 2**64, 1e301):  # numpy's isfinite refused ints past 64 bits with a TypeError
        refused(
            [json.dumps({**header, "class_count": [big] * len(header["classes"])}), *lines[1:]],
            "1: (expected numbers|bad count)",
        )
        refused(
            [lines[0], json.dumps([row[0], [big, *row[1][1:]], *row[2:]]), *lines[2:]],
            r"line 2: (expected numbers|bad count)",
        )


def test_two_terms_of_one_hash_name_both_lines(lines, monkeypatch):
    """A 64-bit collision (no dump nbcli writes has one; a crafted one
    may): the later line is named, with the earlier."""
    collide = np.array([7, 8, 9, 8, *range(10, 6 + len(lines))], np.uint64)  # lines 3 and 5's terms
    monkeypatch.setattr(dump, "hash_strings", lambda texts: collide[: len(texts)])
    with pytest.raises(NbcliError, match=r"m\.dump, line 5: its term has the hash of line 3's, another term"):
        dump.parse(lines, "m.dump")


def test_the_record_may_not_count_a_document_twice(lines):
    header = json.loads(lines[0])
    n = header["record"]
    entry = {"digest": "00" * 16, "class": header["classes"][0], "copies": 3, "message_id": None, "when": 0}
    once = [json.dumps({**header, "record": n + 1}), *lines[1:], json.dumps(entry)]
    assert dump.parse(once).record[2][-1] == 3
    twice = [json.dumps({**header, "record": n + 2}), *lines[1:], json.dumps(entry), json.dumps(entry)]
    with pytest.raises(NbcliError, match=rf"line {len(lines) + 2}: the record has document 0+ in class .* again "):
        dump.parse(twice)
    with pytest.raises(NbcliError, match="copies 0 is not a whole number in 1..2"):
        dump.parse([json.dumps({**header, "record": n + 1}), *lines[1:], json.dumps({**entry, "copies": 0})])


def test_models_the_dump_has_no_place_for_are_refused(classifier):
    dump.check_dumpable(classifier)
    classifier.expected = (np.zeros(1), np.zeros(1))
    with pytest.raises(NbcliError, match="no place for an EM model's expected counts"):
        dump.check_dumpable(classifier)
