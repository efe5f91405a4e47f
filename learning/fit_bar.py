"""``fit_progress_bar``: a tqdm bar for the ``progress=`` hook of :func:`~learning.fit`,
:func:`~learning.train` and the other fits (iterations or epochs, loss, best, failures)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from solvers.progress import check_progress, tqdm_class

if TYPE_CHECKING:
    from .fit import FitProgress


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
