"""`run/pipeline.py`: training's counting pass and the analysis for `learn`
give the same model whatever the number of workers, read their documents
lazily, and say the warnings of files read by workers in file order."""

from __future__ import annotations

import numpy as np

from nbcli.fit.training import TrainOptions
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


def test_documents_analysed_to_learn_do_not_depend_on_jobs():
    """`learn`'s analysis on workers is the analysis here, document for
    document and in input order; a label given overrides the documents'."""
    from nbcli.run.pipeline import analyse_to_learn
    from nbcli.text.analyzer import Analyzer

    texts, labels = make_docs(700, seed=7, classes=["a", "b"])
    docs = [Document(str(i), label, text.encode(), "text") for i, (text, label) in enumerate(zip(texts, labels))]
    analyzer = Analyzer(AnalyzerOptions())
    done = {}
    for jobs in (1, 2):
        seen = []
        done[jobs] = analyse_to_learn(analyzer, iter(docs), jobs=jobs, progress=seen.append)
        assert sum(map(len, seen)) == 700
    one, two = done[1], done[2]
    assert one.labels == two.labels == labels
    for name in ("digest", "message_id", "mail"):
        assert np.array_equal(getattr(one, name), getattr(two, name)), name
    relabelled = analyse_to_learn(analyzer, iter(docs[:3]), label="spam")
    assert relabelled.labels == ["spam"] * 3
