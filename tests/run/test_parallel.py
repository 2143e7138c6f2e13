"""`run/parallel.py`: --jobs gives the same output whatever the number of
workers: scoring (predict, filter), the corpus analysed on workers, and
cross-validation and tune on them; an executor's own failures read as
nbcli's errors."""

from __future__ import annotations

import numpy as np

from nbcli.text.analyzer import AnalyzerOptions

from conftest import SAMPLES, run

MAIL = SAMPLES / "mail"


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
    from nbcli.run import parallel
    from nbcli.run.pipeline import analyse_corpus
    from nbcli.text.analyzer import Analyzer
    from nbcli.text.sources import ReadOptions, labeled_corpus

    def docs():
        return labeled_corpus([str(MAIL / "train")], [], ReadOptions())

    shipped = []  # batches that came back from a worker
    unpack = parallel._token_batch
    monkeypatch.setattr(parallel, "_token_batch", lambda *parts: shipped.append(1) or unpack(*parts))
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


def test_a_clusters_own_failures_are_nbcli_errors_with_the_same_line():
    """The executors import nothing of nbcli: their failures are
    ExecutorError, raised to the commands as NbcliError, message and hint
    unchanged; a task's own error passes through as it is."""
    import pytest

    from nbcli.errors import NbcliError
    from nbcli.run import parallel
    from nbcli.run.executor import ExecutorError

    class Lost:
        remote, workers = True, 3

        def map(self, fn, options, items):
            yield 0, fn(options, 0)
            raise ExecutorError("lost the Dask scheduler at tcp://h:8786; the work was not done", "check it")

        def map_reduce(self, start, fold, finish, options, tasks, merge):
            raise ExecutorError("the Dask cluster at tcp://h:8786 has had no workers for 60 s")

    jobs, executor = parallel.placement(Lost())
    assert jobs == 3 and executor.remote and parallel.placement(executor)[1] is executor
    assert parallel.placement(2) == (2, None)
    results = executor.map(lambda options, task: options + task, 5, [])
    assert next(results) == (0, 5)
    with pytest.raises(NbcliError) as caught:
        next(results)
    assert str(caught.value) == "lost the Dask scheduler at tcp://h:8786; the work was not done; check it"
    with pytest.raises(NbcliError, match="^the Dask cluster at tcp://h:8786 has had no workers for 60 s$"):
        executor.map_reduce(None, None, None, None, [], None)
