"""A Dask cluster as one more executor (see `executor`): `--cluster ADDRESS`.

Optional: Dask is the extra `pip install 'nbcli-bayes[dask]'` and is imported only
here, only when `--cluster` is given. ADDRESS is a running scheduler
(`tcp://host:8786`, or any address Dask's Client takes, such as the
`inproc://` address of a thread LocalCluster in the same process) or
`local[:N]`: a LocalCluster of N worker processes (default: one per core),
one thread each, started and stopped by nbcli. The environment variable
DASK_SCHEDULER_ADDRESS is not read: a cron job's work moves to another
machine only when its command line says so.

What travels: the executor's contract is `map(fn, options, items)` and
`map_reduce(start, fold, finish, options, tasks, merge)`. `fn`, `start`,
`fold` and `finish` are module-level functions of nbcli (pickled by name:
the workers run their own nbcli); `options` are plain data (analyzer
options, lists of file names, a loaded model's arrays), scattered to
every worker once and reused while the same object comes back (EM's
iterations send their matrix once); tasks are small (file ranges, or batches of
documents that only the client can read). Results are plain data: scores
for `map`; for `map_reduce`, each worker thread folds the tasks it runs
into an accumulator kept on the worker, and `finish(acc)` (a count-table
state, the warnings met, the files read) comes back once per worker
thread at the end, as with the local pool.

Checks: before any work, every worker's nbcli version and model-format
version must be this nbcli's (one line naming the first worker that
differs), and every task checks again on the worker that runs it, so a
worker that joins later cannot slip through. An error in a task names its
worker. A worker lost mid-run is Dask's to handle: the scheduler reruns
the tasks it was running elsewhere, and a task that keeps killing workers
ends the run with one line (`distributed.scheduler.allowed-failures`).

Like `executor`, this module imports nothing else of nbcli (issue 26): what
it checks and how its failures read come from its caller. The versions are
the caller's `versions` function (given to `Session`; module-level, so the
workers run their own copy of it and compare with what it gave here:
`Versions`). Its own failures (an unreachable or lost cluster, a worker of
another version, a bad address) are `executor.ExecutorError`s with a
one-line message and a hint, which the caller raises as its own error
(the command line: the same `nbcli: error: ...` line). A task's error with
a `message` (nbcli's errors) gets the worker's name in front of it.

Connecting: a scheduler's address is checked before Dask's client is made,
in at most NBCLI_CLUSTER_TIMEOUT seconds (CONNECT_TIMEOUT, 10, by default;
the same wait then bounds the client's connection and the wait for a
worker): an unknown scheme, tls:// without Dask's TLS settings, a refused
connection, a peer that does not answer (a tarpit, a hung scheduler) or
answers in another protocol (SSH, HTTP), and a worker's address are each
one line (`_check_remote`). Dask's own handshake has no timeout, and reads
another protocol's first bytes as a frame length.

`map` and `map_reduce` keep at most IN_FLIGHT_PER_THREAD tasks per worker
thread queued; `map` yields results in input order (an exception in place
of a result, as the local executors do). A run that loses its scheduler,
or has no worker for NO_WORKERS_TIMEOUT seconds, ends with one line: a
filter in cron must not hang. An accumulator left on a worker by a client
killed mid-run stays until that worker restarts (a client that ends in any
other way removes its own).

Cancelled tasks: Dask cancels a task while its scheduler lives when the
task's scattered options are lost (the Active Memory Manager keeps one
copy of broadcast data, and that copy's worker can be the one killed), or
when another client force-cancels it. nbcli cancels nothing it still waits
for, so a cancelled task is submitted again (the options scattered again
if they were lost), at most RESUBMITS times, if the client still reaches
the scheduler: a round trip to it, in the connect timeout. A cancellation
for a lost connection, or with no answer, is the one-line "lost the Dask
scheduler" error.

Exactly once, for `map_reduce`: a cancelled task may still run to its end
on its worker (Dask cannot stop a running thread), so its fold can land
as well as its resubmission's. Folds are made idempotent by task number,
and the client keeps only accumulators that do not overlap:

- every accumulator records the task numbers it folded; a worker process
  folds a number once per generation (a second fold of it, on any of its
  threads, is skipped);
- at the end the client seals the generation on every worker (`_seal`:
  later folds of it are skipped, one under way ends first) and gets the
  task numbers of every accumulator; it keeps accumulators greedily,
  largest first, when they share no task with one kept, and has the kept
  ones finished and sent back (`_finish`), the others dropped;
- tasks that no kept accumulator folded (dropped, or lost with a worker)
  are submitted again as the next generation, with accumulators of their
  own; after GENERATIONS rounds with tasks still missing the run ends with
  one line.

So the client keeps every task (file ranges, or a batch of documents)
until the end, and releases a task's future once it is done: the
scheduler no longer holds its run spec, and the client, not Dask, reruns
the tasks of an accumulator lost with its worker. Each worker process
remembers, per run, the last generation sealed (a few bytes per run) so a
late fold never starts a new accumulator.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError
from typing import NamedTuple

from nbcli.run.executor import IDLE, ExecutorError

CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler, and for it to have a worker (default)
TIMEOUT_VARIABLE = "NBCLI_CLUSTER_TIMEOUT"  # sets those seconds
IN_FLIGHT_PER_THREAD = 3
RESUBMITS = 5  # a task cancelled more often than this (the scheduler living) ends the run
GENERATIONS = 4  # rounds of map_reduce's collection before missing tasks end the run
POLL = 2.0  # seconds between checks that the cluster is still there, while waiting for a result
NO_WORKERS_TIMEOUT = 60.0  # a cluster with no worker for this long ends the run (no silent hang in cron)
INSTALL_HINT = "install the extra: pip install 'nbcli-bayes[dask]'"


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise ExecutorError("--cluster needs Dask, which is not installed", hint=INSTALL_HINT) from None
    return distributed


def _comm_closed() -> type:
    from distributed.comm.core import CommClosedError

    return CommClosedError


def parse(address: str) -> tuple[str, int | None]:
    """('local', N or None) for local[:N], else ('remote', None)."""
    address = address.strip()
    if address == "local" or address.startswith("local:"):
        _, _, n = address.partition(":")
        if n == "":
            return "local", None
        if not n.isdigit() or not 1 <= int(n) <= 1024:
            raise ExecutorError(f"--cluster {address}: N in local:N must be a number of workers from 1 to 1024")
        return "local", int(n)
    if not address:
        raise ExecutorError("--cluster needs an address", hint="give tcp://HOST:8786 or local:N")
    return "remote", None


class Versions(NamedTuple):
    """What every worker must match: `probe()`, the caller's module-level
    function (pickled by name: the worker runs its own copy), gives there
    the `values` it gave here (nbcli's version and model-format version)."""

    probe: Callable[[], tuple]
    values: tuple

    @classmethod
    def here(cls, probe: Callable[[], tuple]) -> Versions:
        return cls(probe, tuple(probe()))


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "a worker"


def _check(expected: Versions) -> None:
    found = tuple(expected.probe())
    if found != expected.values:
        raise ExecutorError(_mismatch(_worker_name(), found, expected.values), hint=_VERSION_HINT)


_VERSION_HINT = "every worker needs the same nbcli as the client: install it there and restart the worker"


def _mismatch(worker: str, found, expected) -> str:
    return (
        f"worker {worker} runs nbcli {found[0]} (model format {found[1]}); "
        f"this nbcli is {expected[0]} (model format {expected[1]})"
    )


def _named(exc: Exception) -> bool:
    """Say which worker met a task's error: the caller's one-line errors
    (those with a `message`, as nbcli's have) get the worker's name in
    front. False for any other error, left as it is."""
    if not isinstance(getattr(exc, "message", None), str):
        return False
    exc.message = f"worker {_worker_name()}: {exc.message}"  # type: ignore[attr-defined]
    return True


def _run(expected, fn, options, task):
    _check(expected)
    try:
        return fn(options, task)
    except Exception as exc:
        if _named(exc):
            raise exc from None
        raise


# map_reduce's accumulators on a worker process: (run, generation, worker,
# thread) -> _Held. One per thread: an accumulator (a count table) is not
# shared between threads. _sealed: run -> the last generation sealed (folds
# of it or an older one are skipped). Both under _lock.
_accumulators: dict = {}
_sealed: dict = {}
_lock = threading.Lock()
_SKIPPED = -1  # what a fold of a sealed generation returns


class _Held:
    """An accumulator, the task numbers folded into it, and whether a fold
    failed in it (then it is never kept). `lock` is held while folding."""

    def __init__(self):
        self.lock = threading.Lock()
        self.done: set[int] = set()
        self.acc = None
        self.spoiled = False


def _fold(expected, run, generation, n, start, fold, options, task) -> int:
    """Fold task `n` into this thread's accumulator, once: a task this worker
    process already folded in this generation (a cancelled run of it that
    went on, then its resubmission) is skipped, and so is a sealed one."""
    _check(expected)
    name = _worker_name()
    with _lock:
        if _sealed.get(run, -1) >= generation:
            return _SKIPPED
        mine = [h for k, h in _accumulators.items() if k[:3] == (run, generation, name)]
        if any(n in held.done for held in mine):
            return n
        key = (run, generation, name, threading.get_ident())
        held = _accumulators.get(key)
        if held is None:
            held = _accumulators[key] = _Held()
        held.done.add(n)
        held.lock.acquire()  # free: only this thread folds into it, and _seal waits for it
    try:
        if held.acc is None:
            held.acc = start(options)
        fold(held.acc, task)
    except Exception as exc:
        held.spoiled = True
        if _named(exc):
            raise exc from None
        raise
    except BaseException:
        held.spoiled = True
        raise
    finally:
        held.lock.release()
    return n


def _seal(run, generation, dask_worker=None) -> list:
    """No more folds of this generation here; [(key, task numbers, spoiled)]
    of this worker's accumulators, once the folds under way have ended.
    (client.run passes the worker as dask_worker.)"""
    name = dask_worker.address if dask_worker is not None else _worker_name()
    with _lock:
        _sealed[run] = max(_sealed.get(run, -1), generation)
        mine = [(k, h) for k, h in _accumulators.items() if k[:3] == (run, generation, name)]
    listing = []
    for key, held in mine:
        with held.lock:
            listing.append((key, sorted(held.done), held.spoiled or held.acc is None))
    return listing


def _finish(run, finish, keep, dask_worker=None) -> list:
    """[(task numbers, finish(accumulator))] of this worker's accumulators
    named in `keep`; every accumulator of the run here is forgotten."""
    name = dask_worker.address if dask_worker is not None else _worker_name()
    keep = {tuple(key) for key in keep}
    with _lock:
        mine = [k for k in _accumulators if k[0] == run and k[2] == name]
        taken = [(k, _accumulators.pop(k)) for k in mine]
    return [(sorted(held.done), finish(held.acc)) for key, held in taken if key in keep]


def _discard(run, dask_worker=None) -> None:
    with _lock:
        _sealed[run] = float("inf")  # a fold still under way or queued starts nothing
        for key in [k for k in _accumulators if k[0] == run]:
            _accumulators.pop(key, None)


_CANCELLED = object()  # DaskExecutor._result: Dask cancelled the task, the scheduler still answers


class DaskExecutor:
    """The executor of a connected Dask client (see the module docstring)."""

    remote = True

    def __init__(self, client, address: str, versions: Callable[[], tuple]):
        self.client = client
        self.address = address
        self.expected = Versions.here(versions)
        self._scattered: dict[int, tuple[object, object]] = {}  # id(options) -> (options, future)
        self._no_workers_since: float | None = None
        self.workers = self.threads()

    def threads(self) -> int:
        info = self.client.scheduler_info()["workers"]
        return max(1, sum(int(w.get("nthreads", 1)) for w in info.values()))

    def check_workers(self) -> None:
        """Every worker's versions are this nbcli's."""
        found = self.client.run(self.expected.probe)
        for worker, got in sorted(found.items()):
            if tuple(got) != self.expected.values:
                raise ExecutorError(_mismatch(worker, tuple(got), self.expected.values), hint=_VERSION_HINT)

    def _options(self, options):
        held = self._scattered.get(id(options))
        if held is not None and held[0] is options and held[1].status == "finished":
            return held[1]
        # scattered the first time, and again when Dask lost or cancelled the copy
        while True:
            try:
                [future] = self.client.scatter([options], broadcast=True, hash=False)
                break
            except TimeoutError:  # no worker to scatter to, for the client's timeout
                self._check_alive()
            except OSError:  # CommClosedError is one
                raise self._lost() from None
        # only the last options are kept on the workers (EM's iterations reuse
        # theirs; tune's trials each bring new ones); holding `options` keeps its id its own
        self._scattered = {id(options): (options, future)}
        return future

    def _result(self, future):
        """The task's result, or the exception it raised, or _CANCELLED when
        Dask cancelled the task and the scheduler still answers (submit it
        again); the cluster's own failures (a task that keeps killing
        workers, a lost scheduler, no worker left for NO_WORKERS_TIMEOUT
        seconds) end the run here."""
        distributed = _import_distributed()
        while True:
            try:
                return future.result(timeout=POLL)
            except distributed.KilledWorker as exc:
                raise ExecutorError(
                    f"a task was lost with its worker too many times ({exc}); the work was not done",
                    hint="see the workers' logs: a worker running out of memory is the usual cause",
                ) from None
            except (TimeoutError, distributed.TimeoutError):
                self._check_alive()
            except CancelledError as exc:
                # nbcli cancels nothing it still waits for: Dask did, having lost
                # the scheduler, or its options, or at another client's request
                if getattr(exc, "reason", None) != "scheduler-connection-lost" and self._answers():
                    return _CANCELLED
                raise self._lost() from None
            except _comm_closed():
                raise self._lost() from None
            except Exception as exc:
                self._check_alive()
                return exc

    def _answers(self) -> bool:
        """The scheduler answers a round trip within the connect timeout."""
        if self.client.status != "running":
            return False
        try:
            self.client.sync(self.client.scheduler.identity, n_workers=0, callback_timeout=connect_timeout())
        except Exception:  # refused, closed, timed out: lost
            return False
        return True

    def _lost(self) -> ExecutorError:
        return ExecutorError(
            f"lost the Dask scheduler at {self.address}; the work was not done",
            hint="check the scheduler, then run the command again",
        )

    @staticmethod
    def _again(times: int) -> None:
        """A task cancelled `times` times may be submitted again, up to RESUBMITS."""
        if times > RESUBMITS:
            raise ExecutorError(
                f"the Dask cluster cancelled a task {times} times; the work was not done",
                hint="see the scheduler's log, then run the command again",
            )

    def _check_alive(self) -> None:
        import time

        if self.client.status not in ("running", "connecting", "newly-created"):
            raise ExecutorError(f"lost the Dask scheduler at {self.address}; the work was not done")
        if self.client.scheduler_info().get("workers"):
            self._no_workers_since = None
            return
        now = time.monotonic()
        if self._no_workers_since is None:
            self._no_workers_since = now
        elif now - self._no_workers_since > NO_WORKERS_TIMEOUT:
            raise ExecutorError(
                f"the Dask cluster at {self.address} has had no workers for {NO_WORKERS_TIMEOUT:g} s; "
                "the work was not done",
                hint="start workers with `dask worker " + self.address + "`",
            )

    def map(self, fn: Callable, options, items: Iterable) -> Iterator[tuple]:
        limit = IN_FLIGHT_PER_THREAD * self.workers
        pending: deque = deque()  # [key, task, future], in input order

        def submit(task):
            return self.client.submit(_run, self.expected, fn, self._options(options), task, pure=False)

        def first() -> tuple:
            entry = pending[0]
            times = 0
            while (result := self._result(entry[2])) is _CANCELLED:
                times += 1
                self._again(times)
                entry[2] = submit(entry[1])
            pending.popleft()
            return entry[0], result

        try:
            for item in items:
                if item is IDLE:  # hand back every result held
                    while pending:
                        yield first()
                    continue
                key, task = item
                pending.append([key, task, submit(task)])
                if len(pending) >= limit:
                    yield first()
            while pending:
                yield first()
        finally:
            for _, _, future in pending:
                future.cancel()

    def map_reduce(self, start, fold, finish, options, tasks: Iterable, merge: Callable) -> None:
        """As the local pool does it: every worker thread folds the tasks it
        runs into an accumulator of its own, kept on the worker (`_fold`),
        and sends `finish(acc)` back once, when every task is done
        (`_finish`, through `client.run`). A count table per worker crosses
        the network, not one per task (and the calibration sample of every
        task: measured 1.5 s of 9 on 48k messages).

        Exactly once (the module docstring): every task is kept here to the
        end; a task Dask cancels is submitted again; at the end the
        accumulators that share no task are kept (`_collect`), and the
        tasks none of them folded run again, as the next generation."""
        import time
        import uuid

        limit = IN_FLIGHT_PER_THREAD * self.workers
        run = uuid.uuid4().hex
        kept: list = []  # every task, by number, to the end
        running: dict = {}  # future -> task number; a future is let go once done
        cancelled: dict[int, int] = {}  # task number -> times Dask cancelled it
        generation = 0

        def submit(n: int) -> None:
            opts = self._options(options)
            future = self.client.submit(
                _fold, self.expected, run, generation, n, start, fold, opts, kept[n], pure=False
            )
            running[future] = n

        def settle(most: int) -> None:
            """Take the tasks done until fewer than `most` are still running."""
            waited = time.monotonic()
            while True:
                for future in [f for f in running if f.done()]:
                    n = running.pop(future)
                    result = self._result(future)
                    if result is _CANCELLED:
                        cancelled[n] = cancelled.get(n, 0) + 1
                        self._again(cancelled[n])
                        submit(n)
                    elif isinstance(result, Exception):
                        raise result
                if len(running) < most:
                    return
                time.sleep(0.005)  # a short poll: Dask's own waits need a default client
                if time.monotonic() - waited > POLL:
                    self._check_alive()
                    waited = time.monotonic()

        try:
            for n, task in enumerate(tasks):
                kept.append(task)
                submit(n)
                settle(limit)
            covered: set[int] = set()
            for generation in range(GENERATIONS):  # submit reads it
                # after the first: the tasks lost with a worker, or in a dropped accumulator
                for n in [m for m in range(len(kept)) if generation and m not in covered]:
                    submit(n)
                    settle(limit)
                settle(1)
                covered |= self._collect(run, generation, finish, merge, covered)
                if len(covered) == len(kept):
                    return
            raise ExecutorError(
                f"the workers folded {len(covered)} of {len(kept)} tasks in {GENERATIONS} rounds "
                "(workers were lost); the work was not done",
                hint="run the command again",
            )
        finally:
            for future in running:
                future.cancel()
            try:
                self.client.run(_discard, run)
            except Exception:  # the run is over; a worker that cannot answer keeps nothing of use
                pass

    def _collect(self, run, generation: int, finish, merge: Callable, covered: set[int]) -> set[int]:
        """Seal the generation on every worker, keep its accumulators that
        share no task with another kept one (largest first) nor with
        `covered`, merge their finish(acc), and give the task numbers merged."""
        listing = []
        for worker, got in sorted(self._on_workers(_seal, run, generation).items()):
            listing.extend((worker, tuple(key), done, spoiled) for key, done, spoiled in got)
        listing.sort(key=lambda entry: (-len(entry[2]), entry[0], entry[1]))
        taken, keep = set(covered), []
        for _, key, done, spoiled in listing:
            if not spoiled and taken.isdisjoint(done):
                taken.update(done)
                keep.append(key)
        merged: set[int] = set()
        for _, parts in sorted(self._on_workers(_finish, run, finish, keep).items()):
            for done, result in parts:
                merged.update(done)
                merge(result)
        return merged

    def _on_workers(self, function, *args) -> dict:
        """client.run on every worker; a worker lost meanwhile is left out
        (its accumulators with it), any other error is raised."""
        found = self.client.run(function, *args, on_error="return")
        for worker, got in list(found.items()):
            if isinstance(got, OSError):  # CommClosedError is one
                del found[worker]
            elif isinstance(got, BaseException):
                raise got
        return found

    def close(self) -> None:
        self._scattered.clear()


class Session:
    """A context manager: connects (or starts a LocalCluster), checks the
    workers, and gives the executor; closes what it opened."""

    def __init__(self, address: str, versions: Callable[[], tuple]):
        self.address = address
        self.versions = versions
        self.kind, self.n = parse(address)
        self.cluster = self.client = self.executor = None

    def __enter__(self) -> DaskExecutor:
        import logging

        distributed = _import_distributed()
        timeout = connect_timeout()
        # Dask's own log lines are not nbcli's diagnostics: what fails is said in
        # one line here (Dask's logging config sets levels on its sub-loggers too)
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name == "distributed" or name.startswith("distributed."):
                logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            if self.kind == "local":
                import dask

                from nbcli.run.executor import cpu_count

                # forkserver: the workers start from a fork of a clean server
                # process (about 0.3 s sooner than spawn's fresh interpreters).
                # No MALLOC_TRIM_THRESHOLD_ (Dask's nanny sets 65536): setting it
                # turns off glibc's adaptive mmap threshold, so every numpy array
                # over 128 KB is mapped and unmapped again, and counting cost 25%
                # more CPU (make bench-dask; docs/guide/dask.md)
                settings = {
                    "distributed.worker.multiprocessing-method": "forkserver",
                    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                }
                with dask.config.set(settings):
                    self.cluster = distributed.LocalCluster(
                        n_workers=self.n or cpu_count(),
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=":0",  # the scheduler's HTTP server is always started: on a free port
                        silence_logs=logging.ERROR,
                    )
                target = self.cluster
            else:
                _check_remote(self.address, timeout)
                target = self.address
            self.client = distributed.Client(target, timeout=timeout, set_as_default=False)
        except ExecutorError:
            raise
        except RuntimeError as exc:  # LocalCluster: a worker process did not start
            self.__exit__(None, None, None)
            raise ExecutorError(f"could not start a local Dask cluster: {_first_line(exc)}") from None
        except (OSError, TimeoutError) as exc:
            self.__exit__(None, None, None)
            raise ExecutorError(
                f"cannot reach the Dask scheduler at {self.address}: {_first_line(exc)}", hint=_REACH_HINT
            ) from None
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError):
            self.__exit__(None, None, None)
            raise ExecutorError(
                f"the Dask scheduler at {self.address} has no workers",
                hint="start one with `dask worker " + self.address + "`",
            ) from None
        self.executor = DaskExecutor(self.client, self.address, self.versions)
        try:
            self.executor.check_workers()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self.executor

    def __exit__(self, *exc) -> None:
        if self.executor is not None:
            self.executor.close()
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # closing is best effort; the results are already in
                    pass
        self.client = self.cluster = self.executor = None


_REACH_HINT = "start one with `dask scheduler` (and `dask worker ADDRESS` on each machine), or use local:N"


def connect_timeout() -> float:
    """Seconds to reach a scheduler (and for it to answer, and to have a
    worker): NBCLI_CLUSTER_TIMEOUT if set, else CONNECT_TIMEOUT."""
    import os

    value = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not value:
        return CONNECT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 3600:
        raise ExecutorError(
            f"{TIMEOUT_VARIABLE}={value}: not a number of seconds from 0 to 3600",
            hint=f"unset it for the default, {CONNECT_TIMEOUT:g} s",
        )
    return seconds


def _check_remote(address: str, timeout: float) -> None:
    """A scheduler's address is said to be wrong in one line before Dask's
    client is made: an unknown scheme, tls:// without Dask's TLS settings,
    a refused connection (at once: Dask would retry it), and anything that
    is not a Dask scheduler answering within `timeout` seconds (a tarpit, a
    hung scheduler, SSH, HTTP: Dask's own handshake waits forever for a
    peer that never answers, and reads other protocols' bytes as a frame
    length). In-process (inproc://) addresses are left to Dask."""
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    scheme, location = parse_address(address)
    try:
        get_backend(scheme)
    except ValueError:
        raise ExecutorError(
            f"--cluster {address}: unknown address scheme {scheme}://", hint="give tcp://HOST:PORT or local:N"
        ) from None
    if scheme == "inproc":
        return
    from distributed.security import Security

    connection_args = Security().get_connection_args("client")
    if scheme in ("tls", "wss") and connection_args.get("ssl_context") is None:
        raise ExecutorError(
            f"--cluster {address}: a {scheme}:// address needs Dask's TLS settings, and none are configured",
            hint="set distributed.comm.tls.ca-file, .client.cert and .client.key in Dask's configuration",
        )
    if scheme == "tcp":
        _reachable(address, location, timeout)
    _handshake(address, connection_args, timeout)


def _reachable(address: str, location: str, timeout: float) -> None:
    """A refused tcp:// connection is said at once (Dask's client would
    retry it for the whole timeout)."""
    import socket

    from distributed.comm.addressing import parse_host_port

    try:
        host, port = parse_host_port(location)
    except ValueError as exc:
        raise ExecutorError(
            f"--cluster {address}: {exc}", hint="give tcp://HOST:PORT (Dask's default port is 8786)"
        ) from None
    if not host or not 0 < port < 65536:
        raise ExecutorError(f"--cluster {address}: no host or no port", hint="give tcp://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {address}: {exc.strerror or _first_line(exc)}", hint=_REACH_HINT
        ) from None


def _handshake(address: str, connection_args: dict, timeout: float) -> None:
    """Dask's handshake and an `identity` call, in `timeout` seconds: the
    peer must be a Dask scheduler."""
    import asyncio

    from distributed.comm import connect

    async def identity() -> dict:
        comm = await connect(address, timeout=timeout, **connection_args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> dict:
        return await asyncio.wait_for(identity(), timeout)

    try:
        reply = asyncio.run(bounded())
    except TimeoutError:
        raise ExecutorError(
            f"the Dask scheduler at {address} did not answer in {timeout:g} s "
            "(a hung scheduler, or not a Dask scheduler's address)",
            hint=f"check the scheduler and the address; {TIMEOUT_VARIABLE}=SECONDS waits longer",
        ) from None
    except OSError as exc:  # refused, unreachable, or closed during the handshake
        raise ExecutorError(
            f"cannot reach the Dask scheduler at {address}: {_first_line(exc)}", hint=_REACH_HINT
        ) from None
    except Exception as exc:  # another protocol's bytes read as Dask's (MemoryError: a "frame" of exabytes)
        raise ExecutorError(
            f"{address} is not a Dask scheduler: it does not speak Dask's protocol ({type(exc).__name__})",
            hint="give the scheduler's address (tcp://HOST:8786 unless it was told another port)",
        ) from None
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        raise ExecutorError(
            f"{address} is a Dask {kind}, not a scheduler"
            if isinstance(kind, str)
            else f"{address} is not a Dask scheduler",
            hint="give the scheduler's address (the one `dask worker` is given)",
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
