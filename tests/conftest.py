"""Fixtures shared across modules: OpenBLAS on one thread, a Dask cluster for the whole
session, a fresh one for a test that kills its workers, and figures closed after every
test."""

import os
import sys
from contextlib import contextmanager

import pytest


@pytest.fixture(scope="session", autouse=True)
def _one_blas_thread():
    """numpy's and scipy's OpenBLAS on one thread in every process of the session (this one
    through :func:`learning.core.blas_threads`, the processes it starts through
    ``OPENBLAS_NUM_THREADS``): the suite already runs a process per core (pytest-xdist), and
    OpenBLAS's own threads spin against the other process's work (on 2 cores a test's
    reference Radau solve or a feasibility check's batched SVD took 2-3x the CPU)."""
    from learning.core import blas_threads

    before = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        with blas_threads(1):
            yield
    finally:
        if before is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = before


@contextmanager
def local_cluster(**config):
    """A 2-worker, one-thread-per-worker Dask ``LocalCluster`` on processes and its client,
    with the Dask settings ``config`` (e.g. ``{"distributed.scheduler.allowed-failures":
    1}``) in force while the scheduler starts. Waits for both workers however long a loaded
    machine takes to start them (no wall-clock limit: a test is about what the cluster does,
    not how fast it comes up)."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    with dask.config.set(config):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None, processes=True
        )
    client = distributed.Client(cluster)
    client.wait_for_workers(2)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="session")
def dask_client():
    """One cluster for every test that only runs work on it (none kills a worker here)."""
    with local_cluster() as client:
        yield client


@pytest.fixture
def killable_client():
    """A cluster of the test's own, whose workers it may kill; a worker is allowed to die
    once per task (Dask retries it) before the task is reported as KilledWorker."""
    with local_cluster(**{"distributed.scheduler.allowed-failures": 1}) as client:
        yield client


@pytest.fixture(autouse=True)
def _close_figures():
    """Figures a test (or the library's plots) left open are closed, so no test sees
    another's figures whatever the order."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
