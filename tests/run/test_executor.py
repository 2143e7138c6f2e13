"""The executors (nbcli/run/executor.py): the pool gives what this process
gives, in input order; an error or a dead worker is an error here, not a
hang."""

from __future__ import annotations

import os
import time

import pytest

from nbcli.run.executor import IDLE, InProcess, ProcessPool, WorkerError


def _square(offset, x):
    if x == 13:
        raise ValueError("thirteen")
    time.sleep(0.001 * (x % 3))  # finish out of order
    return x * x + offset


def _die(_, x):
    if x == 5:
        os._exit(3)
    return x


def test_ordered_map_gives_input_order_and_errors_as_results():
    items = [(i, i) for i in range(40)]
    items.insert(7, IDLE)
    for executor in (InProcess(), ProcessPool(2)):
        got = list(executor.map(_square, 1, items))
        assert [k for k, _ in got] == list(range(40))
        assert [r for k, r in got if k != 13] == [i * i + 1 for i in range(40) if i != 13]
        assert isinstance(got[13][1], ValueError) and str(got[13][1]) == "thirteen"


def test_idle_hands_back_every_result_held():
    pulled = []

    def items():
        for i in range(3):
            pulled.append(i)
            yield i, i
        yield IDLE
        pulled.append("after")
        yield 3, 3

    seen = []
    for key, _ in ProcessPool(2).map(_square, 0, items()):
        seen.append((key, list(pulled)))
    # every result of the first three came back before the input went on
    assert [s for k, s in seen if k < 3] == [[0, 1, 2]] * 3


def test_a_dead_worker_is_an_error_not_a_hang():
    start = time.monotonic()
    with pytest.raises(WorkerError, match="died"):
        list(ProcessPool(2).map(_die, None, ((i, i) for i in range(20))))
    assert time.monotonic() - start < 10


def _start(offset):
    return [offset]


def _fold(acc, task):
    if task == "boom":
        raise KeyError(task)
    acc.append(task)


def _finish(acc):
    return sum(acc)


def test_map_reduce_merges_every_worker_and_reports_a_worker_error():
    for executor in (InProcess(), ProcessPool(3)):
        merged = []
        executor.map_reduce(_start, _fold, _finish, 0, range(100), merged.append)
        assert sum(merged) == sum(range(100))
    with pytest.raises(WorkerError, match="KeyError"):
        ProcessPool(2).map_reduce(_start, _fold, _finish, 0, ["boom", 1, 2], lambda _: None)
