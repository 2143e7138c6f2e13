"""Reading → analysing → counting or scoring, driven from one place.

The core (`classifier`, `training`, `crossval`'s arithmetic) knows nothing
of processes; this module cuts the work into tasks and hands them to an
executor (see `executor`): in this process, or a pool of local workers.

- Counting (training) is a map-reduce: every worker analyses and counts
  into a table of its own and sends it back once; the parent merges the
  tables. For a corpus of files (folders, Maildirs) the workers read the
  files themselves, taking ranges of file numbers; otherwise (tables,
  stdin, mboxes given as paths) the parent reads the documents and ships
  them in batches. Counts are integers and the vocabulary is sorted by
  hash at the end, so the model is the same whatever the number of
  workers.
- Classifying (predict, eval, filter) is an ordered map over batches:
  scoring a document does not depend on the other documents of its batch,
  so the numbers are the same too.
- Cross-validation maps over the corpus's batches to analyse it (the term
  ids are assigned in the parent, in input order), then over the folds.

`jobs`: 1 runs everything in this process; N > 1 uses N workers; 0 means
automatic: start in this process and switch to one worker per core only
once the input has proved large (AUTO_DOCS documents or AUTO_BYTES bytes),
since starting workers costs more than a small input saves. Workers are
forked, so they share the loaded model's memory-mapped arrays.

`jobs` may also be a cluster's executor (`--cluster`, see `cluster`): the
same functions run there, on the same tasks, with everything parallel at
once. Files are read by the workers at the client's paths (relative ones
under the client's working folder); a file a worker cannot find is an
error, never a smaller model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np

from nbcli.run.executor import IDLE, InProcess, ProcessPool, cpu_count, fork_context

AUTO_DOCS = 256
AUTO_BYTES = 1 << 20
FILES_PER_TASK = 256
# files per task on a cluster: each task costs a round trip and a count table
# sent back and merged; see `make bench-dask` for the measurement
CLUSTER_FILES_PER_TASK = 1024

__all__ = ["cpu_count", "count", "count_corpus", "train", "classify", "classify_docs", "score_labelled"]


def executor(workers: int):
    """The executor for `workers` processes (in this process if 1, or
    where there is no fork)."""
    return ProcessPool(workers) if workers > 1 and fork_context() is not None else InProcess()


def _remote(jobs) -> bool:
    return getattr(jobs, "remote", False)


def _workers(jobs) -> int:
    if _remote(jobs):
        return jobs.workers
    return jobs if jobs > 1 else cpu_count() if jobs == 0 else 1


class _Switch:
    """Decides when a stream is big enough to go parallel."""

    def __init__(self, jobs):
        self.cluster = jobs if _remote(jobs) else None
        self.workers = _workers(jobs)
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


def _chain(first, rest):
    yield first
    yield from rest


# -- counting ----------------------------------------------------------------------


def train(
    docs,
    analyzer_options,
    options,
    progress=None,
    jobs: int = 1,
    calibrate: str | None = None,
    strict: bool = True,
    bar=None,
):
    """`training.train` with the counting pass on `jobs` workers; bar: see
    `training.from_table`."""
    from nbcli.fit import training

    training.check_trainable(docs, options, calibrate)
    table = count_corpus(
        docs,
        training.Analyzer(analyzer_options),
        options.needs_doc_freq,
        progress,
        jobs,
        options.first_pass_transform,
        training.sample_size(calibrate),
    )
    return training.from_table(table, docs, analyzer_options, options, calibrate, strict, bar)


def count_corpus(
    docs, analyzer, doc_freq: bool, progress: Callable | None = None, jobs: int = 1, transform=None, sample: int = 0
):
    """One streaming pass over labelled documents: their CountTable."""
    from nbcli.fit.count_table import CountTable

    table = CountTable(doc_freq=doc_freq, transform=transform, sample=sample)
    count(docs, analyzer, table, jobs, progress)
    return table


def count(docs: Iterable, analyzer, table, jobs: int, progress: Callable[[list | int], None] | None = None) -> None:
    """Analyse and count labelled documents into `table` (a CountTable).

    A corpus of many files (`Corpus.file_lists`) is counted by workers that
    read the files themselves: the parent hands out ranges of file numbers,
    so it neither reads nor ships the documents (about a tenth of all the
    CPU time of training, on two cores). Anything else (tables, stdin, a
    few big mboxes) is read here and shipped to the workers in batches.
    `progress` gets each batch of documents, or a number of files."""
    from nbcli.text.sources import batches

    lists = docs.file_lists() if hasattr(docs, "file_lists") else None
    if lists is not None:
        if _remote(jobs):
            _count_files(lists, analyzer, table, jobs, progress)
            return
        workers = _workers(jobs)
        n_files = sum(len(part.files) for part in lists)
        if workers > 1 and n_files > 1 and (jobs > 1 or n_files >= AUTO_DOCS) and fork_context() is not None:
            _count_files(lists, analyzer, table, ProcessPool(workers), progress)
            return
    switch = _Switch(jobs)
    it = iter(batches(docs))
    for batch in it:
        if switch.parallel_now(batch):
            tasks = _with_progress(
                ((_columns(b), b) for b in _chain(batch, it)),
                progress,
            )
            options = (analyzer.options, table.doc_freq_wanted, table.transform, table.sample_size, table.now)
            switch.pool().map_reduce(_start_table, _count_batch, _table_state, options, tasks, table.merge)
            return
        datas = [d.data for d in batch]
        table.add(analyzer.analyze(datas, [d.kind for d in batch]), [d.label for d in batch], datas)
        if progress is not None:
            progress(batch)


def _columns(batch) -> tuple[list, list, list]:
    return [d.data for d in batch], [d.kind for d in batch], [d.label for d in batch]


def _with_progress(pairs, progress):
    """The tasks of (task, progress item) pairs; progress(item) is called
    once the executor has taken the task."""
    for task, done in pairs:
        yield task
        if progress is not None:
            progress(done)


class _Counting:
    """A worker's accumulator: its analyzer, its table, and (reading files)
    the warnings met, with where they were met."""

    def __init__(self, analyzer_options, doc_freq: bool, transform=None, sample: int = 0, now: int | None = None):
        from nbcli.fit.count_table import CountTable

        self.analyzer = _analyzer(analyzer_options)  # a cluster's worker starts one per task
        self.table = CountTable(doc_freq=doc_freq, transform=transform, sample=sample, now=now)
        self.warnings: list[tuple[int, int, str]] = []  # (part, file, message)
        self.files_read = 0

    def add(self, batch) -> None:
        datas = [d.data for d in batch]
        self.table.add(self.analyzer.analyze(datas, [d.kind for d in batch]), [d.label for d in batch], datas)


def _start_table(options) -> _Counting:
    return _Counting(*options)


def _count_batch(acc: _Counting, task) -> None:
    datas, kinds, labels = task
    acc.table.add(acc.analyzer.analyze(datas, kinds), labels, datas)


def _table_state(acc: _Counting):
    return acc.table.state()


def _count_files(lists, analyzer, table, pool, progress) -> None:
    """Workers read ranges of the corpus's files themselves; the warnings
    they meet come back with their tables and are said here in file order.
    On a cluster the lists travel as data (`FileList.shippable`), and the
    number of files the workers read is checked against the listing."""
    import os

    from nbcli.errors import NbcliError

    n_files = sum(len(part.files) for part in lists)
    remote = _remote(pool)
    most = CLUSTER_FILES_PER_TASK if remote else FILES_PER_TASK
    per_task = max(1, min(most, n_files // (4 * pool.workers)))
    warnings: list = []
    read = [0]

    def merge(state) -> None:
        tables, met, files_read = state
        warnings.extend(met)
        read[0] += files_read
        table.merge(tables)

    shipped = [part.shippable(os.getcwd()) for part in lists] if remote else lists
    options = (analyzer.options, table.doc_freq_wanted, table.transform, table.sample_size, table.now, shipped)
    tasks = _with_progress(_file_ranges(lists, per_task), progress)
    pool.map_reduce(_start_files, _count_files_task, _files_state, options, tasks, merge)
    if read[0] != n_files:  # never a silently smaller model
        raise NbcliError(f"the workers read {read[0]} of the {n_files} files listed; the model was not written")
    for part, _, message in sorted(warnings, key=lambda w: w[:2]):
        lists[part].opts.warn(message)


def _start_files(options) -> _Counting:
    analyzer_options, doc_freq, transform, sample, now, lists = options
    acc = _Counting(analyzer_options, doc_freq, transform, sample, now)
    acc.lists = lists
    return acc


def _count_files_task(acc: _Counting, task) -> None:
    from nbcli.text.sources import batches

    part, start, stop = task
    files = acc.lists[part]
    if files.opts.base_dir is not None:  # on a cluster: a file missing here is an error, not a warning
        _check_present(files, start, stop)

    def docs():
        for i in range(start, stop):
            # the file's warnings come back with the table, to be said in file order
            yield from files.read(i, lambda message, i=i: acc.warnings.append((part, i, message)))

    for batch in batches(docs(), first=FILES_PER_TASK):
        acc.add(batch)
    acc.files_read += stop - start


def _check_present(files, start: int, stop: int) -> None:
    import os

    from nbcli.errors import NbcliError

    for i in range(start, stop):
        if not os.path.lexists(files.path(i)):
            raise NbcliError(
                f"{files.files[i]}: no such file here (looked for {files.path(i)})",
                hint="workers read the corpus themselves: put it at the same path on every worker, "
                "or on storage they share",
            )


def _files_state(acc: _Counting):
    return acc.table.state(), acc.warnings, acc.files_read


def _file_ranges(lists, per_task: int):
    """((list number, first file, end), number of files) per task."""
    for part, files in enumerate(lists):
        for start in range(0, len(files.files), per_task):
            stop = min(start + per_task, len(files.files))
            yield (part, start, stop), stop - start


# -- classifying -------------------------------------------------------------------


def classify(classifier, batches: Iterable[list], jobs: int, explain: int = 0) -> Iterator[tuple[list, object]]:
    """(batch, `Classifier.score` of the batch or an exception) for each
    non-empty batch, in order (an empty batch says the input went quiet:
    every result held is handed back before the next batch is read): the
    log-posteriors, or with explain > 0 (log-posteriors, explanations). An
    exception in place of the result means the batch could not be scored;
    the caller decides what to do."""
    switch = _Switch(jobs)
    it = iter(batches)
    for batch in it:
        if switch.parallel_now(batch):
            items = (
                IDLE if not b else (b, ([d.data for d in b], [d.kind for d in b], explain)) for b in _chain(batch, it)
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


def classify_docs(classifier, docs, jobs: int = 1, explain: int = 0) -> Iterator[tuple[list, object]]:
    """(batch of documents, their `Classifier.score`) for a stream of
    documents, in order; an error scoring a batch is raised."""
    from nbcli.text.sources import batches

    for batch, result in classify(classifier, batches(docs), jobs, explain):
        if isinstance(result, Exception):
            raise result
        yield batch, result


def score_labelled(classifier, docs, progress=None, jobs: int = 1) -> tuple[list[str], np.ndarray]:
    """`Classifier.score_labelled` with the scoring on `jobs` workers."""
    return classifier.score_labelled(docs, progress, scored=classify_docs(classifier, docs, jobs))


# -- analysing for learning --------------------------------------------------------


def analyse(analyzer, docs, label: str | None = None, jobs: int = 1, progress=None):
    """`analysed.analyse_for_learning` with the analysis on `jobs` workers (an ordered
    map over batches, so the result is the same for any --jobs)."""
    from nbcli.fit.analysed import analyse_batch, join
    from nbcli.text.identity import run_time
    from nbcli.text.sources import batches

    now = run_time()  # one date for the dateless documents, on every worker

    def task(b):
        return (
            [d.id for d in b],
            [d.data for d in b],
            [d.kind for d in b],
            [label if label is not None else d.label for d in b],
            now,
        )

    parts = []
    switch = _Switch(jobs)
    it = iter(batches(docs))
    for batch in it:
        if not batch:
            continue
        if switch.parallel_now(batch):
            items = ((b, task(b)) for b in _chain(batch, it) if b)
            for done, result in switch.pool().map(_analyse_task, analyzer.options, items):
                if isinstance(result, Exception):
                    raise result
                parts.append(result)
                if progress is not None:
                    progress(done)
            break
        parts.append(analyse_batch(analyzer, *task(batch)))
        if progress is not None:
            progress(batch)
    return join(parts)


_analyzers: dict = {}  # a worker's analyzers, by their options


def _analyzer(options):
    """The worker's analyzer for `options`, built once (workers build their
    own from the options: an analyzer is not shipped)."""
    analyzer = _analyzers.get(options)
    if analyzer is None:
        from nbcli.text.analyzer import Analyzer

        analyzer = _analyzers[options] = Analyzer(options)
    return analyzer


def _analyse_task(analyzer_options, task):
    from nbcli.fit.analysed import analyse_batch

    return analyse_batch(_analyzer(analyzer_options), *task)


# -- analysing for cross-validation ---------------------------------------------------


def analyse_corpus(docs, analyzer, progress=None, jobs: int = 1):
    """`crossval.analyse_corpus` with the analysis on `jobs` workers (an ordered
    map over batches; the term ids are assigned here, in input order, so
    the corpus is the same, array for array, for any --jobs)."""
    from functools import partial

    from nbcli.fit import crossval

    return crossval.analyse_corpus(docs, analyzer, progress, partial(analysed_batches, analyzer, jobs=jobs))


def analysed_batches(analyzer, docs, jobs: int = 1) -> Iterator[tuple[list, object]]:
    """(batch, `analyzer.analyze` of the batch) for the batches of docs, in
    order: in this process until the input proves large (see `_Switch`),
    then on the workers. An error analysing a batch is raised."""
    from nbcli.text.sources import batches

    switch = _Switch(jobs)
    it = iter(batches(docs))
    for batch in it:
        if switch.parallel_now(batch):
            items = ((b, ([d.data for d in b], [d.kind for d in b])) for b in _chain(batch, it))
            for done, result in switch.pool().map(_tokenize, analyzer.options, items):
                if isinstance(result, Exception):
                    raise result
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
    tokens = _analyzer(analyzer_options).analyze(datas, kinds)
    distinct, first, inverse = np.unique(tokens.hashes, return_index=True, return_inverse=True)
    which = inverse.astype(np.uint32 if len(distinct) < 2**32 else np.int64)
    return distinct, which, tokens.doc_ptr, tokens.mail_docs, tokens.strings(first)


def _token_batch(distinct, which, doc_ptr, mail_docs: int, texts: list):
    """The TokenBatch of `_tokenize`'s parts."""
    from nbcli.text.analyzer import TokenBatch

    def strings_of(idx) -> list[str]:
        return [texts[i] for i in which[idx].tolist()]

    return TokenBatch(distinct[which], doc_ptr, strings_of, mail_docs)


# -- cross-validation --------------------------------------------------------------


def cross_validate(corpus, k: int, seed: int, analyzer_options, options, eval_options, jobs: int = 1, counts=None):
    """`crossval.cross_validate` with the folds scored on `jobs` workers."""
    from nbcli.fit import crossval

    if counts is None or (options.needs_doc_freq and counts.total_df is None):
        counts = crossval.fold_counts(corpus, k, seed, options.needs_doc_freq)
    job = (counts, analyzer_options, options, eval_options)
    if _remote(jobs):
        pool = jobs
    else:
        workers = min(k, jobs if jobs > 0 else cpu_count())
        if jobs == 0 and len(corpus.y) < AUTO_DOCS:
            workers = 1
        pool = executor(workers if k > 1 else 1)
    reports = []
    for _, report in pool.map(_score_fold, job, ((f, f) for f in range(k))):
        if isinstance(report, Exception):
            raise report
        reports.append(report)
    return crossval.summarise(corpus, k, seed, reports)


def _score_fold(job, f: int) -> dict:
    from nbcli.fit.training import score_fold

    return score_fold(job[0], f, *job[1:])


# -- EM (train --unlabeled) -----------------------------------------------------------


def em_stats(XU, event_model: str, jobs: int):
    """`em.em`'s stats for the unlabelled rows XU on `jobs` workers: the
    rows cut into blocks, each worker taking blocks (XU is inherited, only
    the mixture travels), the blocks' exact integer sums added and their
    log-likelihoods joined in row order, so the fit is the same for any
    --jobs. None (in this process) for one worker or few rows."""
    workers = _workers(jobs)
    n = XU.shape[0]
    if not _remote(jobs) and (workers < 2 or n < AUTO_DOCS or fork_context() is None):
        return None
    from nbcli.nb.em import prepare

    X = prepare(XU, event_model)
    cuts = np.linspace(0, n, 2 * workers + 1).astype(np.int64)
    blocks = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    shared = (X, event_model)  # one object for every iteration: a cluster is sent it once
    pool = jobs if _remote(jobs) else ProcessPool(workers)

    def stats(mixture):
        word = docs = None
        lls = []
        items = ((i, (mixture, block)) for i, block in enumerate(blocks))
        for _, result in pool.map(_em_block, shared, items):
            if isinstance(result, Exception):
                raise result
            (w, d), ll = result
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
