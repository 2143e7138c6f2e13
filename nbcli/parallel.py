"""Running the analysis on several cores.

Two shapes of work:

- Counting (training): N forked workers each analyse and count into a
  table of their own and send it back once, at the end; the parent merges
  the tables. For a corpus of files (folders, Maildirs) the workers read
  the files themselves, taking ranges of file numbers from a bounded
  queue; otherwise (tables, stdin, mboxes given as paths) the parent reads
  the documents and queues them in batches. Counts are integers and the
  vocabulary is sorted by hash at the end, so the model is the same
  whatever the number of workers.
- Classifying (predict, eval, filter): batches go to a pool of forked
  workers, at most two per worker in flight, and the results come back in
  input order. Scoring a document does not depend on the other documents
  in its batch, so the numbers are the same too.

`jobs`: 1 runs everything in this process; N > 1 uses N workers; 0 means
automatic: start in this process and switch to one worker per core only
once the input has proved large (AUTO_DOCS documents or AUTO_BYTES bytes),
since starting workers costs more than a small input saves. Workers are
forked, so they share the loaded model's memory-mapped arrays.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator

AUTO_DOCS = 256
AUTO_BYTES = 1 << 20


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _context():
    import multiprocessing  # here: a one-message predict never needs it (~10 ms)

    try:
        return multiprocessing.get_context("fork")
    except ValueError:  # no fork on this platform
        return None


def _die_with_parent(parent: int) -> None:
    """Make this worker die when the process that forked it dies, however
    it dies (`kill PID` of nbcli, not of its process group): otherwise the
    workers would sleep forever on their queues, holding the caller's pipes
    open. Linux delivers SIGKILL on the parent's death (prctl
    PR_SET_PDEATHSIG); elsewhere a thread checks the parent every second."""
    import signal

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # 1: PR_SET_PDEATHSIG
            raise OSError
    except (OSError, AttributeError):
        import threading

        def watch():
            import time

            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)


def _start_worker(parent: int) -> None:
    """Initializer of every worker process (see `_die_with_parent`)."""
    _die_with_parent(parent)


class _Switch:
    """Decides when a stream is big enough to go parallel."""

    def __init__(self, jobs: int):
        self.workers = jobs if jobs > 1 else cpu_count() if jobs == 0 else 1
        self.at_once = jobs > 1 and self.workers > 1
        self.docs = self.bytes = 0

    def parallel_now(self, batch) -> bool:
        if self.workers < 2:
            return False
        if not self.at_once:
            self.docs += len(batch)
            self.bytes += sum(len(d.data) for d in batch)
            if self.docs < AUTO_DOCS and self.bytes < AUTO_BYTES:
                return False
        if _context() is None:  # no fork here: stay in this process
            self.workers = 1
            return False
        return True


# -- counting ----------------------------------------------------------------------


def _count_worker(analyzer_options, doc_freq, tasks, results, parent) -> None:
    from nbcli.tokenize import Analyzer
    from nbcli.training import CountTable

    _start_worker(parent)
    try:
        analyzer = Analyzer(analyzer_options)
        table = CountTable(doc_freq=doc_freq)
        while True:
            task = tasks.get()
            if task is None:
                break
            datas, kinds, labels = task
            table.add(analyzer.analyze(datas, kinds), labels)
        results.put(("ok", table.state()))
    except BaseException as exc:  # report, never hang the parent
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def count(docs: Iterable, analyzer, table, jobs: int, progress: Callable[[list | int], None] | None = None) -> None:
    """Analyse and count labelled documents into `table` (a CountTable).

    A corpus of many files (`Corpus.file_lists`) is counted by workers that
    read the files themselves: the parent hands out ranges of file numbers,
    so it neither reads nor ships the documents (about a tenth of all the
    CPU time of training, on two cores). Anything else (tables, stdin, a
    few big mboxes) is read here and shipped to the workers in batches.
    `progress` gets each batch of documents, or a number of files."""
    from nbcli.sources import batches

    lists = docs.file_lists() if hasattr(docs, "file_lists") else None
    if lists is not None:
        workers = jobs if jobs > 1 else cpu_count() if jobs == 0 else 1
        n_files = sum(len(part.files) for part in lists)
        if workers > 1 and n_files > 1 and (jobs > 1 or n_files >= AUTO_DOCS) and _context() is not None:
            _count_files_in_workers(lists, analyzer, table, workers, progress)
            return
    switch = _Switch(jobs)
    it = iter(batches(docs))
    for batch in it:
        if switch.parallel_now(batch):
            _count_in_workers(batch, it, analyzer, table, switch.workers, progress)
            return
        table.add(analyzer.analyze([d.data for d in batch], [d.kind for d in batch]), [d.label for d in batch])
        if progress is not None:
            progress(batch)


FILES_PER_TASK = 256
_file_lists = None  # set before forking; the workers inherit the corpus's FileLists


def _count_files_worker(analyzer_options, doc_freq, tasks, results, parent) -> None:
    from nbcli.sources import batches
    from nbcli.tokenize import Analyzer
    from nbcli.training import CountTable

    _start_worker(parent)
    try:
        analyzer = Analyzer(analyzer_options)
        table = CountTable(doc_freq=doc_freq)
        warnings: list[tuple[int, int, str]] = []  # (part, file, message): the parent says them in file order
        where = [0, 0]
        for files in _file_lists:
            files.opts.warn = lambda message: warnings.append((where[0], where[1], message))
        while True:
            task = tasks.get()
            if task is None:
                break
            part, start, stop = task
            files = _file_lists[part]

            def docs(part, start, stop, files):
                for i in range(start, stop):
                    where[:] = part, i
                    yield from files.read(i)

            for batch in batches(docs(part, start, stop, files), first=FILES_PER_TASK):
                table.add(analyzer.analyze([d.data for d in batch], [d.kind for d in batch]), [d.label for d in batch])
        results.put(("ok", (table.state(), warnings)))
    except BaseException as exc:  # report, never hang the parent
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def _count_files_in_workers(lists, analyzer, table, workers, progress) -> None:
    global _file_lists
    n_files = sum(len(part.files) for part in lists)
    per_task = max(1, min(FILES_PER_TASK, n_files // (4 * workers)))
    _file_lists = lists
    warnings: list = []
    try:
        _run_count_workers(
            _count_files_worker,
            _file_ranges(lists, per_task),
            analyzer,
            table,
            workers,
            progress,
            warnings.extend,
        )
    finally:
        _file_lists = None
    for part, _, message in sorted(warnings, key=lambda w: w[:2]):
        lists[part].opts.warn(message)


def _file_ranges(lists, per_task: int):
    """((list number, first file, end), number of files) per task."""
    for part, files in enumerate(lists):
        for start in range(0, len(files.files), per_task):
            stop = min(start + per_task, len(files.files))
            yield (part, start, stop), stop - start


def _count_in_workers(first, rest, analyzer, table, workers, progress) -> None:
    tasks = (
        (([d.data for d in batch], [d.kind for d in batch], [d.label for d in batch]), batch)
        for batch in _chain(first, rest)
    )
    _run_count_workers(_count_worker, tasks, analyzer, table, workers, progress)


def _run_count_workers(target, tasks, analyzer, table, workers, progress, extra=None) -> None:
    """Start `workers` processes running target(options, doc_freq, queue,
    results), feed them the (task, progress item) pairs of `tasks`, and
    merge the tables they send back (with `extra`, each sends back
    (table, something) and extra(something) is called)."""
    ctx = _context()
    queue = ctx.Queue(maxsize=2 * workers)
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=target, args=(analyzer.options, table.doc_freq_wanted, queue, results, os.getpid()), daemon=True
        )
        for _ in range(workers)
    ]
    for proc in procs:
        proc.start()
    try:
        for task, done in tasks:
            _put(queue, task, procs)
            if progress is not None:
                progress(done)
        for _ in procs:
            _put(queue, None, procs)
        for _ in procs:
            status, value = _get(results, procs)
            if status != "ok":
                raise RuntimeError(f"a worker failed: {value}")
            if extra is not None:
                value, more = value
                extra(more)
            table.merge(value)
        for proc in procs:
            proc.join()
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()


def _chain(first, rest):
    yield first
    yield from rest


def _put(queue, item, procs) -> None:
    import queue as queue_module

    while True:
        try:
            queue.put(item, timeout=0.5)
            return
        except queue_module.Full:
            _check_alive(procs)


def _get(queue, procs):
    import queue as queue_module

    while True:
        try:
            return queue.get(timeout=0.5)
        except queue_module.Empty:
            _check_alive(procs)


def _check_alive(procs) -> None:
    for proc in procs:
        if proc.exitcode not in (None, 0):
            raise RuntimeError(f"a worker process died (exit code {proc.exitcode})")


# -- classifying -------------------------------------------------------------------

_classifier = None  # set before forking; workers inherit it


def _score(datas, kinds, explain):
    return _classifier.score(datas, kinds, explain)


def classify(classifier, batches: Iterable[list], jobs: int, explain: int = 0) -> Iterator[tuple[list, object]]:
    """(batch, `Classifier.score` of the batch or an exception) for each
    non-empty batch, in order (an empty batch says the input went quiet:
    every result held is handed back before the next batch is read): the
    log-posteriors, or with explain > 0 (log-posteriors, explanations). An
    exception in place of the result means the batch could not be scored;
    the caller decides what to do."""
    global _classifier
    switch = _Switch(jobs)
    it = iter(batches)
    for batch in it:
        if switch.parallel_now(batch):
            _classifier = classifier
            try:
                yield from _classify_in_pool(_chain(batch, it), switch.workers, explain)
            finally:
                _classifier = None
            return
        if not batch:  # the input went quiet: nothing is held here
            continue
        try:
            yield batch, classifier.score([d.data for d in batch], [d.kind for d in batch], explain)
        except Exception as exc:
            yield batch, exc


def _classify_in_pool(batches, workers, explain):
    ctx = _context()
    pool = ctx.Pool(workers, initializer=_start_worker, initargs=(os.getpid(),))
    pending: deque = deque()
    try:
        for batch in batches:
            if not batch:  # the input went quiet: hand back every result held
                while pending:
                    yield _result(*pending.popleft())
                continue
            pending.append(
                (batch, pool.apply_async(_score, ([d.data for d in batch], [d.kind for d in batch], explain)))
            )
            if len(pending) >= 2 * workers:
                yield _result(*pending.popleft())
        while pending:
            yield _result(*pending.popleft())
    finally:
        pool.terminate()


def _result(batch, async_result):
    try:
        return batch, async_result.get()
    except Exception as exc:
        return batch, exc


# -- independent tasks -------------------------------------------------------------


def map_forked(fn, items, workers: int) -> list:
    """[fn(item) for item in items], in `workers` forked processes when
    workers > 1 (fn and the data it reads must be module-level, set before
    the call: workers inherit them)."""
    items = list(items)
    ctx = _context() if workers > 1 and len(items) > 1 else None
    if ctx is None:
        return [fn(item) for item in items]
    with ctx.Pool(min(workers, len(items)), initializer=_start_worker, initargs=(os.getpid(),)) as pool:
        return pool.map(fn, items)
