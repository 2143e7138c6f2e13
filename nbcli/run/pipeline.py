"""Reading → analysing → counting, driven from one place: the drivers of
the work that needs `fit` (training's counting pass, analysing for
`learn`, analysing a corpus for cross-validation). How work is cut into
tasks and handed to an executor, and scoring, are `parallel`'s; this
module keeps only what needs the fitting code (issue 26: `semi` and
`tuning`, at the same height, import `parallel`, never this module).

- Counting (training) is a map-reduce: every worker analyses and counts
  into a table of its own and sends it back once; the parent merges the
  tables. For a corpus of files (folders, Maildirs) the workers read the
  files themselves, taking ranges of file numbers; otherwise (tables,
  stdin, mboxes given as paths) the parent reads the documents and ships
  them in batches. Counts are integers and the vocabulary is sorted by
  hash at the end, so the model is the same whatever the number of
  workers.
- Analysing for `learn` and for cross-validation is an ordered map over
  batches (for cross-validation the term ids are assigned in the parent,
  in input order).

`jobs` is as `parallel` says: a number of workers, or a cluster's executor
in its place (`parallel.placement` takes the two apart). Files are read
by a cluster's workers at the client's paths (relative ones under the
client's working folder); a file a worker cannot find is an error, never
a smaller model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from nbcli.run.executor import ProcessPool, fork_context
from nbcli.run.parallel import (
    AUTO_DOCS,
    Switch,
    chained,
    placement,
    raised,
    with_progress,
    worker_analyzer,
    workers_for,
)

FILES_PER_TASK = 256
# files per task on a cluster: each task costs a round trip and a count table
# sent back and merged; see `make bench-dask` for the measurement
CLUSTER_FILES_PER_TASK = 1024

__all__ = ["count", "count_corpus", "train", "analyse_to_learn", "analyse_corpus"]


# -- counting ----------------------------------------------------------------------


def train(
    docs,
    analyzer_options,
    options,
    progress=None,
    jobs=1,
    calibrate: str | None = None,
    strict: bool = True,
    bar=None,
    decide: str = "accuracy",
    positive: str | None = None,
):
    """`training.train` with the counting pass on `jobs` workers; bar: see
    `training.from_table`; decide, positive: `train --decide`, `--positive`."""
    from nbcli.fit import training

    training.check_trainable(docs, options, calibrate, decide)
    table = count_corpus(
        docs,
        training.Analyzer(analyzer_options),
        options.needs_doc_freq,
        progress,
        jobs,
        options.first_pass_transform,
        training.sample_size(calibrate, decide),
    )
    return training.from_table(table, docs, analyzer_options, options, calibrate, strict, bar, decide, positive)


def count_corpus(
    docs, analyzer, doc_freq: bool, progress: Callable | None = None, jobs=1, transform=None, sample: int = 0
):
    """One streaming pass over labelled documents: their CountTable."""
    from nbcli.fit.count_table import CountTable

    table = CountTable(doc_freq=doc_freq, transform=transform, sample=sample)
    count(docs, analyzer, table, jobs, progress)
    return table


def count(docs: Iterable, analyzer, table, jobs, progress: Callable[[list | int], None] | None = None) -> None:
    """Analyse and count labelled documents into `table` (a CountTable).

    A corpus of many files (`Corpus.file_lists`) is counted by workers that
    read the files themselves: the parent hands out ranges of file numbers,
    so it neither reads nor ships the documents (about a tenth of all the
    CPU time of training, on two cores). Anything else (tables, stdin, a
    few big mboxes) is read here and shipped to the workers in batches.
    `progress` gets each batch of documents, or a number of files."""
    from nbcli.text.sources import batches

    jobs, executor = placement(jobs)
    lists = docs.file_lists() if hasattr(docs, "file_lists") else None
    if lists is not None:
        if executor is not None:
            _count_files(lists, analyzer, table, executor, progress)
            return
        workers = workers_for(jobs)
        n_files = sum(len(part.files) for part in lists)
        if workers > 1 and n_files > 1 and (jobs > 1 or n_files >= AUTO_DOCS) and fork_context() is not None:
            _count_files(lists, analyzer, table, ProcessPool(workers), progress)
            return
    switch = Switch(jobs, executor)
    it = iter(batches(docs))
    for batch in it:
        if switch.parallel_now(batch):
            tasks = with_progress(
                ((_columns(b), b) for b in chained(batch, it)),
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


class _Counting:
    """A worker's accumulator: its analyzer, its table, and (reading files)
    the warnings met, with where they were met."""

    def __init__(self, analyzer_options, doc_freq: bool, transform=None, sample: int = 0, now: int | None = None):
        from nbcli.fit.count_table import CountTable

        self.analyzer = worker_analyzer(analyzer_options)  # a cluster's worker starts one per task
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
    remote = getattr(pool, "remote", False)
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
    tasks = with_progress(_file_ranges(lists, per_task), progress)
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


# -- analysing for learning --------------------------------------------------------


def analyse_to_learn(analyzer, docs, label: str | None = None, jobs=1, progress=None):
    """`analysed.analyse_for_learning` (each document's terms, identity and
    date, for `learn` and `forget`) with the analysis on `jobs` workers (an
    ordered map over batches, so the result is the same for any --jobs)."""
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
    switch = Switch(*placement(jobs))
    it = iter(batches(docs))
    for batch in it:
        if not batch:
            continue
        if switch.parallel_now(batch):
            items = ((b, task(b)) for b in chained(batch, it) if b)
            for done, result in raised(switch.pool().map(_analyse_task, analyzer.options, items)):
                parts.append(result)
                if progress is not None:
                    progress(done)
            break
        parts.append(analyse_batch(analyzer, *task(batch)))
        if progress is not None:
            progress(batch)
    return join(parts)


def _analyse_task(analyzer_options, task):
    from nbcli.fit.analysed import analyse_batch

    return analyse_batch(worker_analyzer(analyzer_options), *task)


# -- analysing for cross-validation ---------------------------------------------------


def analyse_corpus(docs, analyzer, progress=None, jobs: int = 1):
    """`crossval.analyse_corpus` with the analysis on `jobs` workers (an ordered
    map over batches; the term ids are assigned here, in input order, so
    the corpus is the same, array for array, for any --jobs)."""
    from functools import partial

    from nbcli.fit import crossval
    from nbcli.run.parallel import analysed_batches

    return crossval.analyse_corpus(docs, analyzer, progress, partial(analysed_batches, analyzer, jobs=jobs))
