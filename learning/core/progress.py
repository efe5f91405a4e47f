"""``fit_progress_bar``: a tqdm bar for the ``progress=`` hook of :func:`~learning.fit`,
:func:`~learning.train` and the other fits (iterations or epochs, loss, best, failures)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solvers.progress import check_progress, tqdm_class


@dataclass(frozen=True)
class FitProgress:
    """What a progress callable receives: optimizer iterations (Jacobians for least
    squares), objective evaluations, the last and the best loss, failures, seconds. For
    ``method="collocation"`` a report follows each IPOPT iteration: ``loss`` is the
    collocated objective at that iterate, ``best`` the lowest of the start's simulated loss
    and the collocated objectives of the iterates that satisfy the collocated equations
    (to IPOPT's ``constr_viol_tol``); the final report's ``best`` is the fit's loss.
    The epoch learners (:func:`~learning.train`, :func:`~learning.train_lagrangian`,
    :func:`~learning.reduce_mechanism`) report once per epoch: ``loss`` the epoch's mean
    training loss, ``score`` the epoch's score that picks the kept parameters (the
    validation loss; the training loss without held-out data), ``best`` the lowest score so
    far, the start's included (non-increasing; the kept parameters' score). ``score`` is
    None for :func:`fit`, whose current value is ``loss``."""

    iteration: int
    evaluations: int
    loss: float
    best: float
    n_failed: int
    elapsed: float
    score: float | None = None

    def __str__(self) -> str:
        return (
            f"iteration {self.iteration:4d}  evaluations {self.evaluations:5d}  "
            f"loss {self.loss:.6g}  best {self.best:.6g}  failed {self.n_failed}  "
            f"{self.elapsed:.1f} s"
        )


def fit_progress_bar(total: int | None = None, desc: str = "fit") -> Callable[[FitProgress], None]:
    """A callable for ``progress=`` that moves a tqdm bar to each report's iteration (epoch
    for :func:`~learning.train`), with the loss, the best loss so far and the failed
    simulations after it; ``total``: the expected count (e.g. ``epochs``; None: no ETA). The
    bar writes to stderr and stays quiet when it is not a terminal (tqdm is the ``progress``
    extra)."""
    bar = tqdm_class(desc)(total=total, desc=desc, unit="it", file=sys.stderr, disable=None)

    def show(info: FitProgress) -> None:
        bar.update(max(0, info.iteration - bar.n))
        bar.set_postfix(loss=f"{info.loss:.4g}", best=f"{info.best:.4g}", failed=info.n_failed)
        if total is not None and info.iteration >= total:
            bar.close()

    return show


def progress_sink(
    progress: bool | str | Callable[[FitProgress], None] | None,
    lines: Callable[[FitProgress], None],
    total: int | None = None,
    desc: str = "fit",
) -> Callable[[FitProgress], Any] | None:
    """What a fit's ``progress=`` option asks for (the values of
    :func:`solvers.progress.check_progress`): a callable as given, ``True`` the fit's own
    ``lines`` (printed), ``"bar"`` a :func:`fit_progress_bar` of ``total`` steps, ``False``
    or ``None`` nothing (``None``)."""
    check_progress(progress, desc)
    if callable(progress):
        return progress
    if progress == "bar":
        return fit_progress_bar(total, desc)
    return lines if progress else None
