"""train --unlabeled and nbcli cluster through the commands (issue 18);
the EM math is checked in tests/nb/test_em.py."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from nbcli.store import modelfile

from conftest import run

TOPICS = {
    "sky": "star planet orbit comet galaxy telescope moon nebula",
    "food": "bread butter oven flour recipe sugar salt dough",
    "sport": "goal match keeper striker league pitch referee score",
}
BACKGROUND = "the a of and to in is it that was for on with as".split()


def planted(n_per: int, seed: int, length: int = 30) -> tuple[list[str], list[str]]:
    """Documents of three planted topics: each word from the topic's words
    with probability 0.4, else from a shared background."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for label, words in TOPICS.items():
        words = words.split()
        for _ in range(n_per):
            doc = [
                words[rng.integers(len(words))] if rng.random() < 0.4 else BACKGROUND[rng.integers(13)]
                for _ in range(length)
            ]
            texts.append(" ".join(doc))
            labels.append(label)
    return texts, labels


def write_jsonl(path, texts, labels=None):
    rows = [{"id": f"d{i}", "text": t, **({"label": labels[i]} if labels else {})} for i, t in enumerate(texts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def objectives(stderr: str) -> list[float]:
    return [float(m) for m in re.findall(r"EM: iteration \d+, objective (-?[0-9.e+-]+)", stderr)]


def test_train_with_unlabelled_documents_prints_a_rising_objective(tmp_path):
    texts, labels = planted(60, seed=1, length=12)
    pick = [i for i in range(len(texts)) if i % 60 < 2]  # 2 labelled documents per class
    rest = [i for i in range(len(texts)) if i % 60 >= 2]
    labelled = write_jsonl(tmp_path / "l.jsonl", [texts[i] for i in pick], [labels[i] for i in pick])
    unlabelled = write_jsonl(tmp_path / "u.jsonl", [texts[i] for i in rest])
    model = tmp_path / "em.nb"
    result = run(["train", labelled, "--unlabeled", unlabelled, "--em-weight", "1", "-o", model])
    assert result.exit_code == 0, result.stderr
    js = objectives(result.stderr)
    assert len(js) >= 2 and all(b >= a - 1e-9 * abs(a) for a, b in zip(js, js[1:]))  # never decreases
    assert "2 labelled documents" not in result.stderr and "6 labelled documents and 174 unlabelled" in result.stderr
    info = json.loads(run(["info", model, "--json"]).stdout)
    assert info["em"]["unlabelled_documents"] == 174 and info["em"]["weight"] == 1.0
    plain = tmp_path / "plain.nb"
    assert run(["train", labelled, "-o", plain, "-q", "--calibrate", "none"]).exit_code == 0
    test = write_jsonl(tmp_path / "t.jsonl", *planted(30, seed=9, length=12))
    accuracy = {m: json.loads(run(["eval", m, test, "--json"]).stdout)["accuracy"] for m in (plain, model)}
    assert accuracy[model] > accuracy[plain]  # the unlabelled documents helped (6 labels only)
    # the learned documents' counts and the expected ones are kept apart: learning adds exactly
    from nbcli.nb.counts import Counts

    before = modelfile.load(str(model))
    one = tmp_path / "one.txt"
    one.write_text("comet comet nebula zzzfreshterm")
    result = run(["learn", model, "--class", "sky", one])
    assert result.exit_code == 0, result.stderr
    after = modelfile.load(str(model))
    cb, ca = Counts.of(before), Counts.of(after)
    sky = cb.classes.index("sky")
    assert ca.class_count[sky] == cb.class_count[sky] + 1 and np.array_equal(ca.expected_docs, cb.expected_docs)
    for term, n in (("comet", 2), ("nebula", 1), ("zzzfreshterm", 1)):
        j_after = after.vocabulary.index_of(term)
        j_before = before.vocabulary.index_of(term)
        was = cb.tf[sky, j_before] if j_before >= 0 else 0
        assert ca.tf[sky, j_after] == was + n
        expected_was = cb.expected_tf[:, j_before] if j_before >= 0 else np.zeros(len(cb.classes))
        assert np.array_equal(ca.expected_tf[:, j_after], expected_was)
    assert json.loads(run(["info", model, "--json"]).stdout)["documents"] == 7  # learned documents only
    # forgetting it again gives the model back, to the last bit
    assert run(["forget", model, "--class", "sky", one, "-q"]).exit_code == 0
    assert modelfile.model_id(modelfile.load(str(model))) == modelfile.model_id(before)
    # --from-model re-smooths the sum, the expected counts still apart
    smooth = tmp_path / "smooth.nb"
    assert run(["train", "--from-model", model, "--alpha", "0.5", "-o", smooth, "-q"]).exit_code == 0
    again = modelfile.load(str(smooth))
    assert again.model.alpha == 0.5 and np.array_equal(again.expected[0], before.expected[0])
    result = run(["merge", model, smooth, "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1 and "was trained by EM" in result.stderr
    # a map fitted on held-out documents: the expected counts stay apart, learning still exact
    assert run(["calibrate", model, test, "-q"]).exit_code == 0
    calibrated = modelfile.load(str(model))
    assert calibrated.calibration is not None and np.array_equal(calibrated.expected[1], before.expected[1])
    assert run(["learn", model, "--class", "sky", one, "-q"]).exit_code == 0


def test_em_weight_zero_is_the_labelled_only_model(tmp_path):
    from nbcli.nb import em

    texts, labels = planted(20, seed=2)
    labelled = write_jsonl(tmp_path / "l.jsonl", texts[::5], labels[::5])
    unlabelled = write_jsonl(tmp_path / "u.jsonl", texts[1::5])
    model = tmp_path / "em0.nb"
    assert run(["train", labelled, "--unlabeled", unlabelled, "--em-weight", "0", "-o", model, "-q"]).exit_code == 0
    clf = modelfile.load(str(model))
    assert clf.meta["em"]["iterations"] == 0
    # the labelled counts, untouched by the unlabelled documents (whose terms are in the vocabulary)
    X = clf.counts(texts[::5])
    y = np.array([clf.classes.index(label) for label in labels[::5]])
    want = np.zeros((len(clf.classes), X.shape[1]))
    canonical = X.canonical()
    rows = np.repeat(np.arange(X.shape[0]), np.diff(canonical.indptr))
    np.add.at(want, (y[rows], canonical.indices), canonical.data)
    assert np.array_equal(np.asarray(clf.model.feature_count), want)
    assert isinstance(em.EVENT_MODELS, tuple)


def test_unlabelled_training_refuses_what_it_cannot_do(tmp_path):
    texts, labels = planted(10, seed=3)
    labelled = write_jsonl(tmp_path / "l.jsonl", texts, labels)
    result = run(["train", labelled, "--unlabeled", labelled, "--model", "complement", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1 and "--unlabeled works with --model multinomial or bernoulli" in result.stderr
    result = run(["train", labelled, "--em-weight", "0.5", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 2 and "--em-weight needs --unlabeled" in result.stderr
    result = run(["train", labelled, "--em-tokens", "10", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 2 and "--em-tokens needs --unlabeled" in result.stderr


def test_the_evidence_cap_is_the_default_and_em_tokens_0_the_plain_e_step(tmp_path):
    texts, labels = planted(40, seed=5, length=40)
    pick = [i for i in range(len(texts)) if i % 40 < 2]
    labelled = write_jsonl(tmp_path / "l.jsonl", [texts[i] for i in pick], [labels[i] for i in pick])
    unlabelled = write_jsonl(tmp_path / "u.jsonl", [t for i, t in enumerate(texts) if i % 40 >= 2])
    meta = {}
    for name, extra in (("default", []), ("plain", ["--em-tokens", "0"]), ("ten", ["--em-tokens", "10"])):
        model = tmp_path / f"{name}.nb"
        result = run(["train", labelled, "--unlabeled", unlabelled, *extra, "-o", model])
        assert result.exit_code == 0, result.stderr
        js = objectives(result.stderr)
        assert all(b >= a - 1e-9 * abs(a) for a, b in zip(js, js[1:]))  # the tempered J never decreases either
        meta[name] = modelfile.load(str(model)).meta["em"]
    assert (meta["default"]["e_tokens"], meta["plain"]["e_tokens"], meta["ten"]["e_tokens"]) == (4.0, 0.0, 10.0)
    assert meta["plain"]["objective"] != meta["default"]["objective"]  # 40-token documents: the cap tempers them
    assert modelfile.load(str(tmp_path / "default.nb")).meta["options"]["alpha"] == 1.0  # text: Laplace


def test_em_on_mail_smooths_as_the_mail_model_does(tmp_path):
    from conftest import SAMPLES

    model = tmp_path / "mail.nb"
    mail = SAMPLES / "mail"
    result = run(["train", mail / "test", "--unlabeled", mail / "train", "--model", "multinomial", "-o", model, "-q"])
    assert result.exit_code == 0, result.stderr
    clf = modelfile.load(str(model))
    assert clf.meta["options"]["alpha"] == 0.0001 and clf.meta["em"]["e_tokens"] == 4.0
    assert json.loads(run(["eval", model, mail / "test", "--json"]).stdout)["accuracy"] >= 0.9
    given = tmp_path / "given.nb"
    assert (
        run(
            [
                "train",
                mail / "test",
                "--unlabeled",
                mail / "train",
                "--model",
                "multinomial",
                "--alpha",
                "0.5",
                "-o",
                given,
                "-q",
            ]
        ).exit_code
        == 0
    )
    assert modelfile.load(str(given)).meta["options"]["alpha"] == 0.5


@pytest.mark.parametrize("kind", ["multinomial", "bernoulli"])
def test_cluster_recovers_planted_topics_and_is_reproducible(tmp_path, kind):
    texts, labels = planted(60, seed=4)
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    first, second = tmp_path / "a.nb", tmp_path / "b.nb"
    for model in (first, second):
        result = run(["cluster", corpus, "-k", "3", "--model", kind, "--seed", "7", "-o", model, "-q"])
        assert result.exit_code == 0, result.stderr
    assert (
        json.loads(run(["info", first, "--json"]).stdout)["model_id"]
        == (json.loads(run(["info", second, "--json"]).stdout)["model_id"])
    )  # the same seed, the same clusters
    predicted = [json.loads(line)["label"] for line in run(["predict", first, corpus, "--json"]).stdout.splitlines()]
    assert set(predicted) <= {"cluster1", "cluster2", "cluster3"}
    assert adjusted_rand_score(labels, predicted) >= 0.9
    info = run(["info", first]).stdout
    assert "clusters:    3 (best of 10 restarts, seed 7)" in info
    sizes = re.search(
        r"^sizes:       cluster1 (\d+), cluster2 (\d+), cluster3 (\d+) \(the documents most likely in each; "
        r"the table's documents: expected counts\)$",
        info,
        re.M,
    )
    assert sizes and sorted(int(n) for n in sizes.groups()) == sorted(predicted.count(c) for c in set(predicted))
    assert re.search(r"\b(star|bread|goal|planet|oven|match)\b", info)  # a cluster's top terms are its topic's


def test_a_clustering_prunes_by_its_documents_expected_counts(tmp_path):
    """A clustering's counts are all expected counts (no document is
    labelled): prune counted only the labelled ones, so any --min-count
    'would drop every term'. It counts the expected ones too, and the
    pruned model still finds the topics."""
    texts, labels = planted(60, seed=4)
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    model, pruned = tmp_path / "a.nb", tmp_path / "p.nb"
    assert run(["cluster", corpus, "-k", "3", "--seed", "7", "-o", model, "-q"]).exit_code == 0
    result = run(["prune", model, "--min-count", "90", "-o", pruned, "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert 0 < report["dropped"] and 0 < report["kept"] < report["terms"]
    predicted = [json.loads(line)["label"] for line in run(["predict", pruned, corpus, "--json"]).stdout.splitlines()]
    assert adjusted_rand_score(labels, predicted) >= 0.9


def test_a_clustering_says_why_it_cannot_learn_and_how_to_make_one_that_can(tmp_path):
    """It said 'trained with --min-df', which the user never gave: cluster
    restricts its vocabulary by default."""
    texts, _ = planted(30, seed=5)
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    doc = tmp_path / "d.txt"
    doc.write_text(texts[0] + " and a new word\n")
    model, learnable = tmp_path / "a.nb", tmp_path / "b.nb"
    assert run(["cluster", corpus, "-k", "3", "-o", model, "-q"]).exit_code == 0
    result = run(["learn", model, "--class", "cluster1", doc])
    assert result.exit_code == 1 and "is a clustering whose vocabulary was restricted" in result.stderr
    assert "cluster again with --min-df 1 --max-df 1.0" in result.stderr
    args = ["cluster", corpus, "-k", "3", "--min-df", "1", "--max-df", "1.0", "-o", learnable, "-q"]
    assert run(args).exit_code == 0
    result = run(["learn", learnable, "--class", "cluster1", doc])
    assert result.exit_code == 0 and "learned 1 document(s) as cluster1" in result.stderr


def test_cluster_k_auto_picks_the_planted_number_by_heldout_likelihood(tmp_path):
    texts, _ = planted(50, seed=5)
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    model = tmp_path / "auto.nb"
    result = run(["cluster", corpus, "-k", "auto", "-o", model])
    assert result.exit_code == 0, result.stderr
    found = re.findall(r"k = (\d+): held-out log-likelihood (-?[0-9.]+)", result.stderr)
    heldout = {int(k): float(ll) for k, ll in found}
    assert sorted(heldout) == list(range(1, 11))
    assert max(heldout, key=heldout.get) == 3 and "in 3 clusters" in result.stderr
    assert re.search(r"k = 3: held-out log-likelihood -?[0-9.]+ \(the highest\)", result.stderr)
    assert re.search(r"k = 2: held-out log-likelihood -?[0-9.]+ \(standard error [0-9.]+\)", result.stderr)
    assert (
        "k = 3: the smallest k whose held-out log-likelihood is within one standard error of the highest (k = 3)"
        in (result.stderr)
    )
    assert json.loads(run(["info", model, "--json"]).stdout)["clusters"]["k"] == 3
    line = run(["cluster", corpus, "-k", "1", "-o", model])
    assert line.exit_code == 2 and "2 or more" in line.stderr


def test_em_on_two_workers_is_em_in_one_process(tmp_path):
    texts, labels = planted(120, seed=6, length=12)  # 357 unlabelled documents: enough to go parallel
    pick = [i for i in range(len(texts)) if i % 120 < 1]
    labelled = write_jsonl(tmp_path / "l.jsonl", [texts[i] for i in pick], [labels[i] for i in pick])
    unlabelled = write_jsonl(tmp_path / "u.jsonl", [t for i, t in enumerate(texts) if i % 120 >= 1])
    seen = []
    for jobs in ("1", "2"):
        model = tmp_path / f"j{jobs}.nb"
        result = run(["train", labelled, "--unlabeled", unlabelled, "--em-weight", "0.5", "--jobs", jobs, "-o", model])
        assert result.exit_code == 0, result.stderr
        info = json.loads(run(["info", model, "--json"]).stdout)
        seen.append((info["model_id"], objectives(result.stderr)))
    assert seen[0] == seen[1]  # the same model and objectives to the last digit printed


def test_several_components_per_class_answer_for_the_classes(tmp_path):
    texts, labels = planted(40, seed=8, length=12)
    labelled = write_jsonl(tmp_path / "l.jsonl", texts[::10], labels[::10])
    unlabelled = write_jsonl(tmp_path / "u.jsonl", [t for i, t in enumerate(texts) if i % 10])
    model = tmp_path / "k2.nb"
    result = run(["train", labelled, "--unlabeled", unlabelled, "--em-components", "2", "-o", model, "-q"])
    assert result.exit_code == 0, result.stderr
    clf = modelfile.load(str(model))
    assert clf.classes == ["food", "sky", "sport"]
    assert clf.model.classes == ["food~01", "food~02", "sky~01", "sky~02", "sport~01", "sport~02"]
    records = [json.loads(line) for line in run(["predict", model, labelled, "--json"]).stdout.splitlines()]
    for r in records:
        assert set(r["probabilities"]) == {"food", "sky", "sport"}
        assert sum(r["probabilities"].values()) == pytest.approx(1.0)
    # a class's probability is the sum of its components' posteriors
    per_component = np.exp(clf.model.predict_log_proba(clf.counts(texts[:3])))
    assert np.allclose(np.exp(clf.score(texts[:3]))[:, 0], per_component[:, :2].sum(axis=1))
    assert "components:  2 per class of food, sky, sport" in run(["info", model]).stdout


def test_cluster_the_rows_of_a_table(tmp_path):
    rng = np.random.default_rng(11)
    truth = np.repeat(np.arange(3), 60)
    colours = np.array(["red", "green", "blue"])
    lines = ["size,colour,weight,hidden"]
    for t in truth:
        colour = colours[t] if rng.random() < 0.8 else colours[rng.integers(3)]
        size = "" if rng.random() < 0.05 else f"{rng.normal(10 * t, 1.5):.3f}"  # a few missing cells
        lines.append(f"{size},{colour},{rng.normal(50 - 8 * t, 2):.3f},k{t}")
    table = tmp_path / "rows.csv"
    table.write_text("\n".join(lines) + "\n")
    model = tmp_path / "rows.nb"
    args = ["cluster", table, "--features", "all", "--ignore-fields", "hidden", "-k", "3", "--seed", "2", "-o", model]
    result = run(args)
    assert result.exit_code == 0, result.stderr
    assert "180 rows in 3 clusters" in result.stderr
    assert "EM: the most likely of 5 restart(s)" in result.stderr  # soft EM (tests/nb/test_table_em.py)
    predicted = [line.split("\t")[1] for line in run(["predict", model, table]).stdout.splitlines()]
    assert adjusted_rand_score(truth, predicted) >= 0.9
    info = json.loads(run(["info", model, "--json"]).stdout)
    assert [c["kind"] for c in info["columns"]] == ["gaussian", "categorical", "gaussian"]
    again = tmp_path / "again.nb"
    assert run([*args[:-1], again, "-q"]).exit_code == 0
    assert json.loads(run(["info", again, "--json"]).stdout)["model_id"] == info["model_id"]  # reproducible
    auto = run(["cluster", table, "--features", "all", "--ignore-fields", "hidden", "-k", "auto", "-o", model])
    assert auto.exit_code == 0 and "in 3 clusters" in auto.stderr


def test_cluster_says_when_there_is_nothing_to_cluster(tmp_path):
    """Issue 25, item 21: 20 empty documents were "clustered" 10 + 10, and
    20 identical ones split into k equal clusters, without a word."""
    empty = write_jsonl(tmp_path / "empty.jsonl", [""] * 20)
    result = run(["cluster", empty, "-k", "2", "-o", tmp_path / "e.nb"])
    assert result.exit_code == 1 and not (tmp_path / "e.nb").exists()
    assert result.stderr.startswith("nbcli: error: none of the 20 documents has a term: nothing to cluster")
    assert result.stderr.count("\n") == 1
    same = write_jsonl(tmp_path / "same.jsonl", ["star planet orbit"] * 20)
    for k in ("2", "auto"):
        result = run(["cluster", same, "-k", k, "-o", tmp_path / "s.nb"])
        assert result.exit_code == 1 and not (tmp_path / "s.nb").exists()
        assert result.stderr == (
            "nbcli: error: the 20 documents are all the same: nothing to cluster; give different documents\n"
        )


def test_k_is_at_most_the_distinct_documents(tmp_path):
    texts = ["star planet orbit"] * 10 + ["bread butter oven"] * 10 + ["goal match keeper"] * 10
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    result = run(["cluster", corpus, "-k", "4", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1 and not (tmp_path / "m.nb").exists()
    assert result.stderr == (
        "nbcli: error: -k 4: give 2 to 3 clusters (30 documents, 3 distinct: identical ones go to one cluster)\n"
    )
    result = run(["cluster", corpus, "-k", "3", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 0, result.stderr
    assert "30 documents in 3 clusters (most likely in each: cluster1 10, cluster2 10, cluster3 10)" in result.stderr


def test_k_is_bounded_by_the_memory_it_needs(tmp_path, monkeypatch):
    """Issue 25, item 19: -k 2000 took 7 GB; k clusters need about k x
    terms dense cells: refused in one line before anything is allocated."""
    from nbcli.run import semi

    rng = np.random.default_rng(3)
    texts = [" ".join(f"w{w}" for w in rng.integers(0, 100_000, 40)) for _ in range(300)]
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    n_terms = len({w for t in texts for w in t.split()})
    table = 200 * n_terms * 8  # one float64 (k, terms) table: EM holds several
    monkeypatch.setattr(semi, "available_memory", lambda: table, raising=False)
    every_term = ["--min-df", "1", "--max-df", "1.0"]
    result = run(["cluster", corpus, "-k", "200", *every_term, "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1 and not (tmp_path / "m.nb").exists()
    line = result.stderr
    assert line.startswith(f"nbcli: error: -k 200: 200 clusters of 300 documents and {n_terms} terms need about ")
    assert "give a smaller -k (at most about " in line and line.count("\n") == 1
    result = run(["cluster", corpus, "-k", "20", *every_term, "--restarts", "1", "-o", tmp_path / "m.nb", "-q"])
    assert result.exit_code == 0, result.stderr


def test_the_summary_line_names_at_most_ten_clusters(tmp_path):
    texts, _ = planted(20, seed=2)
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    result = run(["cluster", corpus, "-k", "25", "--restarts", "1", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 0, result.stderr
    line = [s for s in result.stderr.splitlines() if "clusters (" in s][0]
    assert "cluster10 " in line and "cluster11" not in line
    assert re.search(
        r"in 25 clusters \(most likely in each: cluster1 \d+, .*, cluster10 \d+, and 15 more; 0 empty\)$", line
    )


def test_unlabelled_documents_already_labelled_are_skipped(tmp_path):
    """Issue 25, item 21: the labelled corpus given again as --unlabeled
    was counted twice, silently. A document whose content digest (the
    record's identity) is among the labelled ones is skipped, with a
    warning counting them: the model is the one without them."""
    texts, labels = planted(30, seed=9, length=12)
    labelled = write_jsonl(tmp_path / "l.jsonl", texts[::3], labels[::3])
    others = [t for i, t in enumerate(texts) if i % 3]
    unlabelled = write_jsonl(tmp_path / "u.jsonl", others)
    both = write_jsonl(tmp_path / "both.jsonl", texts)  # the labelled ones again, without their labels
    ids = []
    for name, extra in (("plain", unlabelled), ("again", both)):
        model = tmp_path / f"{name}.nb"
        result = run(["train", labelled, "--unlabeled", extra, "-o", model])
        assert result.exit_code == 0, result.stderr
        ids.append(json.loads(run(["info", model, "--json"]).stdout)["model_id"])
        skipped = f"warning: --unlabeled: skipped {len(texts[::3])} documents also in the labelled corpus"
        assert (skipped in result.stderr) == (name == "again")
    assert ids[0] == ids[1]
    assert modelfile.load(str(tmp_path / "again.nb")).meta["em"]["unlabelled_documents"] == len(others)


def test_cluster_takes_trains_vocabulary_options(tmp_path):
    """The clustering defaults drop English stop words and terms in under 2 documents or over half of them;
    train's vocabulary options change that, and are refused for the rows of a table."""
    texts, _ = planted(20, seed=9)
    texts = [t + f" the and unique{i}" for i, t in enumerate(texts)]
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)

    def vocabulary(*options):
        model = tmp_path / "v.nb"
        result = run(["cluster", corpus, "-k", "3", *options, "-o", model, "-q"])
        assert result.exit_code == 0, result.stderr
        vocab = modelfile.load(str(model)).vocabulary
        return set(vocab.terms(range(len(vocab))))

    default = vocabulary()
    assert "the" not in default and "unique3" not in default and "star" in default
    everything = vocabulary("--stop-words", "none", "--min-df", "1", "--max-df", "1.0")
    assert {"the", "and", "unique3", "star"} <= everything
    assert "the" in vocabulary("--stop-words", "none", "--max-df", "1.0") and "unique3" not in default
    assert any(" " in term for term in vocabulary("--ngrams", "2"))
    assert len(vocabulary("--max-features", "5")) == 5
    table = tmp_path / "t.csv"
    table.write_text("x,y\n1,a\n2,b\n3,a\n4,b\n")
    result = run(["cluster", table, "--features", "x,y", "-k", "2", "--stop-words", "none", "-o", tmp_path / "t.nb"])
    assert result.exit_code == 2 and "--stop-words is for documents" in result.stderr


@pytest.mark.parametrize("k", [2, 9, 25])
def test_every_cluster_written_can_classify(tmp_path, k):
    """Issue 27: runs ended with an empty cluster and exit 0, and predict then refused the model. Every cluster
    of a written model now holds documents, and predict answers with the clusters."""
    texts, _ = planted(10, seed=k)
    corpus = write_jsonl(tmp_path / "c.jsonl", texts)
    model = tmp_path / "m.nb"
    result = run(["cluster", corpus, "-k", str(k), "--restarts", "2", "-o", model])
    assert result.exit_code == 0, result.stderr
    assert "0 empty" in result.stderr or k <= 10
    info = json.loads(run(["info", model, "--json"]).stdout)
    assert all(c["documents"] > 0 for c in info["classes"]) and len(info["classes"]) == k
    assert min(info["clusters"]["sizes"]) >= 1 and sum(info["clusters"]["sizes"]) == 30
    # a cluster's documents are expected counts, shown rounded (they were truncated: 231.97 showed as 231)
    expected = modelfile.load(str(model)).model.class_count
    assert [c["documents"] for c in info["classes"]] == [round(float(n)) for n in expected]
    predicted = run(["predict", model, corpus])
    assert predicted.exit_code == 0, predicted.stderr


def test_a_table_clustering_says_when_there_is_nothing_to_cluster(tmp_path):
    """Three identical rows were "clustered" 1 + 2 (predict then sent every row to one cluster), and a table of
    missing cells fitted with objective 0: refused in one line, as documents are."""
    same = tmp_path / "r3.csv"
    same.write_text("a,b\n1,x\n1,x\n1,x\n")
    two = tmp_path / "r2.csv"
    two.write_text("a,b\n1,x\n1,x\n2,y\n")
    missing = tmp_path / "miss.csv"
    missing.write_text("a,b\n?,NA\n,?\nNA,\n")
    for table, k, said in (
        (same, "2", "the 3 rows are all the same: nothing to cluster; give different rows"),
        (same, "auto", "the 3 rows are all the same: nothing to cluster; give different rows"),
        (two, "3", "-k 3: give 2 to 2 clusters (3 rows, 2 distinct: identical ones go to one cluster)"),
        (missing, "2", "none of the 3 rows has a cell that is not missing: nothing to cluster; check the table"),
    ):
        result = run(["cluster", table, "--features", "all", "-k", k, "-o", tmp_path / "m.nb"])
        assert result.exit_code == 1 and not (tmp_path / "m.nb").exists()
        assert result.stderr.startswith(f"nbcli: error: {said}") and result.stderr.count("\n") == 1, result.stderr


def test_a_table_clustering_takes_alpha_and_writes_no_cluster_no_row_prefers(tmp_path):
    """--alpha was dropped on the way to the table (every table clustered with alpha 1): on two distinct rows
    of three, alpha 1 draws the lone row's cluster to the other, which then held no row (written all the same);
    it is refused now, and --alpha 0.01 keeps the two clusters apart."""
    table = tmp_path / "r2.csv"
    table.write_text("a,b\n1,x\n1,x\n2,y\n")
    model = tmp_path / "m.nb"
    result = run(["cluster", table, "--features", "all", "-k", "2", "-o", model])
    assert result.exit_code == 1 and not model.exists() and result.stderr.count("\n") == 1
    assert "EM left every row most probable in one cluster" in result.stderr and "--alpha" in result.stderr
    result = run(["cluster", table, "--features", "all", "-k", "2", "--alpha", "0.01", "-o", model])
    assert result.exit_code == 0 and "3 rows in 2 clusters (cluster1 2, cluster2 1)" in result.stderr
    predicted = [line.split("\t")[1] for line in run(["predict", model, table]).stdout.splitlines()]
    assert predicted == ["cluster1", "cluster1", "cluster2"]


@pytest.mark.parametrize(
    "option", [["--model", "bernoulli"], ["--model", "multinomial"], ["--text-field", "a"], ["--ngrams", "2"]]
)
def test_the_document_options_are_refused_for_a_table(tmp_path, option):
    """--model bernoulli clustered the table with its table model, silently; every option only documents use is
    refused with --features, as the vocabulary options were."""
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,x\n2,y\n3,x\n4,y\n")
    result = run(["cluster", table, "--features", "all", "-k", "2", *option, "-o", tmp_path / "t.nb"])
    assert result.exit_code == 2 and not (tmp_path / "t.nb").exists()
    assert f"{option[0]} is for documents; the rows of a table have columns" in result.stderr


@pytest.mark.parametrize(
    "option", [["--min-df", "2"], ["--prior", "uniform"], ["--select", "50"], ["--estimate", "map"]]
)
def test_train_unlabeled_refuses_the_options_em_has_no_place_for(tmp_path, option):
    """They were ignored: the same model whatever they said."""
    texts, labels = planted(20, seed=2)
    labelled = write_jsonl(tmp_path / "l.jsonl", texts[::5], labels[::5])
    unlabelled = write_jsonl(tmp_path / "u.jsonl", texts[1::5])
    result = run(["train", labelled, "--unlabeled", unlabelled, *option, "-o", tmp_path / "m.nb"])
    assert result.exit_code == 2 and f"{option[0]} needs a model trained without --unlabeled" in result.stderr
    assert not (tmp_path / "m.nb").exists()
