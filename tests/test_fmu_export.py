"""FMU export (solvers.export_fmu): each FMU is simulated by fmpy in a process where this
project cannot be imported (tests/fmu_runner.py), checked by fmpy's validator, and matched
against the project's own IDAS result within 1e-6 of each output's range; parameters set
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
import learning as ln
from components import translational as tr
from examples.ladders import rc_ladder
from examples.references.mechanisms import Variant
from examples.references.sine_rc import CubicResistor, measure, rc
from examples.references.switching import friction_system, half_wave
from solvers import CompilerError, StaticStatesWarning, export_fmu, simulate

from .shared import unknown

pytest.importorskip("fmpy")
pytestmark = pytest.mark.skipif(
    not (shutil.which("cc") or shutil.which("gcc")), reason="exporting an FMU needs a C compiler"
)
RUNNER = Path(__file__).with_name("fmu_runner.py")
DESCRIPTION = "modelDescription.xml"
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
        "tolerance": 1e-10,  # CVode's (model exchange), the FMU's own (co-simulation)
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


def assert_matches(path, system, outputs, stop_time, interval, params=None):
    """The FMU's outputs within 1e-6 of each output's range of the project's result (the
    issue asks 1e-4; measured at most 1.8e-7, the rectifier under CVode); the relative
    errors."""
    problems, grid, got = run_fmu(path, outputs, stop_time, interval, params)
    assert problems == []
    ref = simulate(system, grid=grid, params=params, **TOL)
    errors = {}
    for name in outputs:
        scale = max(float(np.ptp(ref[name])), 1e-12)
        errors[name] = float(np.max(np.abs(got[name] - ref[name]))) / scale
    assert max(errors.values()) <= 1e-6, errors
    return errors


KINDS = ["model-exchange", "co-simulation"]


@pytest.mark.parametrize("kind", KINDS)
def test_rc_ladder_with_a_step_matches_idas_and_follows_parameters(tmp_path, kind):
    system = rc_ladder(4, False, start_time=0.2)
    path = export_fmu(system, tmp_path / "ladder.fmu", kind)
    outputs = ["C1.v", "C4.v", "R1.i", "der(C4.v)", "V.p.v"]
    assert_matches(path, system, outputs, 2.0, 0.01)
    # parameters through FMI: a slower ladder, a higher step, a later start
    params = {"R1.R": 1.0, "C4.C": 0.75, "V.V": 2.0, "V.start_time": 0.5}
    assert_matches(path, system, outputs, 2.0, 0.01, params=params)


def test_a_tunable_parameter_set_during_the_run_acts_from_then_on(tmp_path):
    # one RC stage charging from a 1 V step at 0; R doubled at t = 1 through FMI: after it,
    # v = 1 + (v(1) - 1) exp(-(t - 1) / (2 R C)) (closed form)
    system = rc_ladder(1, False)
    path = export_fmu(system, tmp_path / "rc.fmu", "co-simulation")
    request = {
        "path": str(path),
        "outputs": ["C1.v"],
        "stop_time": 3.0,
        "interval": 0.05,
        "tolerance": 1e-10,
        "changes": {"1.0": {"R1.R": 2.0}},
    }
    done = subprocess.run(
        [sys.executable, "-I", str(RUNNER)], input=json.dumps(request), capture_output=True,
        text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    t, v = np.array(out["time"]), np.array(out["values"]["C1.v"])
    v1 = 1 - np.exp(-1.0)  # R = C = 1
    exact = np.where(t <= 1.0, 1 - np.exp(-t), 1 + (v1 - 1) * np.exp(-(t - 1.0) / 2.0))
    assert np.max(np.abs(v - exact)) < 1e-7


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


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mechanism", ["slider_crank", "four_bar"])
def test_closed_loop_mechanisms_solve_their_loops_inside_the_fmu(tmp_path, mechanism, kind):
    system = Variant(mechanism, "crank", "torque", 0.0).build()
    with pytest.warns(StaticStatesWarning, match="compile-time choice"):
        path = export_fmu(system, tmp_path / f"{mechanism}.fmu", kind)
    outputs = ["B1.phi", "inertia.w", "B2.phi", "work.W"]
    assert_matches(path, system, outputs, 1.0, 0.01)
    with zipfile.ZipFile(path) as fmu:
        text = ET.fromstring(fmu.read("modelDescription.xml")).get("description")
    assert "compile-time choice" in text


@pytest.mark.parametrize("kind", KINDS)
def test_ideal_diode_rectifier_switches_as_the_simulator_does(tmp_path, kind):
    # six switchings in 0.05 s: crossings as event indicators, the diode's mode updated at
    # events; D.i = (V - C.v) / Ron with Ron = 1e-6 amplifies any integrator's error 1e6
    # times, so the well-conditioned outputs are compared
    system = half_wave()
    path = export_fmu(system, tmp_path / "rectifier.fmu", kind)
    outputs = ["C.v", "D.v", "R.i", "D.off"]
    errors = assert_matches(path, system, outputs, 0.05, 5e-4)
    assert errors["D.off"] == 0.0  # the same mode at every output time
    # started 'off' against a forward source: the start's event iteration turns it on
    params = {"D.off_start": 1.0, "V.phase": 0.3}
    _, _, got = run_fmu(path, ["D.off", "D.i"], 0.004, 1e-4, params)
    assert got["D.off"][0] == 0.0
    assert got["D.i"][0] == pytest.approx(10.0 * np.sin(0.3) / 1e-6, rel=1e-9)
    assert_matches(path, system, outputs, 0.05, 5e-4, params=params)


@pytest.mark.parametrize("kind", KINDS)
def test_stick_slip_friction_sticks_and_slips_as_the_simulator_does(tmp_path, kind):
    system = friction_system()
    path = export_fmu(system, tmp_path / "stick_slip.fmu", kind)
    outputs = ["m.s", "m.v", "fr.f", "fr.mode"]
    errors = assert_matches(path, system, outputs, 5.0, 0.01)
    assert errors["fr.mode"] == 0.0


def test_a_just_learned_polynomial_resistor_travels_with_its_fitted_values(tmp_path):
    data, _ = measure(CubicResistor("R1"))
    fit = ln.fit(rc(unknown()), data, progress=False)
    path = export_fmu(fit.system, tmp_path / "learned.fmu")
    # its implicit law g_f(i) = g_x(v) is a Newton block, solved inside the FMU
    assert ac.compile(fit.system).dae.z.numel() >= 1
    with zipfile.ZipFile(path) as fmu:
        root = ET.fromstring(fmu.read("modelDescription.xml"))
    starts = {
        v.get("name"): float(v.find("Real").get("start"))
        for v in root.find("ModelVariables")
        if v.get("causality") == "parameter"
    }
    assert all(starts[name] == value for name, value in fit.params.items())
    outputs = ["C.v", "Rx.i", "Rx.v"]
    assert_matches(path, fit.system, outputs, float(data["t"][-1]), 0.05)
    # another value of a learned coefficient through FMI changes it as here
    name = next(iter(fit.params))
    assert_matches(path, fit.system, outputs, 2.0, 0.05, params={name: 2 * fit.params[name]})


@pytest.mark.filterwarnings("ignore:.*unconnected connectors")
def test_a_network_law_exports_as_plain_arithmetic(tmp_path):
    law = ln.MLP(hidden=(6, 6), activation="tanh", inputs=("x", "der(x)"), seed=4)
    system = ac.System("mass")
    mass, fixed = tr.Mass("m", m=1.5, s0=0.8, v0=0.3), tr.Fixed("F")
    U = ln.Unknown("U", ac.Flange, law=law)
    system.connect(mass.flange_a, U.flange_a)
    system.connect(U.flange_b, fixed.flange)
    path = export_fmu(system, tmp_path / "network.fmu")
    assert_matches(path, system, ["m.s", "m.v", "U.f"], 3.0, 0.01)


def test_what_is_not_exported_is_a_named_error(tmp_path, monkeypatch):
    system = rc_ladder(1, False)
    with pytest.raises(ac.OptionError, match="kind must be one of"):
        export_fmu(system, tmp_path / "a.fmu", kind="cosimulation")
    with pytest.raises(ac.OptionError, match="ends in .fmu"):
        export_fmu(system, tmp_path / "a.zip")
    with pytest.raises(ac.OptionError, match="must be a finite time"):
        export_fmu(system, tmp_path / "a.fmu", start_time=float("nan"))
    with pytest.raises(ac.OptionError, match="must be a number"):
        export_fmu(system, tmp_path / "a.fmu", start_time="0")
    # C code of a CasADi function CasADi cannot generate (its generator writes an #error)
    from solvers.fmu import code

    for name in code.SOURCES:
        (tmp_path / name).write_text("#error Code generation not supported for Newton\n")
    with pytest.raises(CompilerError, match="kind Newton, which CasADi cannot write as C"):
        code.build_library(tmp_path, tmp_path / "model.so")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(CompilerError, match="needs a C compiler"):
        export_fmu(system, tmp_path / "a.fmu")


def test_command_line_export_writes_an_fmu_with_the_given_parameters(tmp_path, capsys):
    from learning.cli import main

    (tmp_path / "ladder.py").write_text(
        "from examples.ladders import rc_ladder\nsystem = rc_ladder(3, False, start_time=0.1)\n"
    )
    out = tmp_path / "ladder.fmu"
    args = ["export", str(tmp_path / "ladder.py"), "--fmu", str(out), "--param", "R1.R=2.0"]
    assert main(args) == 0
    assert "wrote" in capsys.readouterr().out
    _, grid, got = run_fmu(out, ["C3.v"], 1.0, 0.01)  # R1.R = 2 is the FMU's own value
    ref = simulate(rc_ladder(3, False, start_time=0.1), grid=grid, params={"R1.R": 2.0}, **TOL)
    assert np.max(np.abs(got["C3.v"] - ref["C3.v"])) < 1e-6 * np.ptp(ref["C3.v"])
    assert main(["export", str(tmp_path / "ladder.py"), "--fmu", str(tmp_path / "x.txt")]) == 1
    assert "ends in .fmu" in capsys.readouterr().err
