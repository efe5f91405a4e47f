"""Where many independent tasks run: serially, on local threads or processes, or on a Dask
distributed cluster; one interface for batches of simulations and for many fits.

``executor`` is one of:

- ``None`` or ``"serial"``: in this process, one task after the other;
- ``"threads"``: a thread pool of :func:`available_cores` threads (for simulations: CasADi's
  own threads, see :func:`solvers.simulate_many`);
- ``"processes"``: a process pool of :func:`available_cores` workers, made for the call and
  closed after it (forked from a server process that imported this package and the task's
  module when it started: safe with threads running, and quick after the first call); the
  shared payload (a pickled model or builder) goes to each worker once. A script needs the
  ``if __name__ == "__main__":`` guard (its workers import it);
- a :class:`concurrent.futures.Executor` of yours (kept open: reuse it across calls to pay the
  worker start-up once); the payload travels with each task and is built once per worker;
- a ``dask.distributed.Client`` (e.g. on a ``LocalCluster``), or a scheduler address
  ``"tcp://host:8786"`` for which a client is opened and closed: the payload is a Dask task
  whose result moves to each worker once. Dask is an optional extra
  (``pip install -e ".[dask]"``).

A task is ``fn(shared, item)``; ``shared`` is a :class:`Shared` whose :meth:`Shared.value`
unpickles the payload once per worker thread. A task that raises, or whose worker dies (Dask
retries it on another worker up to its ``distributed.scheduler.allowed-failures``; a local
pool cannot), comes back as a :class:`TaskFailure` with the message: never missing.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import multiprocessing
import os
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from acausal.errors import OptionError

KINDS = ("serial", "threads", "processes")
DASK_EXTRA = 'pip install -e ".[dask]"  (or: pip install "dask[distributed]")'
KEPT_PAYLOADS = 4  # built payloads a worker process keeps (most recently used)

# A worker's own state (a local pool's worker process, a Dask worker, the threads of an
# executor the caller keeps): the payloads the pool's initializer installed, and each
# thread's unpickled payloads (.built). The calls of this process never fill them: their
# tasks build in the call's Shared (Shared.in_call).
_INSTALLED: dict[str, bytes] = {}
_WORKER = threading.local()


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS reports one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@dataclass(frozen=True)
class TaskFailure:
    """A task that raised or whose worker died: the error's type and message."""

    message: str

    @classmethod
    def of(cls, exc: BaseException) -> TaskFailure:
        return cls(f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class Shared:
    """A payload shared by every task of a call: ``data`` (pickled bytes), or ``None`` when
    a pool initializer installed it in the worker under ``token`` (a hash of the bytes).
    ``built``: where the tasks of one call in this process (serial, threads) keep it built,
    once per thread, dropped with the call (:meth:`in_call`); None in a worker."""

    token: str
    data: bytes | None
    built: threading.local | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, obj: Any, what: str) -> Shared:
        """``obj`` pickled; an object that does not pickle (a lambda, a local function, a
        CasADi Callback) is an error naming ``what``."""
        try:
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise OptionError(
                f"{what} does not pickle ({exc}); to run on other processes give a compiled "
                "ac.Model, an ac.System, or a module-level function that returns one"
            ) from None
        return cls(hashlib.sha1(data).hexdigest(), data)

    def stripped(self) -> Shared:
        return Shared(self.token, None)

    def in_call(self) -> Shared:
        """This payload for the tasks of one call in this process: built once per thread
        and dropped with the call."""
        return Shared(self.token, self.data, threading.local())

    def value(self) -> Any:
        """The unpickled payload, with a ``dict`` a task may keep its own caches in: built
        once per thread (tasks on other threads get their own, so no model or simulator is
        shared between threads) and kept for the call's next tasks (:meth:`in_call`), or
        in a worker for its next tasks (the :data:`KEPT_PAYLOADS` latest)."""
        store = _WORKER if self.built is None else self.built
        built = store.__dict__.setdefault("built", OrderedDict())
        if self.token not in built:
            data = self.data if self.data is not None else _INSTALLED[self.token]
            built[self.token] = (pickle.loads(data), {})
        built.move_to_end(self.token)
        while len(built) > KEPT_PAYLOADS:
            built.popitem(last=False)
        return built[self.token]


def _install(token: str, data: bytes) -> None:
    """A local pool's initializer: keep the payload in the worker."""
    _INSTALLED[token] = data


def _dask_module() -> Any:
    """``dask.distributed``, imported on first use; missing: an error naming the extra."""
    try:
        import distributed
    except ImportError:
        raise ImportError(f"a Dask executor needs dask.distributed: {DASK_EXTRA}") from None
    return distributed


def _is_dask_client(obj: object) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed" and hasattr(obj, "submit")


def _is_address(obj: object) -> bool:
    return isinstance(obj, str) and obj.split("://")[0] in ("tcp", "tls", "inproc", "ws", "wss")


def check_executor(executor: object) -> str:
    """The kind of ``executor`` (``"serial"``, ``"threads"``, ``"processes"``, ``"futures"``
    or ``"dask"``), or an error that lists the kinds taken."""
    if executor is None or executor == "serial":
        return "serial"
    if isinstance(executor, str) and executor in KINDS:
        return executor
    if isinstance(executor, cf.Executor):
        return "futures"
    if _is_dask_client(executor) and getattr(executor, "status", None) in ("closing", "closed"):
        raise OptionError(
            f"executor={executor!r:.80} is a Dask client that is {executor.status}: give an "
            "open one (dask.distributed.Client(cluster) or Client('tcp://host:port')), and "
            "close it after the last call that uses it"
        )
    if _is_dask_client(executor) or _is_address(executor):
        return "dask"
    raise OptionError(
        f"executor={executor!r:.80} is not one of: None or 'serial', 'threads', 'processes', "
        "a concurrent.futures.Executor, a dask.distributed.Client, or a Dask scheduler "
        "address 'tcp://host:port'"
    )


def worker_count(executor: object) -> int:
    """How many tasks ``executor`` runs at once (threads of a Dask cluster, a pool's
    workers); a Dask executor must be a client here (see :func:`executor_session`)."""
    kind = check_executor(executor)
    if kind == "serial":
        return 1
    if kind == "futures":
        return int(getattr(executor, "_max_workers", available_cores()))
    if kind == "dask":
        return max(1, sum(executor.nthreads().values()))
    return available_cores()


def describe_executor(executor: object) -> str:
    """A short name of ``executor`` for reports, e.g. ``"dask (2 workers)"``."""
    kind = check_executor(executor)
    if kind in ("serial", "threads", "processes"):
        return kind if kind == "serial" else f"{kind} ({available_cores()})"
    return f"{kind} ({worker_count(executor)} workers)"


@contextmanager
def executor_session(executor: object) -> Iterator[object]:
    """``executor`` for the block, checked; a Dask scheduler address becomes a client
    opened for the block (and closed after it)."""
    check_executor(executor)
    if not _is_address(executor):
        yield executor
        return
    client = _dask_module().Client(executor)
    try:
        yield client
    finally:
        client.close()


def run_tasks(
    fn: Callable[[Shared, Any], Any],
    shared: Shared,
    items: Sequence[Any],
    executor: object = None,
    *,
    on_done: Callable[[int, Any], None] | None = None,
    name: str = "task",
) -> list[Any]:
    """``[fn(shared, item) for item in items]`` on ``executor``, each outcome a
    :class:`TaskFailure` where the task raised or its worker died. ``on_done(k, outcome)``
    is called in this process as each task finishes (in completion order). ``fn`` must be a
    module-level function (workers import it by name). A Dask scheduler address is opened
    for the call (:func:`executor_session`)."""
    outcomes: list[Any] = [None] * len(items)

    def done(k: int, outcome: Any) -> None:
        outcomes[k] = outcome
        if on_done is not None:
            on_done(k, outcome)

    with executor_session(executor) as executor:
        kind = check_executor(executor)
        if kind == "serial":
            shared = shared.in_call()
            for k, item in enumerate(items):
                try:
                    outcome = fn(shared, item)
                except Exception as exc:  # a task's failure is its outcome
                    outcome = TaskFailure.of(exc)
                done(k, outcome)
        elif kind == "dask":
            _run_dask(executor, fn, shared, items, done, name)
        elif kind == "futures":
            _run_futures(executor, fn, shared, items, done)
        elif kind == "threads":
            with cf.ThreadPoolExecutor(available_cores()) as pool:
                _run_futures(pool, fn, shared.in_call(), items, done)
        else:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_preload(fn))
            pool = cf.ProcessPoolExecutor(
                available_cores(),
                mp_context=context,
                initializer=_install,
                initargs=(shared.token, shared.data),
            )
            with pool:
                _run_futures(pool, fn, shared.stripped(), items, done)
    return outcomes


def _preload(fn: Callable) -> list[str]:
    """What the fork server imports when it starts (its forked workers then have it): this
    package and the task's module (a script's ``__main__`` is re-run by each worker anyway)."""
    return [__name__.split(".")[0]] + ([fn.__module__] if fn.__module__ != "__main__" else [])


def _run_futures(
    pool: cf.Executor,
    fn: Callable,
    shared: Shared,
    items: Sequence[Any],
    done: Callable[[int, Any], None],
) -> None:
    """Tasks on a concurrent.futures pool; a dead worker process breaks the pool and every
    unfinished task comes back as a :class:`TaskFailure` (a local pool does not retry)."""
    futures = {pool.submit(fn, shared, item): k for k, item in enumerate(items)}
    for fut in cf.as_completed(futures):
        try:
            outcome = fut.result()
        except Exception as exc:  # BrokenProcessPool, or the task's own error
            outcome = TaskFailure.of(exc)
        done(futures[fut], outcome)


def _run_dask(
    client: Any,
    fn: Callable,
    shared: Shared,
    items: Sequence[Any],
    done: Callable[[int, Any], None],
    name: str,
) -> None:
    """Tasks on a Dask cluster, results taken as they complete. The payload is a task of
    its own (its result stays in worker memory and moves to each worker once), so the
    scheduler can recompute it when the workers holding it die, as it does a dead worker's
    tasks: finished results are kept, and a task whose workers died more than
    ``distributed.scheduler.allowed-failures`` times is reported with ``KilledWorker``."""
    distributed = _dask_module()
    stamp = f"{name}-{shared.token[:8]}-{time.time_ns()}"
    payload = client.submit(_identity, shared, key=f"{stamp}-payload", pure=False)
    futures = [
        client.submit(fn, payload, item, key=f"{stamp}-{k}", pure=False)
        for k, item in enumerate(items)
    ]
    index = {fut.key: k for k, fut in enumerate(futures)}
    try:
        for fut in distributed.as_completed(futures):
            try:
                outcome = fut.result()
            except Exception as exc:  # the task's error, or KilledWorker
                outcome = TaskFailure.of(exc)
            done(index[fut.key], outcome)
            fut.release()
    finally:
        client.cancel([*futures, payload])


def _identity(value: Any) -> Any:
    return value
