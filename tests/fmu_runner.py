"""Simulate an exported FMU with fmpy in a process where this project cannot be imported.

Run as ``python -I tests/fmu_runner.py`` with a JSON request on stdin: ``path``, ``outputs``
(names), ``stop_time``, ``output_interval``, ``start_values`` (name -> value) and
``tolerance`` (or ``changes`` and ``interval`` instead of the last three: :func:`stepped`);
it prints JSON: fmpy's ``validate_fmu`` problems, the times and each output's values (fmpy
simulates the kind of FMU it is given). The project's packages are blocked before fmpy is
imported, so the FMU is shown to run on its own (its binary and description alone).
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


def stepped(request: dict) -> dict:
    """A co-simulation FMU stepped by hand with ``interval``, the parameters ``changes``
    (time -> name -> value) set between steps; the outputs after each step."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    path = request["path"]
    md = read_model_description(path)
    refs = {v.name: v.valueReference for v in md.modelVariables}
    fmu = FMU2Slave(
        guid=md.guid,
        unzipDirectory=extract(path),
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName="stepped",
    )
    fmu.instantiate()
    fmu.setupExperiment(tolerance=request["tolerance"], startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    outputs = [refs[n] for n in request["outputs"]]
    t, h, times, values = 0.0, request["interval"], [0.0], [fmu.getReal(outputs)]
    changes = {round(float(k) / h): v for k, v in request["changes"].items()}
    for k in range(1, round(request["stop_time"] / h) + 1):
        for name, value in changes.get(k - 1, {}).items():
            fmu.setReal([refs[name]], [value])
        fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
        t = k * h
        times.append(t)
        values.append(fmu.getReal(outputs))
    fmu.terminate()
    fmu.freeInstance()
    columns = list(zip(*values))
    return {"time": times, "values": dict(zip(request["outputs"], map(list, columns)))}


def main() -> None:
    request = json.load(sys.stdin)
    if "changes" in request:
        json.dump(stepped(request), sys.stdout)
        return
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
