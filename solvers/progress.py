"""Progress of long batches: a tqdm bar of members done, failures and the time left.

Every ``progress=`` of the package (batches here, :func:`learning.fit`,
:func:`learning.train`, :func:`learning.multi_start`, ...) takes the same values, checked by
:func:`check_progress`: ``None``, ``True``, ``False``, ``"bar"`` or a callable receiving each
report. For a batch: ``None`` a bar when tqdm is installed and stderr is a terminal, else
quiet; ``True`` or ``"bar"`` a bar (tqdm is required: ``pip install -e ".[progress]"``);
``False`` nothing; a callable receives a :class:`BatchProgress` after each finished task.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acausal.errors import OptionError

PROGRESS_EXTRA = 'pip install -e ".[progress]"  (or: pip install tqdm)'

ProgressOption = bool | str | None | Callable[[Any], None]


def check_progress(progress: object, where: str) -> None:
    """``progress`` is one of the values every ``progress=`` takes, or an error naming it."""
    if progress is None or isinstance(progress, bool) or callable(progress) or progress == "bar":
        return
    raise OptionError(
        f"{where}: progress={progress!r:.60} must be True, False, None, 'bar' (a tqdm bar) "
        "or a callable receiving each report"
    )


def tqdm_class(where: str, required: bool = True) -> Any:
    """tqdm's bar class, imported on first use; when it is not installed, an ImportError
    naming the ``progress`` extra (``required``) or None."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if not required:
            return None
        raise ImportError(f"{where}: a progress bar needs tqdm: {PROGRESS_EXTRA}") from None
    return tqdm


@dataclass(frozen=True)
class BatchProgress:
    """Members (or fits) finished so far, how many of them failed, the total, seconds."""

    done: int
    failed: int
    total: int
    elapsed: float

    def __str__(self) -> str:
        return f"{self.done}/{self.total} done, {self.failed} failed, {self.elapsed:.1f} s"


class Progress:
    """Counts finished members and failures and shows them as ``progress`` asks."""

    def __init__(self, total: int, progress: ProgressOption, desc: str) -> None:
        check_progress(progress, desc)
        self.total, self.done, self.failed = total, 0, 0
        self.tic = time.perf_counter()
        self.sink = progress if callable(progress) else None
        self.bar = None
        if progress in (True, "bar") or (progress is None and sys.stderr.isatty()):
            tqdm = tqdm_class(desc, required=progress is not None)
            if tqdm is not None:
                self.bar = tqdm(total=total, desc=desc, unit="member", file=sys.stderr)

    def update(self, done: int, failed: int) -> None:
        """``done`` more finished, ``failed`` of them failed."""
        self.done += done
        self.failed += failed
        if self.bar is not None:
            self.bar.update(done)
            self.bar.set_postfix(failed=self.failed, refresh=False)
        if self.sink is not None:
            elapsed = time.perf_counter() - self.tic
            self.sink(BatchProgress(self.done, self.failed, self.total, elapsed))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
