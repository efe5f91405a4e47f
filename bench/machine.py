"""What every benchmark records about where it ran, and how it prints times."""

from __future__ import annotations

import os
import platform
import subprocess


def machine(**versions: str) -> dict:
    """nproc, CPU model, Python, CasADi and NumPy versions (plus ``versions``), and the git
    commit of this checkout with whether the measured sources are dirty."""
    import casadi as cs
    import numpy as np

    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def git(*cmd: str) -> str:
        try:
            return subprocess.run(
                ["git", *cmd], cwd=root, capture_output=True, text=True, timeout=30
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "unknown"

    return {
        "git_commit": git("rev-parse", "--short", "HEAD"),
        "git_dirty": git("status", "--porcelain", "--", "acausal", "solvers", "components"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "casadi": cs.__version__,
        "numpy": np.__version__,
        **versions,
        "platform": platform.platform(),
    }


def fmt(x: float | None) -> str:
    """A time in seconds, three significant digits ("-" when missing)."""
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"
