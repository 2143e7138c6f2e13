"""Going parallel: which executor a command's `jobs` means, when a stream
of documents switches to the workers, and the ordered maps over batches
and blocks that the commands' parallel work is made of.

The core (`classifier`, `training`, `em`) knows nothing of processes; this
module cuts work into tasks and hands them to an executor (see
`executor`): in this process, or a pool of local workers, or a cluster's.

`jobs`: 1 runs everything in this process; N > 1 uses N workers; 0 means
automatic: start in this process and switch to one worker per core only
once the input has proved large (AUTO_DOCS documents or AUTO_BYTES bytes),
since starting workers costs more than a small input saves. Workers are
forked, so they share the loaded model's memory-mapped arrays.

A command gives a cluster's executor (`--cluster`, see `dask_executor`) in
the place of `jobs`. Its two meanings get two names where they meet
(`placement`): `jobs`, the int, and `executor`, the object; everything
below the commands' entry points takes the two apart. A cluster runs the
same functions on the same tasks, with everything parallel at once, and
its own failures (`executor.ExecutorError`) are raised as NbcliError with
the same one-line text (`Speaking`).

Kept here, below the drivers that need `fit` (`pipeline`, `tuning`,
`semi`, issue 26's heights): the switch, scoring (predict, eval, filter:
an ordered map over batches; scoring a document does not depend on the
other documents of its batch, so the numbers are the same for any jobs),
analysing on workers (the term ids are assigned by the caller, in input
order), and EM's statistics over blocks of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from nbcli.run.executor import IDLE, ExecutorError, InProcess, ProcessPool, cpu_count, fork_context

AUTO_DOCS = 256
AUTO_BYTES = 1 << 20

__all__ = ["cpu_count", "classify", "classify_docs", "score_labelled", "analysed_batches", "em_stats"]


def local_executor(workers: int):
    """The executor for `workers` processes (in this process if 1, or
    where there is no fork)."""
    return ProcessPool(workers) if workers > 1 and fork_context() is not None else InProcess()


def placement(jobs) -> tuple[int, object | None]:
    """(jobs, executor): what a command gives as `jobs` with its two
    meanings apart: a number of workers (the executor None), or a
    cluster's executor given in its place (then jobs is its number of
    worker threads, and the executor says its failures as NbcliError)."""
    if getattr(jobs, "remote", False):
        return jobs.workers, jobs if isinstance(jobs, Speaking) else Speaking(jobs)
    return jobs, None


def workers_for(jobs: int) -> int:
    """The number of local workers `jobs` asks for (0: one per core)."""
    return jobs if jobs > 1 else cpu_count() if jobs == 0 else 1


@contextmanager
def as_nbcli_errors():
    """An executor's own failures (`ExecutorError`) raised as NbcliError,
    the same message and hint."""
    from nbcli.errors import NbcliError

    try:
        yield
    except ExecutorError as exc:
        raise NbcliError(exc.message, exc.hint) from None


class Speaking:
    """A cluster's executor whose own failures are NbcliError (the
    executors import nothing of nbcli): the same one-line message and hint."""

    remote = True

    def __init__(self, executor):
        self.executor = executor
        self.workers = executor.workers

    def map(self, fn: Callable, options, items: Iterable) -> Iterator[tuple]:
        with as_nbcli_errors():
            yield from self.executor.map(fn, options, items)

    def map_reduce(self, start, fold, finish, options, tasks: Iterable, merge: Callable) -> None:
        with as_nbcli_errors():
            self.executor.map_reduce(start, fold, finish, options, tasks, merge)


class Switch:
    """Decides when a stream is big enough to go parallel (`jobs` and
    `executor` as `placement` gives them)."""

    def __init__(self, jobs: int, executor=None):
        self.cluster = executor
        self.workers = jobs if executor is not None else workers_for(jobs)
        self.at_once = self.cluster is not None or (jobs > 1 and self.workers > 1)
        self.docs = self.bytes = 0

    def pool(self):
        """The executor to go parallel on."""
        return self.cluster if self.cluster is not None else ProcessPool(self.workers)

    def parallel_now(self, batch) -> bool:
        if self.cluster is not None:
            return True
        if self.workers < 2:
            return False
        if not self.at_once:
            self.docs += len(batch)
            self.bytes += sum(len(d.data) for d in batch)
            if self.docs < AUTO_DOCS and self.bytes < AUTO_BYTES:
                return False
        if fork_context() is None:  # no fork here: stay in this process
            self.workers = 1
            return False
        return True


def chained(first, rest):
    yield first
    yield from rest


def with_progress(pairs, progress):
    """The tasks of (task, progress item) pairs; progress(item) is called
    once the executor has taken the task."""
    for task, done in pairs:
        yield task
        if progress is not None:
            progress(done)


def raised(results: Iterable[tuple]) -> Iterator[tuple]:
    """An executor's (key, result) pairs, an exception in place of a result
    raised."""
    for key, result in results:
        if isinstance(result, Exception):
            raise result
        yield key, result


_analyzers: dict = {}  # a worker's analyzers, by their options


def worker_analyzer(options):
    """The worker's analyzer for `options`, built once (workers build their
    own from the options: an analyzer is not shipped)."""
    analyzer = _analyzers.get(options)
    if analyzer is None:
        from nbcli.text.analyzer import Analyzer

        analyzer = _analyzers[options] = Analyzer(options)
    return analyzer


# -- classifying -------------------------------------------------------------------


def classify(classifier, batches: Iterable[list], jobs, explain: int = 0) -> Iterator[tuple[list, object]]:
    """(batch, `Classifier.score` of the batch or an exception) for each
    non-empty batch, in order (an empty batch says the input went quiet:
    every result held is handed back before the next batch is read): the
    log-posteriors, or with explain > 0 (log-posteriors, explanations). An
    exception in place of the result means the batch could not be scored;
    the caller decides what to do."""
    switch = Switch(*placement(jobs))
    it = iter(batches)
    for batch in it:
        if switch.parallel_now(batch):
            items = (
                IDLE if not b else (b, ([d.data for d in b], [d.kind for d in b], explain)) for b in chained(batch, it)
            )
            yield from switch.pool().map(_score, classifier, items)
            return
        if not batch:  # the input went quiet: nothing is held here
            continue
        yield from InProcess().map(
            _score, classifier, [(batch, ([d.data for d in batch], [d.kind for d in batch], explain))]
        )


def _score(classifier, task):
    datas, kinds, explain = task
    return classifier.score(datas, kinds, explain)


def classify_docs(classifier, docs, jobs=1, explain: int = 0) -> Iterator[tuple[list, object]]:
    """(batch of documents, their `Classifier.score`) for a stream of
    documents, in order; an error scoring a batch is raised."""
    from nbcli.text.sources import batches

    yield from raised(classify(classifier, batches(docs), jobs, explain))


def score_labelled(classifier, docs, progress=None, jobs=1) -> tuple[list[str], np.ndarray]:
    """`Classifier.score_labelled` with the scoring on `jobs` workers."""
    return classifier.score_labelled(docs, progress, scored=classify_docs(classifier, docs, jobs))


# -- analysing -----------------------------------------------------------------------


def analysed_batches(analyzer, docs, jobs=1) -> Iterator[tuple[list, object]]:
    """(batch, `analyzer.analyze` of the batch) for the batches of docs, in
    order: in this process until the input proves large (see `Switch`),
    then on the workers. An error analysing a batch is raised."""
    from nbcli.text.sources import batches

    switch = Switch(*placement(jobs))
    it = iter(batches(docs))
    for batch in it:
        if switch.parallel_now(batch):
            items = ((b, ([d.data for d in b], [d.kind for d in b])) for b in chained(batch, it))
            for done, result in raised(switch.pool().map(_tokenize, analyzer.options, items)):
                yield done, _token_batch(*result)
            return
        yield batch, analyzer.analyze([d.data for d in batch], [d.kind for d in batch])


def _tokenize(analyzer_options, task) -> tuple:
    """A batch's TokenBatch as it travels back (a TokenBatch holds a
    closure over the batch's text): (the distinct hashes, sorted; each
    token's index among them; doc_ptr; mail_docs; the distinct terms'
    texts): 4 bytes a token instead of a hash's 8, and each term's text once
    a batch (11.8 MB for 4.8k SpamAssassin messages, 25.6 MB read)."""
    datas, kinds = task
    tokens = worker_analyzer(analyzer_options).analyze(datas, kinds)
    distinct, first, inverse = np.unique(tokens.hashes, return_index=True, return_inverse=True)
    which = inverse.astype(np.uint32 if len(distinct) < 2**32 else np.int64)
    return distinct, which, tokens.doc_ptr, tokens.mail_docs, tokens.strings(first)


def _token_batch(distinct, which, doc_ptr, mail_docs: int, texts: list):
    """The TokenBatch of `_tokenize`'s parts."""
    from nbcli.text.hashing import TokenBatch

    def strings_of(idx) -> list[str]:
        return [texts[i] for i in which[idx].tolist()]

    return TokenBatch(distinct[which], doc_ptr, strings_of, mail_docs)


# -- EM (train --unlabeled) -----------------------------------------------------------


def em_stats(XU, event_model: str, jobs):
    """`em.em`'s stats for the unlabelled rows XU on `jobs` workers: the
    rows cut into blocks, each worker taking blocks (XU is inherited, only
    the mixture travels), the blocks' exact integer sums added and their
    log-likelihoods joined in row order, so the fit is the same for any
    --jobs. None (in this process) for one worker or few rows."""
    jobs, executor = placement(jobs)
    workers = jobs if executor is not None else workers_for(jobs)
    n = XU.shape[0]
    if executor is None and (workers < 2 or n < AUTO_DOCS or fork_context() is None):
        return None
    from nbcli.nb.em import prepare

    X = prepare(XU, event_model)
    cuts = np.linspace(0, n, 2 * workers + 1).astype(np.int64)
    blocks = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    shared = (X, event_model)  # one object for every iteration: a cluster is sent it once
    pool = executor if executor is not None else ProcessPool(workers)

    def stats(mixture):
        word = docs = None
        lls = []
        items = ((i, (mixture, block)) for i, block in enumerate(blocks))
        for _, ((w, d), ll) in raised(pool.map(_em_block, shared, items)):
            word = w if word is None else word + w
            docs = d if docs is None else docs + d
            lls.append(ll)
        return (word, docs), np.concatenate(lls)

    return stats


def _em_block(options, task):
    from nbcli.nb.em import block_stats

    X, event_model = options
    mixture, (start, stop) = task
    return block_stats(mixture, X[start:stop], event_model)
