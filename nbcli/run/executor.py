"""Where work runs: in this process, or in a pool of local worker processes.

Generic on purpose: this module imports nothing from nbcli, so a later
executor (a Dask cluster) is one more class with the same two methods:

- `map(fn, options, items)`: an ordered map. `items` are (key, task)
  pairs, or `IDLE`; it yields (key, fn(options, task)) in input order, an
  exception in place of the result when fn raised (the caller decides).
  `IDLE` says the input went quiet: every result held is handed back
  before the next item is read (a filter must not sit on a message).
- `map_reduce(start, fold, finish, options, tasks, merge)`: every worker
  builds an accumulator `start(options)`, folds its share of the tasks
  into it with `fold(acc, task)`, and sends `finish(acc)` back once; the
  parent calls `merge(that)` per worker. The order in which workers finish
  is not fixed, so `merge` must not depend on it.

`options` are what the functions need besides the tasks (analyzer
options, a classifier): the pool's workers are forked and receive them as
arguments of their target, inherited at fork, never through module
globals. Workers die with the parent; a worker that dies is noticed (an
error in the parent, not a hang); an error in a worker becomes an error
in the parent.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator

IDLE = object()  # an item of `map`: the input went quiet


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def fork_context():
    """The multiprocessing fork context, or None where there is no fork."""
    import multiprocessing  # here: a one-message predict never needs it (~10 ms)

    try:
        return multiprocessing.get_context("fork")
    except ValueError:  # no fork on this platform
        return None


class WorkerError(RuntimeError):
    """A worker failed in a way the task's result cannot carry."""


class ExecutorError(Exception):
    """An executor's own failure, said in one line: `message`, and a `hint`
    (or None) on how to fix it (a cluster that cannot be reached or was
    lost, workers of another version). The executors import nothing of
    nbcli: their caller raises it again as its own error."""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message, hint)
        self.message, self.hint = message, hint

    def __str__(self) -> str:  # as nbcli's errors read: "message; hint"
        return "; ".join(part for part in (self.message, self.hint) if part)


class InProcess:
    """Everything in this process, in order."""

    workers = 1

    def map(self, fn: Callable, options, items: Iterable) -> Iterator[tuple]:
        for item in items:
            if item is IDLE:  # nothing is held here
                continue
            key, task = item
            try:
                result = fn(options, task)
            except Exception as exc:
                result = exc
            yield key, result

    def map_reduce(self, start, fold, finish, options, tasks: Iterable, merge: Callable) -> None:
        acc = start(options)
        for task in tasks:
            fold(acc, task)
        merge(finish(acc))


class ProcessPool:
    """`workers` forked processes on this machine."""

    def __init__(self, workers: int):
        self.workers = workers

    def map(self, fn: Callable, options, items: Iterable) -> Iterator[tuple]:
        """At most two tasks per worker in flight; results in input order."""
        import pickle

        ctx = fork_context()
        tasks, results = ctx.Queue(), ctx.Queue()
        procs = self._start(ctx, _map_worker, (fn, options, tasks, results))
        pending: deque = deque()  # keys of the tasks sent, in order
        done: dict[int, object] = {}  # results come back in any order
        sent = 0

        def next_result():
            n = sent - len(pending)
            while n not in done:
                i, status, value = pickle.loads(_get(results, procs))
                done[i] = value if status == "ok" else _as_error(value)
            return pending.popleft(), done.pop(n)

        try:
            for item in items:
                if item is IDLE:  # the input went quiet: hand back every result held
                    while pending:
                        yield next_result()
                    continue
                key, task = item
                _put(tasks, (sent, task), procs)
                pending.append(key)
                sent += 1
                if len(pending) >= 2 * self.workers:
                    yield next_result()
            while pending:
                yield next_result()
        finally:
            _stop(procs)

    def map_reduce(self, start, fold, finish, options, tasks: Iterable, merge: Callable) -> None:
        ctx = fork_context()
        queue = ctx.Queue(maxsize=2 * self.workers)
        results = ctx.Queue()
        procs = self._start(ctx, _reduce_worker, (start, fold, finish, options, queue, results))
        try:
            for task in tasks:
                _put(queue, task, procs)
            for _ in procs:
                _put(queue, None, procs)
            for _ in procs:
                status, value = _get(results, procs)
                if status != "ok":
                    raise WorkerError(f"a worker failed: {value}")
                merge(value)
            for proc in procs:
                proc.join()
        finally:
            _stop(procs)

    def _start(self, ctx, target, args) -> list:
        give_back_memory()  # a worker's RSS counts every page it inherits, freed ones the heap still holds
        procs = [ctx.Process(target=target, args=(*args, os.getpid()), daemon=True) for _ in range(self.workers)]
        for proc in procs:
            proc.start()
        return procs


def give_back_memory() -> None:
    """Return the C heap's free memory to the system (glibc's malloc_trim),
    so that workers forked next do not carry the pages this process's
    earlier work left free (their RSS counts them). Measured: a bulk
    predict through a journal of 1,000 updates at 1.41M terms held 21 MB
    free after reading the model and scoring its first batch (133 -> 112
    MB), which each worker then counted. Elsewhere than glibc, nothing."""
    import ctypes
    import ctypes.util

    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _map_worker(fn, options, tasks, results, parent) -> None:
    import pickle

    die_with_parent(parent)
    while True:
        i, task = tasks.get()
        try:
            reply = (i, "ok", fn(options, task))
        except Exception as exc:
            reply = (i, "error", exc)
        try:  # pickled here, so that what cannot travel is said, not lost in the queue's thread
            message = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            message = pickle.dumps((i, "error", f"{type(exc).__name__}: {exc}"))
        results.put(message)


def _as_error(value) -> Exception:
    return value if isinstance(value, Exception) else WorkerError(f"a worker failed: {value}")


def _reduce_worker(start, fold, finish, options, tasks, results, parent) -> None:
    die_with_parent(parent)
    try:
        acc = start(options)
        while True:
            task = tasks.get()
            if task is None:
                break
            fold(acc, task)
        results.put(("ok", finish(acc)))
    except BaseException as exc:  # report, never hang the parent
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def _stop(procs) -> None:
    for proc in procs:
        if proc.is_alive():
            proc.terminate()


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
            raise WorkerError(f"a worker process died (exit code {proc.exitcode})")


def die_with_parent(parent: int) -> None:
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
