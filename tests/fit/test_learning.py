"""Learning, forgetting, merging, dumping and pruning, at the library level:
the exactness properties (learn == train on more, forget == train on less)
for every event model nbcli can update."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nbcli.cli.options import in_flag_terms
from nbcli.errors import NbcliError
from nbcli.fit import learning
from nbcli.fit.analysed import analyse_for_learning
from nbcli.fit.training import train
from nbcli.fit.training_options import training_options
from nbcli.store import modelfile
from nbcli.store.dumped import dump_lines, load_lines
from nbcli.text.sources import Document

from conftest import make_docs

WORDS = ["apple", "bread", "cider", "dough", "eagle", "fjord", "grape", "honey", "igloo"]
TEST_TEXTS = [
    "apple bread",
    "cider cider dough eagle",
    "fjord grape honey igloo apple",
    "apple unknownword",
    "zebra quagga",
    "honey honey honey bread",
]
KINDS = {
    "multinomial": {},
    "bernoulli": {"kind": "bernoulli"},
    "complement": {"kind": "complement"},
    "complement-tflog-norm": {"kind": "complement", "tf_log": True, "length_norm": True},
    "complement-idf": {"kind": "complement", "idf": True},
    "map-alpha-2": {"estimate": "map", "alpha": 2.0},
    "m-estimate": {"m_estimate": "2"},
}
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def docs_of(pairs, prefix="d"):
    return [Document(f"{prefix}{i}", label, text, "text") for i, (text, label) in enumerate(pairs)]


def trained(pairs, **fields):
    analyzer_options, options = training_options(**fields)
    return train(docs_of(pairs), analyzer_options, options)


def analysed(classifier, pairs, label=None, prefix="x"):
    return analyse_for_learning(classifier.analyzer, docs_of(pairs, prefix), label)


def terms(classifier) -> list[str]:
    return classifier.vocabulary.terms(np.arange(len(classifier.vocabulary)))


def assert_same_model(a, b, texts=TEST_TEXTS):
    """a and b hold the same counts and classify alike (to 1e-9)."""
    assert a.classes == b.classes
    assert np.array_equal(a.vocabulary.hashes, b.vocabulary.hashes)
    assert terms(a) == terms(b)
    assert np.array_equal(a.model.class_count, b.model.class_count)
    assert np.array_equal(a.model.feature_count, b.model.feature_count)
    assert (a.model.doc_freq is None) == (b.model.doc_freq is None)
    if a.model.doc_freq is not None:
        assert np.array_equal(a.model.doc_freq, b.model.doc_freq)
    fa, fb = getattr(a.model, "fit_count", None), getattr(b.model, "fit_count", None)
    assert (fa is None) == (fb is None)
    if fa is not None:
        np.testing.assert_allclose(fa, fb, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.log_proba(texts, ["text"] * len(texts)), b.log_proba(texts), rtol=0, atol=1e-9)


def record_of(classifier) -> list[tuple]:
    """The record without dates: (digest, class, copies) sorted."""
    r = classifier.record
    return sorted(
        (int(r.digest[i, 0]), int(r.digest[i, 1]), classifier.classes[int(r.label[i])], int(r.copies[i]))
        for i in range(len(r))
    )


# -- strategies ------------------------------------------------------------------------

texts_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def corpora(draw):
    """(classes, A, B): A and B labelled texts over `classes`; A has every
    class; no two texts of B, or of A and B, have the same multiset of
    words (the content digest ignores word order), so nothing is learned
    twice; A may hold a document twice (training counts both copies)."""
    classes = draw(st.sampled_from([["ham", "spam"], ["eggs", "ham", "spam"]]))
    texts = draw(
        st.lists(texts_st, min_size=len(classes) + 1, max_size=12, unique_by=lambda t: tuple(sorted(t.split())))
    )
    n_a = draw(st.integers(len(classes), len(texts) - 1))
    labels = classes + draw(st.lists(st.sampled_from(classes), min_size=len(texts) - len(classes), max_size=len(texts)))
    pairs = list(zip(texts, labels[: len(texts)]))
    a, b = pairs[:n_a], pairs[n_a:]
    if draw(st.booleans()):  # a second copy of a document of A
        a.append(a[draw(st.integers(0, len(a) - 1))])
    return classes, a, b


# -- learn == train on more; forget == train on less; move == relabel ----------------


@pytest.mark.parametrize("kind", sorted(KINDS))
@PROPERTY
@given(corpora())
def test_learn_forget_and_move_are_exact(kind, corpus):
    fields = KINDS[kind]
    _, a, b = corpus
    base = trained(a, **fields)
    both = trained(a + b, **fields)
    learned, outcome = learning.learn(base, analysed(base, b))
    assert outcome.learned == len(b) and outcome.already == 0 and not outcome.moved
    assert_same_model(learned, both)
    assert record_of(learned) == record_of(both)
    assert learned.meta["n_documents"] == len(a) + len(b)

    forgotten, outcome = learning.forget(learned, analysed(learned, b))
    assert outcome.forgotten == len(b)
    assert_same_model(forgotten, base)  # the vocabulary shrinks back too
    assert record_of(forgotten) == record_of(base)

    # moving one document of A (all its copies) into another class == training with its new label
    text, old = a[-1]
    new = next(c for c in base.classes if c != old)
    others = [p for p in a if sorted(p[0].split()) != sorted(text.split())]
    assume(any(label == old for _, label in others))  # the old class keeps a document
    moved, outcome = learning.learn(base, analysed(base, [(text, new)]))
    assert outcome.moved == {old: 1} and outcome.learned == 0
    relabelled = trained(others + [(text, new)], **fields)
    assert_same_model(moved, relabelled)
    assert record_of(moved) == record_of(relabelled)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_duplicates_in_a_corpus_count_every_copy_and_forget_removes_all(kind):
    fields = KINDS[kind]
    pairs = [("apple bread", "ham"), ("cider dough", "spam"), ("eagle fjord fjord", "spam"), ("grape", "ham")]
    twice = pairs + [("eagle fjord fjord", "spam")]  # the same document again
    model = trained(twice, **fields)
    assert model.model.class_count.tolist() == [2, 3]
    entries = record_of(model)
    assert len(entries) == 4 and sorted(e[3] for e in entries) == [1, 1, 1, 2]
    dup = next(e for e in entries if e[3] == 2)
    assert dup[2] == "spam"
    # learning it again in the same class: already there, nothing changes
    again, outcome = learning.learn(model, analysed(model, [("eagle fjord fjord", "spam")]))
    assert again is model and outcome.already == 1
    # forgetting it once takes both copies away
    forgotten, outcome = learning.forget(model, analysed(model, [("eagle fjord fjord", "spam")]))
    assert outcome.forgotten == 1
    without = trained(pairs[:2] + pairs[3:], **fields)
    assert_same_model(forgotten, without)
    assert record_of(forgotten) == record_of(without)
    # moving it moves both copies, and learns it once in its new class
    moved, outcome = learning.learn(model, analysed(model, [("eagle fjord fjord", "ham")]))
    assert outcome.moved == {"spam": 1} and moved.model.class_count.tolist() == [3, 1]
    assert_same_model(moved, trained(pairs[:2] + pairs[3:] + [("eagle fjord fjord", "ham")], **fields))


# -- the record's answers --------------------------------------------------------------

PAIRS = [
    ("apple bread cider", "ham"),
    ("dough eagle", "ham"),
    ("fjord grape", "spam"),
    ("honey igloo igloo", "spam"),
    ("apple honey", "spam"),
]


def test_relearning_in_the_same_class_changes_nothing():
    model = trained(PAIRS)
    same, outcome = learning.learn(model, analysed(model, [("apple bread cider", "ham")]))
    assert same is model
    assert (outcome.learned, outcome.already, outcome.moved) == (0, 1, {})
    # a document given twice in one run is learned once
    twice, outcome = learning.learn(model, analysed(model, [("new words here", "spam")] * 2))
    assert (outcome.learned, outcome.already) == (1, 1)
    assert twice.model.class_count.tolist() == [2, 4]


def test_learning_in_another_class_moves():
    model = trained(PAIRS)
    moved, outcome = learning.learn(model, analysed(model, [("dough eagle", "spam")]))
    assert outcome.moved == {"ham": 1} and outcome.learned == 0 and outcome.already == 0
    assert moved.model.class_count.tolist() == [1, 4]
    assert_same_model(moved, trained([PAIRS[0], ("dough eagle", "spam"), *PAIRS[2:]]))


def test_forgetting_what_was_never_learned_is_refused_and_changes_nothing():
    model = trained(PAIRS)
    before = modelfile.to_payload(model)
    with pytest.raises(NbcliError, match="was never learned as ham.*record does not hold it") as info:
        learning.forget(model, analysed(model, [("something else", "ham")]))
    assert "\n" not in str(info.value)
    # in the wrong class: the error names the class it was learned as
    with pytest.raises(NbcliError, match=r"never learned as ham \(it was learned as spam\)") as info:
        learning.forget(model, analysed(model, [("fjord grape", "ham")]))
    # the library names the parameter; the command line its flag (tests/cli/test_cli_learning.py too)
    assert info.value.hint == "use labels spam"
    assert in_flag_terms(info.value).hint == "use --class spam"
    # one bad document among good ones: nothing at all is forgotten
    with pytest.raises(NbcliError):
        learning.forget(model, analysed(model, [("dough eagle", "ham"), ("never seen", "ham")]))
    after = modelfile.to_payload(model)
    assert_payloads_equal(before, after)


def test_learning_a_new_class_adds_it():
    model = trained(PAIRS)
    grown, outcome = learning.learn(model, analysed(model, [("cider cider", "eggs")]))
    assert grown.classes == ["eggs", "ham", "spam"] and outcome.learned == 1
    assert_same_model(grown, trained(PAIRS + [("cider cider", "eggs")]))


# -- what cannot be learned exactly -----------------------------------------------------


@pytest.mark.parametrize(
    "fields, parameter, flag",
    [
        ({"min_df": 2}, "min_df", "--min-df"),
        ({"max_df": 0.9}, "max_df", "--max-df"),
        ({"max_features": 5}, "max_features", "--max-features"),
        ({"select": 3}, "select", "--select"),
        ({"kind": "complement", "idf": True, "tf_log": True}, "idf", "--idf"),
        ({"kind": "complement", "idf": True, "length_norm": True}, "idf", "--idf"),
    ],
)
def test_check_learnable_refuses_models_that_cannot_learn_exactly(fields, parameter, flag):
    texts, labels = make_docs(60, seed=3, classes=["ham", "spam"])
    model = trained(list(zip(texts, labels)), **fields)
    with pytest.raises(NbcliError) as info:
        learning.check_learnable(model, "m.nb")
    message = str(info.value)
    # the library names the parameter, the command line (and spamd's TELL reply) the flag
    assert parameter in message and "--" not in message
    assert message.startswith("m.nb ") and "\n" not in message
    assert flag in str(in_flag_terms(info.value)) and str(in_flag_terms(info.value)).startswith("m.nb ")
    with pytest.raises(NbcliError):
        learning.learn(model, analysed(model, [("apple", "ham")]))
    with pytest.raises(NbcliError):
        learning.merge([model, model], ["a.nb", "b.nb"])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_is_learnable(kind):
    learning.check_learnable(trained(PAIRS, **KINDS[kind]))


# -- merge ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_merging_two_halves_is_training_on_the_whole(kind):
    fields = KINDS[kind]
    texts, labels = make_docs(80, seed=5, classes=["ham", "spam"])
    pairs = list(zip(texts, labels))
    left, right = trained(pairs[:40], **fields), trained(pairs[40:], **fields)
    merged = learning.merge([left, right], ["left.nb", "right.nb"])
    whole = trained(pairs, **fields)
    test_texts, _ = make_docs(30, seed=6, classes=["ham", "spam"])
    assert_same_model(merged, whole, test_texts)
    assert len(merged.record) == len(left.record) + len(right.record) == len(whole.record)
    assert record_of(merged) == record_of(whole)
    assert merged.meta["merged_from"] == ["left.nb", "right.nb"]


@pytest.mark.parametrize(
    "right_pairs, right_fields, named",
    [
        ([("apple", "ham"), ("bread", "eggs")], {}, "classes (ham, spam against eggs, ham)"),
        (PAIRS, {"ngrams": 2}, "analyzer option ngrams (1 against 2)"),
        (PAIRS, {"alpha": 2.0}, "model option alpha"),
        (PAIRS, {"kind": "bernoulli"}, "event model"),
    ],
)
def test_merge_refuses_models_trained_differently(right_pairs, right_fields, named):
    left, right = trained(PAIRS, alpha=0.5), trained(right_pairs, **{"alpha": 0.5, **right_fields})
    with pytest.raises(NbcliError) as info:
        learning.merge([left, right], ["a.nb", "b.nb"])
    message = str(info.value)
    assert message.startswith("a.nb and b.nb differ in ") and named in message and "\n" not in message


# -- dump and load ------------------------------------------------------------------------


def assert_payloads_equal(a: dict, b: dict):
    assert sorted(a) == sorted(b)
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray), key
            assert x.dtype == y.dtype and np.array_equal(x, y), key
        else:
            assert x == y, key


def round_trip(classifier):
    text = "\n".join(dump_lines(classifier)) + "\n"
    return load_lines(text.splitlines(keepends=True)), text


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_dump_load_gives_the_identical_model(kind):
    texts, labels = make_docs(60, seed=7, classes=["ham", "spam"])
    model = trained(list(zip(texts, labels)), **KINDS[kind])
    loaded, text = round_trip(model)
    assert_payloads_equal(modelfile.to_payload(model), modelfile.to_payload(loaded))
    assert "\n".join(dump_lines(loaded)) + "\n" == text


def test_dump_load_of_a_learned_and_pruned_model():
    texts, labels = make_docs(60, seed=8, classes=["ham", "spam"])
    model = trained(list(zip(texts, labels)), kind="complement", tf_log=True, length_norm=True)
    more, more_labels = make_docs(10, seed=9, classes=["ham", "spam"])
    model, _ = learning.learn(model, analysed(model, list(zip(more, more_labels))))
    model, report = learning.prune(model, min_count=2)
    assert report["dropped"] > 0 and "pruned" in model.meta
    loaded, _ = round_trip(model)
    assert_payloads_equal(modelfile.to_payload(model), modelfile.to_payload(loaded))


@pytest.fixture(scope="module")
def dump_text():
    model = trained(PAIRS + [("apple bread", "spam")], kind="bernoulli")
    return list(dump_lines(model))


def load_error(lines) -> NbcliError:
    with pytest.raises(NbcliError) as info:
        load_lines([line + "\n" for line in lines], "m.dump")
    assert "\n" not in str(info.value)
    return info.value


def test_load_refuses_damaged_text_naming_the_line(dump_text):
    n_terms = json.loads(dump_text[0])["terms"]
    assert "line 4: the text ends early" in str(load_error(dump_text[:3]))
    assert "line 1: the text ends early" in str(load_error([]))
    bad = list(dump_text)
    bad[2] = json.dumps([json.loads(bad[2])[0], [1, 2, 3], None, None, "2020-01-01"])
    assert "line 3: expected 2 numbers" in str(load_error(bad))
    bad = list(dump_text)
    bad[1] = bad[1][:-3]
    assert "line 2: not a JSON line" in str(load_error(bad))
    bad = list(dump_text)
    row = json.loads(bad[2])
    bad[2] = json.dumps([row[0], [float("nan"), 1], row[2], row[3], row[4]])  # json writes NaN
    assert "NaN" in bad[2] and "line 3: expected numbers" in str(load_error(bad))
    bad = list(dump_text)
    row[4] = "yesterday"
    bad[2] = json.dumps(row)
    assert "line 3: bad last-seen date" in str(load_error(bad))
    missing = str(load_error(dump_text[:1] + dump_text[2:]))  # one term line missing: a record line comes early
    assert f"line {n_terms + 1}: expected a JSON array" in missing
    assert "more lines than the header says" in str(load_error(dump_text + [dump_text[-1]]))
    record = json.loads(dump_text[-1])
    record["class"] = "eggs"
    assert "bad record line" in str(load_error(dump_text[:-1] + [json.dumps(record)]))
    assert "not an nbcli dump" in str(load_error(['{"hello": 1}']))


@pytest.mark.parametrize("count", [1e30, 2**63, 1.5, -1])
def test_load_refuses_a_count_that_is_not_a_whole_number_in_range(dump_text, count):
    header = json.loads(dump_text[0])
    header["class_count"][0] = count
    assert "line 1: bad count" in str(load_error([json.dumps(header), *dump_text[1:]]))
    row = json.loads(dump_text[1])
    row[1][0] = count
    assert "line 2: bad count" in str(load_error([dump_text[0], json.dumps(row), *dump_text[2:]]))
    record = json.loads(dump_text[-1])
    record["copies"] = count
    assert f"line {len(dump_text)}: bad record line: copies" in str(load_error([*dump_text[:-1], json.dumps(record)]))


def test_load_refuses_a_record_line_given_twice(dump_text):
    header = json.loads(dump_text[0])
    header["record"] += 1
    lines = [json.dumps(header), *dump_text[1:], dump_text[-1]]
    message = str(load_error(lines))
    assert f"line {len(lines)}: the record has document" in message and f"again (line {len(lines) - 1})" in message


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_load_of_mutated_dumps_raises_only_nbcli_errors(dump_text, data):
    lines = list(dump_text)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["delete", "drop_char", "replace_char", "insert", "swap", "duplicate"]))
        line = lines[i]
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, line)
        elif op == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif line:
            k = data.draw(st.integers(0, len(line) - 1))
            char = data.draw(st.sampled_from(list('0123456789-.e"[]{},:nullNaN x\\') + ["\u00e9", "\x00"]))
            if op == "drop_char":
                lines[i] = line[:k] + line[k + 1 :]
            elif op == "replace_char":
                lines[i] = line[:k] + char + line[k + 1 :]
            else:
                lines[i] = line[:k] + char + line[k:]
        if not lines:
            break
    try:
        loaded = load_lines([line + "\n" for line in lines], "m.dump")
    except NbcliError as exc:
        assert "\n" not in str(exc)
    else:
        assert loaded.classes  # a mutation that still reads as a dump gives a model


# -- prune ------------------------------------------------------------------------------


def test_prune_min_count_keeps_exactly_the_frequent_terms():
    texts, labels = make_docs(80, seed=10, classes=["ham", "spam"])
    model = trained(list(zip(texts, labels)))
    total = np.asarray(model.model.feature_count).sum(axis=0)
    pruned, report = learning.prune(model, min_count=3)
    kept = set(np.array(terms(model))[total >= 3].tolist())
    assert set(terms(pruned)) == kept and report == {
        "terms": len(total),
        "kept": len(kept),
        "dropped": len(total) - len(kept),
    }
    assert pruned.meta["pruned"]["min_count"] == 3
    assert np.array_equal(pruned.model.class_count, model.model.class_count)
    assert pruned.log_proba(texts[:5]).shape == (5, 2)  # still classifies
    assert np.isfinite(pruned.log_proba(texts[:5])).all()


def test_prune_max_terms_keeps_the_most_frequent():
    texts, labels = make_docs(80, seed=11, classes=["ham", "spam"])
    model = trained(list(zip(texts, labels)))
    total = np.asarray(model.model.feature_count).sum(axis=0)
    pruned, report = learning.prune(model, max_terms=25)
    assert len(pruned.vocabulary) == 25 and report["kept"] == 25
    kept_totals = np.asarray(pruned.model.feature_count).sum(axis=0)
    dropped = sorted(set(terms(model)) - set(terms(pruned)))
    index = {t: j for j, t in enumerate(terms(model))}
    assert kept_totals.min() >= max(total[index[t]] for t in dropped)
    assert np.isfinite(pruned.log_proba(texts[:3])).all()


def mail(date: str, body: str) -> bytes:
    return f"Date: {date}\nSubject: x\n\n{body}\n".encode()


def test_prune_unseen_since_drops_exactly_the_terms_last_seen_before():
    messages = [
        (mail("Tue, 20 Aug 2002 10:21:23 +0000", "oldword shared"), "ham"),
        (mail("Wed, 21 Aug 2002 10:00:00 +0000", "middleword shared"), "spam"),
        (mail("Mon, 02 Sep 2002 08:00:00 +0000", "newword shared"), "spam"),
        (mail("Sat, 01 Jan 2000 00:00:00 +0000", "ancient newword"), "ham"),
    ]
    docs = [Document(f"m{i}", label, raw, "mail") for i, (raw, label) in enumerate(messages)]
    analyzer_options, options = training_options(alpha=1.0)
    model = train(docs, analyzer_options, options)
    day = learning.parse_day
    last = dict(zip(terms(model), model.last_seen.tolist()))
    assert last["oldword"] == day("2002-08-20") and last["newword"] == day("2002-09-02")
    assert last["ancient"] == day("2000-01-01") and last["shared"] == day("2002-09-02")
    pruned, report = learning.prune(model, unseen_since=day("2002-08-21"))
    expected = {t for t, d in last.items() if d >= day("2002-08-21")}
    assert set(terms(pruned)) == expected and report["dropped"] == len(last) - len(expected)
    assert {"middleword", "newword", "shared"} <= expected and not {"oldword", "ancient"} & expected
    assert pruned.meta["pruned"]["unseen_since"] == "2002-08-21"
    assert np.isfinite(pruned.log_proba([mail("Tue, 20 Aug 2002 10:21:23 +0000", "oldword newword")])).all()
    # learning a newer message brings the day of its terms forward
    later, _ = learning.learn(
        model,
        analyse_for_learning(
            model.analyzer, [Document("n", "ham", mail("Sun, 01 Jun 2003 00:00:00 +0000", "oldword"), "mail")]
        ),
    )
    assert dict(zip(terms(later), later.last_seen.tolist()))["oldword"] == day("2003-06-01")


def test_prune_refuses_to_drop_everything_and_keeps_a_model_it_cannot_shrink():
    model = trained(PAIRS)
    with pytest.raises(NbcliError, match="every term"):
        learning.prune(model, min_count=1000)
    same, report = learning.prune(model, min_count=1)
    assert same is model and report["dropped"] == 0


def test_forgetting_after_pruning_never_goes_below_zero():
    model = trained(PAIRS + [("apple apple apple", "ham")])
    pruned, _ = learning.prune(model, min_count=3)
    assert terms(pruned) == ["apple"]
    forgotten, _ = learning.forget(pruned, analysed(pruned, [("fjord grape", "spam"), ("apple bread cider", "ham")]))
    assert (np.asarray(forgotten.model.feature_count) >= 0).all()
    assert forgotten.model.class_count.tolist() == [2, 2]


# -- create from nothing -------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_create_then_learn_equals_training_on_both(kind):
    fields = {"alpha": 0.5, **KINDS[kind]}
    if "m_estimate" in fields:
        del fields["alpha"]
    if fields.get("estimate") == "map":
        fields["alpha"] = 2.0
    fields["unknown"] = "skip" if fields.get("kind") in ("bernoulli", "complement") else "smooth"
    texts, labels = make_docs(40, seed=12, classes=["ham", "spam"])
    pairs = list(zip(texts, labels))
    spam = [p for p in pairs if p[1] == "spam"]
    ham = [p for p in pairs if p[1] == "ham"]
    analyzer_options, options = training_options(**fields)
    from nbcli.text.analyzer import Analyzer

    analyzer = Analyzer(analyzer_options)
    created, outcome = learning.create(
        analyzer_options, options, ["ham", "spam"], analyse_for_learning(analyzer, docs_of(spam))
    )
    assert created.classes == ["ham", "spam"] and created.model.class_count.tolist() == [0, len(spam)]
    assert outcome.learned == len(spam)
    full, outcome = learning.learn(created, analyse_for_learning(analyzer, docs_of(ham, "h")))
    assert outcome.learned == len(ham)
    test_texts, _ = make_docs(20, seed=13, classes=["ham", "spam"])
    whole = trained(spam + ham, **fields)
    assert_same_model(full, whole, test_texts)
    assert record_of(full) == record_of(whole)


def test_create_refuses_what_cannot_learn():
    from nbcli.text.analyzer import Analyzer

    analyzer_options, _ = training_options()
    docs = analyse_for_learning(Analyzer(analyzer_options), docs_of([("apple", "spam")]))
    for fields in ({"min_df": 2}, {"select": 3}, {"kind": "complement", "idf": True, "tf_log": True}):
        ao, options = training_options(**fields)
        with pytest.raises(NbcliError):
            learning.create(ao, options, ["ham", "spam"], docs)
    ao, options = training_options()
    with pytest.raises(NbcliError, match="at least two classes"):
        learning.create(ao, options, [], docs)
    with pytest.raises(NbcliError, match="no documents"):
        learning.create(ao, options, ["ham", "spam"], analyse_for_learning(Analyzer(ao), []))


@pytest.mark.parametrize(
    "fields",
    [
        {"prior": "ham=0.3,spam=0.7"},
        {"prior_alpha": 1.0},
        {"kind": "complement", "weight_norm": True},
        {"kind": "bernoulli", "prior": "uniform"},
        {"ngrams": 2, "stop_words": "english"},
        {"token_pattern": r"\w+"},
        {"mail": False},
    ],
    ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()),
)
def test_other_options_learn_forget_and_dump_exactly(fields):
    texts, labels = make_docs(60, seed=14, classes=["ham", "spam"])
    pairs = list(zip(texts, labels))
    base = trained(pairs[:40], **fields)
    learned, _ = learning.learn(base, analysed(base, pairs[40:]))
    assert_same_model(learned, trained(pairs, **fields), texts[:10])
    forgotten, _ = learning.forget(learned, analysed(learned, pairs[40:]))
    assert_same_model(forgotten, base, texts[:10])
    loaded, _ = round_trip(learned)
    assert_payloads_equal(modelfile.to_payload(learned), modelfile.to_payload(loaded))


def test_pruning_errors_name_the_parameters_and_the_cli_says_the_flags():
    from nbcli.cli.options import in_flag_terms
    from nbcli.errors import ParameterError

    with pytest.raises(ParameterError) as caught:
        learning.prune(trained(PAIRS), min_count=1000)
    assert caught.value.parameter == "min_count" and "lower min_count or an earlier unseen_since" in str(caught.value)
    assert str(in_flag_terms(caught.value)).endswith("use a lower --min-count or an earlier --unseen-since")
    with pytest.raises(ParameterError) as caught:
        learning.parse_day("yesterday")
    assert str(caught.value) == "unseen_since 'yesterday' is not a date; write it as YYYY-MM-DD"
    assert str(in_flag_terms(caught.value)) == "--unseen-since 'yesterday' is not a date; write it as YYYY-MM-DD"


def test_the_refusals_name_the_parameters_and_the_command_line_their_flags():
    """The library's text names parameters; in_flag_terms (the CLI's error
    boundary, and spamd's TELL replies under `nbcli serve`) the flags.
    tests/cli/test_cli_learning.py checks the command line's lines."""
    from nbcli.fit.table_training import fit_rows
    from nbcli.nb.table_classifier import TableColumns
    from nbcli.nb.tables import TableSettings
    from nbcli.text.analyzer import Analyzer

    ao, options = training_options()
    docs = analyse_for_learning(Analyzer(ao), docs_of([("apple", "ham")]))
    with pytest.raises(NbcliError) as info:
        learning.create(ao, options, [], docs)
    assert info.value.hint == "name them with classes, e.g. classes='ham,spam' (as_spam and as_ham imply them)"
    assert (
        in_flag_terms(info.value).hint
        == "name them with --classes, e.g. --classes ham,spam (--spam and --ham imply them)"
    )

    model = trained(PAIRS)
    with pytest.raises(NbcliError) as info:
        learning.forget(model, analysed(model, [("dough eagle", "eggs")]))
    assert str(info.value) == (
        "the model has no class eggs (its classes: ham, spam); nothing was forgotten; "
        "give labels one of them, or no labels to forget each document from the class it was learned in"
    )
    assert in_flag_terms(info.value).hint == (
        "give --class one of them, or no --class to forget each document from the class it was learned in"
    )

    rows = [Document(f"r{i}", "ab"[i % 2], {"x": str(i % 2 + i / 100), "c": "xy"[i % 2]}) for i in range(12)]
    table_model = fit_rows(rows, TableColumns(), TableSettings(), None, False)
    with pytest.raises(NbcliError) as info:
        learning.prune(table_model, min_count=2)
    assert info.value.hint == "train it again with features naming fewer columns"
    assert in_flag_terms(info.value).hint == "train it again with --features naming fewer columns"


def test_forgetting_every_document_is_refused_and_the_model_stays_readable(tmp_path):
    """Forgetting the last documents wrote a model whose prior was 0/0: the
    file could not be read again ('is corrupt'), by any command. Both ways
    of forgetting (the model rebuilt, the journal's update) refuse it, and
    a document held in two classes, forgotten from both, counts."""
    from conftest import run

    model = trained([("apple banana", "a"), ("cherry durian", "b")])
    docs = analysed(model, [("apple banana", None), ("cherry durian", None)])
    for forgetting in (lambda: learning.forget(model, docs), lambda: learning.learn_update(model, docs, True)):
        with pytest.raises(NbcliError, match="would leave the model with no documents; nothing was forgotten"):
            forgetting()
    assert learning.forget(model, analysed(model, [("apple banana", None)]))[1].forgotten == 1  # one is fine
    folder = tmp_path / "c"
    for cls in ("a", "b"):  # the same document in both classes
        (folder / cls).mkdir(parents=True)
        (folder / cls / "1.txt").write_text("apple banana\n")
    path = tmp_path / "m.nb"
    assert run(["train", folder, "-o", path, "-q"]).exit_code == 0
    result = run(["forget", path, folder / "a" / "1.txt"])
    assert result.exit_code == 1 and "would leave the model with no documents" in result.stderr
    assert run(["info", path]).exit_code == 0
