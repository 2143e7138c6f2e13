"""--jobs: the same model and the same output whatever the number of workers,
and training that reads its documents lazily."""

from __future__ import annotations

import numpy as np

from nbcli.fit.settings import TrainOptions
from nbcli.run.pipeline import train
from nbcli.store import modelfile
from nbcli.text.analyzer import AnalyzerOptions
from nbcli.text.sources import Document

from conftest import SAMPLES, make_docs, run

MAIL = SAMPLES / "mail"


def _same_model(a, b):
    assert a.classes == b.classes
    assert np.array_equal(a.model.class_count, b.model.class_count)
    assert np.array_equal(a.vocabulary.hashes, b.vocabulary.hashes)
    assert a.vocabulary.terms(range(len(a.vocabulary))) == b.vocabulary.terms(range(len(b.vocabulary)))
    assert np.array_equal(np.asarray(a.model.feature_count), np.asarray(b.model.feature_count))
    assert np.array_equal(a.model.weights, b.model.weights)


def test_training_with_one_or_two_workers_gives_the_same_model(tmp_path):
    models = {}
    for jobs in (1, 2, 0):
        path = tmp_path / f"j{jobs}.nb"
        result = run(["train", MAIL / "train", "-o", path, "-q", "--jobs", jobs])
        assert result.exit_code == 0, result.stderr
        models[jobs] = modelfile.load(str(path))
    _same_model(models[1], models[2])
    _same_model(models[1], models[0])


def test_predict_and_filter_output_do_not_depend_on_jobs(tmp_path):
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q"]).exit_code == 0
    outputs = {}
    for jobs in (1, 2):
        predicted = run(["predict", model, MAIL / "test", "--json", "--jobs", jobs])
        filtered = run(["filter", model, MAIL / "inbox.mbox", "--jobs", jobs])
        # explanations are computed in the workers, from the same analysis
        explained = run(["predict", model, MAIL / "test", "--explain", "4", "--jobs", jobs])
        evidence = run(["filter", model, MAIL / "inbox.mbox", "--explain", "4", "--jobs", jobs])
        assert all(r.exit_code == 0 for r in (predicted, filtered, explained, evidence))
        outputs[jobs] = (predicted.stdout, filtered.stdout_bytes, explained.stdout, evidence.stdout_bytes)
    assert outputs[1] == outputs[2]
    assert outputs[2][3].count(b"X-NB-Evidence:") == outputs[2][1].count(b"X-NB-Class:") > 0
    # input order is kept: ids come out in the order the files are read
    ids = [line.split('"id": "')[1].split('"')[0] for line in outputs[2][0].splitlines()]
    assert len(ids) == len(list((MAIL / "test").rglob("*.eml"))) and ids == sorted(ids)


def test_training_consumes_documents_lazily():
    """Training never holds the corpus: while the trainer works, it has
    pulled at most a few batches past the documents it has counted."""
    texts, labels = make_docs(6000, seed=3, classes=["a", "b"])
    pulled = []
    counted = []

    def docs():
        for i, (text, label) in enumerate(zip(texts, labels)):
            pulled.append(i)
            yield Document(str(i), label, text.encode(), "text")

    def progress(batch):
        counted.append(len(batch))
        # documents read ahead of those counted so far: bounded by a batch or two
        assert len(pulled) - sum(counted) <= 2 * max(counted)

    clf = train(docs(), AnalyzerOptions(), TrainOptions(), progress=progress, jobs=1)
    assert sum(counted) == 6000 and clf.meta["n_documents"] == 6000


def test_a_table_trained_with_workers_gives_the_same_model(tmp_path):
    """A table is read in this process and shipped to the workers in
    batches (a folder of files is read by the workers themselves)."""
    models = {}
    for jobs in (1, 2):
        path = tmp_path / f"j{jobs}.nb"
        result = run(["train", SAMPLES / "topics" / "train.jsonl", "-o", path, "-q", "--jobs", jobs])
        assert result.exit_code == 0, result.stderr
        models[jobs] = modelfile.load(str(path))
    _same_model(models[1], models[2])


def test_workers_reading_files_warn_in_file_order_and_count_every_file(tmp_path):
    import shutil

    from nbcli.text.sources import ReadOptions, labeled_corpus

    root = tmp_path / "c"
    shutil.copytree(MAIL / "train", root)
    for cls, name in (("spam", "zz-gone"), ("ham", "aa-gone"), ("ham", "mm-gone")):
        (root / cls / name).symlink_to(tmp_path / "nowhere")
    stderr = {}
    for jobs in (1, 2):
        result = run(["train", root, "-o", tmp_path / "m.nb", "--jobs", jobs])
        assert result.exit_code == 1, result.stderr  # dangling links could not be read (issue 12, defect 8)
        stderr[jobs] = [line for line in result.stderr.splitlines() if "warning" in line]
    assert stderr[1] == stderr[2] and len(stderr[2]) == 3
    assert [line.rsplit("/", 1)[1].split(":")[0] for line in stderr[2]] == ["aa-gone", "mm-gone", "zz-gone"]

    docs = labeled_corpus([str(root)], [], ReadOptions())
    moved = []
    clf = train(
        docs, AnalyzerOptions(), TrainOptions(), progress=lambda batch: moved.append(docs.progress(batch)), jobs=2
    )
    assert sum(moved) == docs.total == clf.meta["n_documents"]  # dangling links are left out when listing


def test_a_documents_norm_does_not_depend_on_the_order_of_its_terms():
    """Complement's length norm sums a document's squares in value order: a
    worker's term ids order the terms differently, and the transformed sums
    (rounded to training's fixed point) must not move by a unit."""
    from nbcli.fit.exact_sums import doc_norms

    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(2, 400))
        values = np.log1p(rng.integers(1, 50, n).astype(np.float64))
        doc_of = np.sort(rng.integers(0, 5, n))
        norms = doc_norms(doc_of, values, 5)
        shuffled = rng.permutation(n)
        again = doc_norms(doc_of[shuffled], values[shuffled], 5)
        assert norms.tobytes() == again.tobytes()
        for d in range(5):  # and it is the norm
            assert np.isclose(norms[d], np.sqrt(np.sum(values[doc_of == d] ** 2)))


def test_dateless_documents_take_source_date_epoch(tmp_path):
    """Two trainings of documents without a Date header write the same
    arrays when SOURCE_DATE_EPOCH is set (the record keeps each
    document's date, which is otherwise the time of the run)."""
    import json

    corpus = tmp_path / "c"
    texts, labels = make_docs(40, seed=2, classes=["a", "b"])
    for i, (text, label) in enumerate(zip(texts, labels)):
        (corpus / label).mkdir(parents=True, exist_ok=True)
        (corpus / label / f"{i}.txt").write_text(text)
    ids = []
    for jobs in ("1", "2"):
        model = tmp_path / f"m{jobs}.nb"
        result = run(["train", corpus, "-o", model, "-q", "-j", jobs], env={"SOURCE_DATE_EPOCH": "1700000000"})
        assert result.exit_code == 0, result.stderr
        ids.append(json.loads(run(["info", model, "--json"]).stdout)["model_id"])
        assert set(modelfile.load(str(model)).record.when.tolist()) == {1700000000}
    assert ids[0] == ids[1]


def test_cross_validation_and_tune_do_not_depend_on_jobs():
    """eval --cv and tune analyse the corpus on the workers (525 messages:
    enough for --jobs 0 to go parallel too); the reports are the same."""
    for args in (["eval", "--cv", "5", MAIL / "train", "--json"], ["tune", MAIL / "train", "--json"]):
        outputs = {}
        for jobs in (1, 2, 0):
            result = run([*args, "--jobs", jobs])
            assert result.exit_code == 0, result.stderr
            outputs[jobs] = result.stdout
        assert outputs[1] == outputs[2] == outputs[0]


def test_the_corpus_analysed_on_workers_is_the_corpus_analysed_here(monkeypatch):
    """Array for array: counts, labels, vocabulary (hashes and texts), mail
    documents; the term ids are assigned in this process, in input order."""
    from nbcli.fit import crossval
    from nbcli.run import pipeline
    from nbcli.run.pipeline import analyse_corpus
    from nbcli.text.analyzer import Analyzer
    from nbcli.text.sources import ReadOptions, labeled_corpus

    def docs():
        return labeled_corpus([str(MAIL / "train")], [], ReadOptions())

    shipped = []  # batches that came back from a worker
    unpack = pipeline._token_batch
    monkeypatch.setattr(pipeline, "_token_batch", lambda *parts: shipped.append(1) or unpack(*parts))
    here = crossval.analyse_corpus(docs(), Analyzer(AnalyzerOptions()))
    for jobs in (1, 2, 0):
        shipped.clear()
        batches = []
        there = analyse_corpus(docs(), Analyzer(AnalyzerOptions()), progress=batches.append, jobs=jobs)
        assert sum(map(len, batches)) == len(here.y) == 525
        assert (len(shipped) > 0) == (jobs != 1)
        assert (there.X != here.X).nnz == 0 and there.X.dtype == here.X.dtype
        assert np.array_equal(there.X.indptr, here.X.indptr) and np.array_equal(there.X.indices, here.X.indices)
        assert np.array_equal(there.y, here.y) and there.classes == here.classes
        assert there.mail_docs == here.mail_docs > 0
        assert np.array_equal(there.vocab.hashes, here.vocab.hashes)
        n = len(here.vocab)
        assert there.vocab.terms(range(n)) == here.vocab.terms(range(n))
