"""One policy for non-physical parameter values: a library parameter with a physical
minimum (a resistance, capacitance, mass, stiffness, damping, friction coefficient, heat
capacity, ...) declares it, and a value below it builds the component (an active device or
a fit's exploration needs it) with an ``ac.ParameterWarning`` naming the parameter; a
physical value, and every library default, builds silently."""

import warnings

import pytest

import acausal as ac
from components import electrical as el
from components import planar as pl
from components import rotational as rot
from components import thermal as th
from components import translational as tr
from tests.library import CLASSES

# (class, keyword, its quantity's name, the value that is too small, the minimum)
BELOW = [
    (el.Resistor, "R", "R", -5.0, 0),
    (el.Conductor, "G", "G", -1.0, 0),
    (el.Capacitor, "C", "C", -1.0, 0),
    (el.Inductor, "L", "L", -1e-3, 0),
    (el.IdealDiode, "Ron", "Ron", -1e-5, 0),
    (el.IdealDiode, "Goff", "Goff", -1e-5, 0),
    (el.IdealDiode, "Vknee", "Vknee", -0.7, 0),
    (el.IdealSwitch, "Ron", "Ron", -1e-5, 0),
    (el.Diode, "R", "R", -1e8, 0),
    (tr.Damper, "d", "d", -1.0, 0),
    (tr.Spring, "c", "c", -1.0, 0),
    (tr.SpringDamper, "d", "d", -1.0, 0),
    (tr.Mass, "m", "m", -2.0, 0),
    (tr.MassWithStopAndFriction, "F_Coulomb", "F_Coulomb", -5.0, 0),
    (tr.CoulombFriction, "f_coulomb", "f_coulomb", -1.0, 0),
    (tr.SupportFriction, "peak", "peak", 0.5, 1),
    (tr.Brake, "mu_k", "mu_k", -0.5, 0),
    (rot.Damper, "d", "d", -1.0, 0),
    (rot.Spring, "c", "c", -1.0, 0),
    (rot.Inertia, "J", "J", -1.0, 0),
    (rot.Clutch, "cgeo", "cgeo", -1.0, 0),
    (rot.CoulombFriction, "tau_static", "tau_static", -1.0, 0),
    (rot.BearingFriction, "peak", "peak", 0.9, 1),
    (th.HeatCapacitor, "C", "C", -1.0, 0),
    (th.ThermalConductor, "G", "G", -1.0, 0),
    (th.ThermalResistor, "R", "R", -1.0, 0),
    (th.FixedTemperature, "T", "T", -10.0, 0),
    (pl.Body, "m", "m", -1.0, 0),
    (pl.Body, "I", "I", -0.1, 0),
    (pl.SliderCrank, "J", "J", -1.0, 0),
]


@pytest.mark.parametrize(
    ("cls", "keyword", "local", "value", "least"),
    BELOW,
    ids=[f"{c.__module__.split('.')[-1]}.{c.__name__}.{k}" for c, k, *_ in BELOW],
)
def test_a_value_below_the_physical_minimum_warns_naming_the_parameter(
    cls, keyword, local, value, least
):
    with pytest.warns(ac.ParameterWarning) as caught:
        comp = cls("x", **{keyword: value})
    mine = [w for w in caught if w.category is ac.ParameterWarning]
    messages = [str(w.message) for w in mine]
    assert len(messages) == 1, messages
    assert mine[0].filename == __file__  # it points at the line that built the component
    assert messages[0].startswith(f"x.{local} = {value:g} is below its physical minimum {least:g}")
    assert comp.quantities[local].value == value  # built with the value given


def test_the_issues_three_cases():
    """Issue 31: Resistor(R=-5) was silent while Capacitor(C=-1) warned; now both warn the
    same way, and so does a damper with d = -1; R = 5 does not warn."""
    for build, name in [
        (lambda: el.Resistor("R1", R=-5), "R1.R = -5"),
        (lambda: el.Capacitor("C1", C=-1), "C1.C = -1"),
        (lambda: tr.Damper("d1", d=-1), "d1.d = -1"),
    ]:
        with pytest.warns(ac.ParameterWarning, match=f"^{name} is below its physical minimum 0"):
            build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        el.Resistor("R2", R=5)


@pytest.mark.parametrize(("name", "cls"), CLASSES, ids=[n for n, _ in CLASSES])
def test_every_library_default_is_physical(name, cls):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ac.ParameterWarning)
        cls("x")


def test_a_physical_minimum_is_allowed_without_a_warning():
    """The minimum itself is physical: an ideal (lossless) diode, a massless rod end, a
    frictionless contact."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ac.ParameterWarning)
        el.IdealDiode("D", Ron=0.0, Goff=0.0, Vknee=0.0)
        tr.Mass("m", m=0.0)
        rot.BearingFriction("b", peak=1.0)
