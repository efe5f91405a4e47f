"""Progress of long batches: a tqdm bar of members done, failures and the time left.

``progress`` arguments take ``None`` (a bar when tqdm is installed and stderr is a terminal,
else quiet), ``True`` (a bar; tqdm is required: ``pip install -e ".[progress]"``), ``False``
(nothing) or a callable that receives a :class:`BatchProgress` after each finished task.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acausal.errors import OptionError

PROGRESS_EXTRA = 'pip install -e ".[progress]"  (or: pip install tqdm)'

ProgressOption = bool | None | Callable[["BatchProgress"], None]


@dataclass(frozen=True)
class BatchProgress:
    """Members (or fits) finished so far, how many of them failed, the total, seconds."""

    done: int
    failed: int
    total: int
    elapsed: float

    def __str__(self) -> str:
        return f"{self.done}/{self.total} done, {self.failed} failed, {self.elapsed:.1f} s"


def _tqdm() -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


class Progress:
    """Counts finished members and failures and shows them as ``progress`` asks."""

    def __init__(self, total: int, progress: ProgressOption, desc: str) -> None:
        if not (progress is None or isinstance(progress, bool) or callable(progress)):
            raise OptionError(
                f"progress={progress!r:.60} must be None (a bar on a terminal), True, False "
                "or a callable receiving a BatchProgress"
            )
        self.total, self.done, self.failed = total, 0, 0
        self.tic = time.perf_counter()
        self.sink = progress if callable(progress) else None
        self.bar = None
        if progress is True or (progress is None and sys.stderr.isatty()):
            tqdm = _tqdm()
            if tqdm is None and progress is True:
                raise ImportError(f"progress=True needs tqdm: {PROGRESS_EXTRA}")
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
