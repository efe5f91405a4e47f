"""FMU export (solvers.export_fmu): each FMU is simulated by fmpy in a process where this
project cannot be imported (tests/fmu_runner.py), checked by fmpy's validator, and matched
against the project's own IDAS result within 1e-4 of each output's range; parameters set
through FMI change the result as they do here."""

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from examples.ladders import rc_ladder
from examples.references.mechanisms import Variant
from solvers import CompilerError, StaticStatesWarning, export_fmu, simulate

pytest.importorskip("fmpy")
pytestmark = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc")), reason="exporting an FMU needs a C compiler"
)
RUNNER = Path(__file__).with_name("fmu_runner.py")
TOL = dict(rtol=1e-10, atol=1e-12)


def run_fmu(path, outputs, stop_time, interval, start_values=None):
    """fmpy's result for ``outputs`` on the grid ``0, interval, ..., stop_time`` (rows at
    event instants in between dropped), and its validation problems."""
    request = {
        "path": str(path),
        "outputs": list(outputs),
        "stop_time": stop_time,
        "output_interval": interval,
        "start_values": start_values or {},
    }
    done = subprocess.run(
        [sys.executable, "-I", str(RUNNER)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=Path(path).parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    t = np.array(out["time"])
    grid = np.linspace(0.0, stop_time, int(round(stop_time / interval)) + 1)
    # the last row at each grid time (after an event there, as the project reports it)
    rows = [int(np.flatnonzero(np.abs(t - g) <= 1e-9 * max(1.0, stop_time))[-1]) for g in grid]
    return out["problems"], grid, {n: np.array(v)[rows] for n, v in out["values"].items()}


def assert_matches(path, system, outputs, stop_time, interval, params=None, rel=1e-4):
    """The FMU's outputs within ``rel`` of each output's range of the project's result."""
    problems, grid, got = run_fmu(path, outputs, stop_time, interval, params)
    assert problems == []
    ref = simulate(system, grid=grid, params=params, **TOL)
    errors = {}
    for name in outputs:
        scale = max(float(np.ptp(ref[name])), 1e-12)
        errors[name] = float(np.max(np.abs(got[name] - ref[name]))) / scale
    assert max(errors.values()) <= rel, errors
    return errors


def test_rc_ladder_with_a_step_matches_idas_and_follows_parameters(tmp_path):
    system = rc_ladder(4, False, start_time=0.2)
    path = export_fmu(system, tmp_path / "ladder.fmu")
    outputs = ["C1.v", "C4.v", "R1.i", "der(C4.v)", "V.p.v"]
    errors = assert_matches(path, system, outputs, 2.0, 0.01)
    assert max(errors.values()) < 1e-5
    # parameters through FMI: a slower ladder, a higher step, a later start
    params = {"R1.R": 1.0, "C4.C": 0.75, "V.V": 2.0, "V.start_time": 0.5}
    assert_matches(path, system, outputs, 2.0, 0.01, params=params)


def test_description_declares_every_name_with_aliases_and_units(tmp_path):
    model = ac.compile(rc_ladder(2, False))
    path = export_fmu(model, tmp_path / "ladder.fmu")
    with zipfile.ZipFile(path) as fmu:
        root = ET.fromstring(fmu.read("modelDescription.xml"))
        assert f"binaries/linux64/{root.find('ModelExchange').get('modelIdentifier')}.so" in (
            fmu.namelist()
        )
    scalars = root.find("ModelVariables").findall("ScalarVariable")
    by_name = {v.get("name"): v for v in scalars}
    assert set(model.names) <= set(by_name)
    assert set(model.parameters) <= set(by_name)
    # aliases share a value reference exactly where the project's values are equal
    r = simulate(model, t_end=1.0, dt=0.1, **TOL)
    vr = {n: by_name[n].get("valueReference") for n in model.names}
    for a in ("C1.v", "R1.p.i", "R2.i"):
        for b in model.names:
            same = np.array_equal(r[a], r[b])
            if vr[a] == vr[b]:
                assert same, (a, b)
    assert vr["C1.v"] == vr["C1.p.v"] == vr["R2.p.v"]  # one node
    assert vr["R1.i"] != vr["R1.n.i"]  # minus each other: FMI 2.0 has no negated alias
    assert by_name["C1.v"].find("Real").get("unit") == "V"
    assert by_name["R1.R"].get("causality") == "parameter"
    assert by_name["R1.R"].get("variability") == "tunable"
    assert float(by_name["R1.R"].find("Real").get("start")) == model.parameters["R1.R"]
    # each state's derivative points at the state's variable (indices from 1)
    der = by_name["der(C1.v)"].find("Real").get("derivative")
    assert scalars[int(der) - 1].get("name") == "C1.v"
    units = {u.get("name") for u in root.find("UnitDefinitions")}
    assert {"V", "A", "Ohm", "F", "V/s"} <= units


@pytest.mark.parametrize("mechanism", ["slider_crank", "four_bar"])
def test_closed_loop_mechanisms_solve_their_loops_inside_the_fmu(tmp_path, mechanism):
    system = Variant(mechanism, "crank", "torque", 0.0).build()
    with pytest.warns(StaticStatesWarning, match="compile-time choice"):
        path = export_fmu(system, tmp_path / f"{mechanism}.fmu")
    outputs = ["B1.phi", "inertia.w", "B2.phi", "work.W"]
    assert_matches(path, system, outputs, 1.0, 0.01)
    with zipfile.ZipFile(path) as fmu:
        text = ET.fromstring(fmu.read("modelDescription.xml")).get("description")
    assert "compile-time choice" in text


def test_what_is_not_exported_is_a_named_error(tmp_path, monkeypatch):
    system = rc_ladder(1, False)
    with pytest.raises(ac.OptionError, match="co-simulation is not exported yet"):
        export_fmu(system, tmp_path / "a.fmu", kind="co-simulation")
    with pytest.raises(ac.OptionError, match="ends in .fmu"):
        export_fmu(system, tmp_path / "a.zip")
    diode = ac.System("diode")
    src, d, g = el.SineVoltage("V", V=1.0, f=1.0), el.IdealDiode("D"), el.Ground("G")
    diode.connect(src.p, d.p)
    diode.connect(d.n, src.n, g.p)
    with pytest.raises(ac.OptionError, match="events"):
        export_fmu(diode, tmp_path / "d.fmu")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(CompilerError, match="needs a C compiler"):
        export_fmu(system, tmp_path / "a.fmu")
