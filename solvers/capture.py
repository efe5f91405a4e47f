"""Capture what C libraries (SUNDIALS via CasADi) print on the process's stderr."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def native_stderr(sink: list[str]) -> Iterator[None]:
    """Redirect file descriptor 2 and ``sys.stderr`` (CasADi prints through either) to a
    temporary file; append what was printed to ``sink``."""
    sys.stderr.flush()
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # e.g. stderr replaced by a test runner
        fd = 2
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(fd)
        os.dup2(tmp.fileno(), fd)
        python_stderr, text = sys.stderr, io.StringIO()
        sys.stderr = text
        try:
            yield
        finally:
            sys.stderr = python_stderr
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            sink.append(tmp.read().decode(errors="replace") + text.getvalue())
