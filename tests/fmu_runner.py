"""Simulate an exported FMU with fmpy in a process where this project cannot be imported.

Run as ``python -I tests/fmu_runner.py`` with a JSON request on stdin: ``path``, ``outputs``
(names), ``stop_time``, ``output_interval``, ``start_values`` (name -> value) and
``tolerance``; it prints JSON: fmpy's ``validate_fmu`` problems, the times and each
output's values (fmpy simulates the kind of FMU it is given). The project's packages are
blocked before fmpy is imported, so the FMU is shown to run on its own (its binary and
description alone).
"""

import importlib.abc
import json
import sys

PROJECT = {"acausal", "components", "solvers", "learning", "examples", "tests", "bench"}


class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in PROJECT:
            raise ImportError(f"{name} is this project's: the FMU must run without it")
        return None


sys.meta_path.insert(0, _Blocked())

from fmpy import simulate_fmu  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402


def main() -> None:
    request = json.load(sys.stdin)
    problems = validate_fmu(request["path"])
    result = simulate_fmu(
        request["path"],
        stop_time=request["stop_time"],
        output_interval=request["output_interval"],
        output=request["outputs"],
        start_values=request.get("start_values", {}),
        relative_tolerance=request.get("tolerance", 1e-9),
    )
    values = {name: result[name].tolist() for name in request["outputs"]}
    json.dump({"problems": problems, "time": result["time"].tolist(), "values": values}, sys.stdout)


if __name__ == "__main__":
    main()
