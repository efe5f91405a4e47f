"""Every quantity of the component library declares its SI unit, and the units are
Modelica's (Modelica.SIunits of each parameter of the Modelica Standard Library class of
the same name)."""

import pint
import pytest

from acausal.units import LIBRARY_UNITS, derivative_unit, pint_derivative_unit
from components import electrical as el
from components import planar as pl
from components import rotational as rot
from components import thermal as th
from components import translational as tr
from tests.library import CLASSES, MODE_DEPENDENT, MODE_DEPENDENT_IN, with_every_option

UNITS = pint.UnitRegistry()
UNITS.define("Ohm = ohm")  # Modelica's spelling


def test_the_library_is_enumerated():
    names = {n for n, _ in CLASSES}
    # one class of each domain and kind, so an import change cannot empty the check
    assert {"electrical.Resistor", "translational.Mass", "rotational.Inertia"} <= names
    assert {"thermal.HeatCapacitor", "planar.SliderCrank", "rotational.Brake"} <= names
    assert len(CLASSES) > 60


@pytest.mark.parametrize("options", [False, True], ids=["defaults", "every_option"])
@pytest.mark.parametrize(("name", "cls"), CLASSES, ids=[n for n, _ in CLASSES])
def test_every_quantity_declares_a_unit_pint_parses(name, cls, options):
    comp = cls("x", **(with_every_option(cls) if options else {}))
    missing, unparsed = [], []
    for part in comp.walk():
        for local, q in part.quantities.items():
            where = f"{part.full_name}.{local}"
            if local in MODE_DEPENDENT | MODE_DEPENDENT_IN.get(type(part), set()):
                assert not q.unit, f"{where}: a path parameter, declared in {q.unit}"
                continue
            if not q.unit:
                missing.append(where)
                continue
            try:
                UNITS.Quantity(1.0, q.unit)
            except pint.errors.PintError:
                unparsed.append(f"{where} [{q.unit}]")
    assert not missing, f"{name}: quantities without a unit: {missing}"
    assert not unparsed, f"{name}: units pint does not parse: {unparsed}"
    # and every one is among the units known without pint (acausal.units.LIBRARY_UNITS)
    declared = {q.unit for part in comp.walk() for q in part.quantities.values() if q.unit}
    assert declared <= LIBRARY_UNITS.keys(), f"{name}: add {declared - LIBRARY_UNITS.keys()}"


def test_the_units_known_without_pint_are_pints():
    """Each of ``LIBRARY_UNITS`` parses, and its first and second time derivatives are
    pint's (the unit divided by s and s^2, as ``unit_text`` writes them)."""
    for unit, derivatives in LIBRARY_UNITS.items():
        UNITS.Quantity(1.0, unit)
        assert derivatives == tuple(pint_derivative_unit(unit, k) for k in (1, 2)), unit
    assert derivative_unit("V", 1) == "V/s" and derivative_unit("m", 3) == "m/s^3"


def test_library_models_build_compile_and_simulate_without_pint():
    """Building, compiling and simulating library models in a fresh process never imports
    pint (its import and registry cost some 0.3-0.4 s); converting a value with a unit
    does."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import sys\n"
        "import acausal as ac\n"
        "from examples.ladders import chain, rc_ladder\n"
        "from examples.references.thermal_plate import plate\n"
        "from solvers import simulate\n"
        "for system in (rc_ladder(4), chain(4), plate(3)):\n"
        "    simulate(ac.compile(system), t_end=0.1, dt=0.05)\n"
        "assert 'pint' not in sys.modules, 'pint imported'\n"
        "from components import electrical as el\n"
        "assert el.Resistor('R', R='2 kOhm').quantities['R'].value == 2000.0\n"
        "assert 'pint' in sys.modules\n"
    )
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


# Modelica's units (Modelica.SIunits types of the MSL parameters of the same name; where
# MSL declares a bare Real the unit is what makes the equation consistent, noted)
MODELICA = [
    (el.Resistor("x"), "R", "Ohm"),
    (el.Conductor("x"), "G", "S"),
    (el.Capacitor("x", v0=0.0), "C", "F"),
    (el.Capacitor("x", v0=0.0), "v0", "V"),
    (el.Inductor("x", i0=0.0), "L", "H"),
    (el.Inductor("x", i0=0.0), "i0", "A"),
    (el.IdealDiode("x"), "Ron", "Ohm"),
    (el.IdealDiode("x"), "Goff", "S"),
    (el.IdealDiode("x"), "Vknee", "V"),
    (el.Diode("x"), "Vt", "V"),
    (el.EMF("x"), "k", "N*m/A"),
    (el.IdealTransformer("x"), "n", "1"),
    (el.SineVoltage("x"), "f", "Hz"),
    (el.SineVoltage("x"), "phase", "rad"),
    (el.StepVoltage("x"), "start_time", "s"),
    (tr.Mass("x", s0=0.0, v0=0.0), "m", "kg"),
    (tr.Mass("x", s0=0.0, v0=0.0), "v0", "m/s"),
    (tr.Spring("x"), "c", "N/m"),
    (tr.Damper("x"), "d", "N*s/m"),
    (tr.SpringDamper("x"), "s_rel0", "m"),
    (tr.MassWithStopAndFriction("x"), "F_prop", "N*s/m"),
    (tr.MassWithStopAndFriction("x"), "fexp", "s/m"),
    (tr.Brake("x"), "cgeo", "1"),  # MSL: Real; f = mu cgeo fn
    (rot.Inertia("x", phi0=0.0, w0=0.0), "J", "kg*m^2"),
    (rot.Inertia("x", phi0=0.0, w0=0.0), "w0", "rad/s"),
    (rot.Spring("x"), "c", "N*m/rad"),
    (rot.Damper("x"), "d", "N*m*s/rad"),
    (rot.IdealGear("x"), "ratio", "1"),
    (rot.Clutch("x"), "mu_k", "1"),
    (rot.Clutch("x"), "cgeo", "m"),  # MSL: Real; tau = mu cgeo fn
    (rot.BearingFriction("x"), "peak", "1"),
    (rot.TorqueStep("x"), "step_torque", "N*m"),
    (rot.ConstantSpeed("x"), "w_fixed", "rad/s"),
    (th.HeatCapacitor("x", T0=300.0), "C", "J/K"),
    (th.ThermalConductor("x"), "G", "W/K"),
    (th.ThermalResistor("x"), "R", "K/W"),
    (th.FixedHeatFlow("x"), "Q_flow", "W"),
    (pl.Body("x"), "I", "kg*m^2"),
    (pl.Body("x"), "g", "m/s^2"),
    (pl.World("x"), "g", "m/s^2"),
    (pl.Revolute("x", use_axis=True), "P_axis", "W"),
]


@pytest.mark.parametrize(
    ("comp", "local", "unit"),
    MODELICA,
    ids=[f"{type(c).__name__}.{q}" for c, q, _ in MODELICA],
)
def test_units_are_modelicas(comp, local, unit):
    declared = UNITS.Quantity(1.0, comp.quantities[local].unit)
    assert declared.to(unit).magnitude == pytest.approx(1.0, rel=1e-15), (
        f"{comp.full_name}.{local} [{comp.quantities[local].unit}] is not [{unit}]"
    )
