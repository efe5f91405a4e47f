"""Units: declared on quantities, checked at declaration, values given with units converted
once, the unit-consistency check of equations, and units carried to models and results."""

import math
import warnings

import pint
import pytest

import acausal as ac


class Coil(ac.Component):
    """A user's one-port with parameters in several units (no library component: these
    tests do not depend on the library's annotations)."""

    def __init__(self, name, R=1.0, L=1.0, w=1.0, T=300.0):
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        self.R = self.parameter("R", R, "Ohm", min=0)
        self.L = self.parameter("L", L, "H")
        self.w = self.parameter("w", w, "rad/s")
        self.T = self.parameter("T", T, "K")
        self.v = self.variable("v", unit="V")
        self.i = self.variable("i", unit="A")
        self.equations(
            self.v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            self.i == self.p.i,
            self.v == self.R * self.i + self.L * ac.der(self.i),
        )


def value(component, name):
    return component.quantities[name].value


# -- values given with units ------------------------------------------------------------------
def test_quantity_strings_are_converted_once_to_the_declared_unit():
    c = Coil("c", R="2 kOhm", L="5 mH", w="10 rpm", T="20 degC")
    assert value(c, "R") == 2000.0  # k = 10^3, exactly
    assert value(c, "L") == pytest.approx(5e-3, rel=1e-15)
    # one revolution per minute is 2 pi rad / 60 s
    assert value(c, "w") == pytest.approx(10 * 2 * math.pi / 60, rel=1e-15)
    assert value(c, "T") == pytest.approx(293.15, rel=1e-15)  # the Celsius offset
    # numbers are taken as they are, in the declared unit
    assert value(Coil("d", R=2.0), "R") == 2.0


def test_a_pint_quantity_of_the_users_own_registry_is_converted():
    ureg = pint.UnitRegistry()  # not the package's registry
    c = Coil("c", R=ureg.Quantity(3, "kohm"), w=ureg.Quantity(60, "rpm"))
    assert value(c, "R") == 3000.0
    assert value(c, "w") == pytest.approx(2 * math.pi, rel=1e-15)  # one turn per second


@pytest.mark.parametrize(
    "given, words",
    [
        ({"R": "2 kg"}, ["c.R", "kg", "Ohm"]),  # another dimension
        ({"w": "10 Hz"}, ["c.w", "Hz", "rad/s", "rpm"]),  # 1 Hz is not 1 rad/s
        ({"R": "two Ohm"}, ["c.R", "'two Ohm'"]),  # no magnitude
        ({"L": "5 mHH"}, ["c.L", "'mHH'"]),  # a unit that does not exist
    ],
)
def test_a_value_in_a_wrong_unit_is_a_unit_error_naming_the_parameter(given, words):
    with pytest.raises(ac.UnitError) as err:
        Coil("c", **given)
    for word in words:
        assert word in str(err.value)


def test_a_value_with_a_unit_for_a_parameter_without_one_is_refused():
    class Gain(ac.Component):
        def __init__(self, name, k):
            super().__init__(name)
            self.parameter("k", k)

    with pytest.raises(ac.UnitError, match=r"g\.k = '2 V'.*declares no unit"):
        Gain("g", "2 V")
    assert Gain("h", 2.0).quantities["k"].value == 2.0


# -- unit strings checked where they are declared ---------------------------------------------
def test_a_misspelt_unit_fails_at_its_declaration_naming_it():
    class Typo(ac.Component):
        def __init__(self, name, kind):
            super().__init__(name)
            if kind == "parameter":
                self.parameter("R", 1.0, "Ohmm")
            else:
                self.variable("v", unit="Ohmm")

    for kind, where in (("parameter", "t.R"), ("variable", "t.v")):
        with pytest.raises(ac.UnitError) as err:
            Typo("t", kind)
        message = str(err.value)
        assert where in message and "'Ohmm'" in message and "did you mean Ohm" in message


def test_a_connector_types_misspelt_unit_names_the_type_and_variable():
    Wire = ac.ConnectorType("Wire", ("v",), ("i",), units={"v": "Vv", "i": "A"})

    class End(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            self.connector("p", Wire)

    with pytest.raises(ac.UnitError, match=r"connector type Wire, variable v: unit 'Vv'"):
        End("e")


def test_inner_outer_and_initial_declare_units():
    class World(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            self.g = self.inner("g", "981 cm/s^2", "m/s^2")

    class Ball(ac.Component):
        def __init__(self, name, h0):
            super().__init__(name)
            self.g = self.outer("g", 9.81, "m/s^2")
            self.h = self.variable("h", start=self.initial("h0", h0, "m"), unit="m")

    world, ball = World("world"), Ball("ball", "120 cm")
    assert world.quantities["g"].unit == "m/s^2"
    assert world.quantities["g"].value == pytest.approx(9.81, rel=1e-15)
    assert ball.quantities["g"].unit == "m/s^2"
    assert ball.quantities["h0"].unit == "m"
    assert ball.quantities["h0"].value == pytest.approx(1.2, rel=1e-15)


# -- the unit-consistency check ---------------------------------------------------------------
class Leaky(ac.Component):
    """A user's resistor whose third equation adds its voltage to its current."""

    def __init__(self, name, R=1.0):
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        R = self.parameter("R", R, "Ohm")
        v, i = self.variable("v", unit="V"), self.variable("i", unit="A")
        self.equations(
            v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            self.p.i == v + i,
            v == R * i,
        )


def one_port(cls, name="R1", **kw):
    s = ac.System("loop")
    comp = cls(name, **kw)
    g = Ground("G")
    s.connect(comp.p, g.p)
    s.connect(comp.n, g.p)
    return s


class Ground(ac.Component):
    def __init__(self, name):
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        self.equations(self.p.v == 0)


def test_a_voltage_added_to_a_current_is_flagged_by_component_and_equation():
    report = ac.check_units(one_port(Leaky))
    assert not report.ok
    (finding,) = report.findings
    assert (finding.component, finding.where) == ("R1", "equation #3")
    assert finding.text == "p.i == v + i" and finding.units == ("V", "A")
    assert str(finding).startswith("R1 equation #3 'p.i == v + i': adds V to A")
    assert "R1 equation #3" in str(report) and "1 problem" in str(report)
    # the component alone gives the same finding
    assert ac.check_units(Leaky("R1")).findings == (finding,)


def test_a_consistent_user_component_passes():
    report = ac.check_units(one_port(Coil, "c"))
    assert report.ok and report.findings == ()
    # two components; Coil's 4 equations and Ground's 1
    assert (report.components, report.equations) == (2, 5)
    assert "consistent" in str(report)


def unit_model(*equations, **units):
    """A component with quantities x, y, z of the given units and the given equations,
    written as functions of the component."""

    class Probe(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            for local, unit in units.items():
                if local.startswith("k_"):
                    setattr(self, local, self.parameter(local, 1.0, unit))
                else:
                    setattr(self, local, self.variable(local, unit=unit))
            self.equations(*[eq(self) for eq in equations])

    return ac.check_units(Probe("probe"))


def problems(report):
    return [f.problem for f in report.findings]


def test_derivatives_are_per_second_and_time_is_in_seconds():
    # tau dv/dt = -v: s * V/s = V; a second derivative is m/s^2
    ok = unit_model(
        lambda c: c.k_tau * ac.der(c.v) == -c.v,
        lambda c: ac.der(ac.der(c.x)) == c.a,
        lambda c: c.v == c.k_V * ac.exp(-ac.time / c.k_tau),
        v="V", x="m", a="m/s^2", k_tau="s", k_V="V",
    )  # fmt: skip
    assert ok.ok, str(ok)
    bad = unit_model(
        lambda c: ac.der(c.v) == c.v,
        lambda c: c.x == ac.time,
        lambda c: ac.der(ac.der(c.x)) == c.w,
        v="V", x="V", w="m/s",
    )  # fmt: skip
    assert problems(bad) == [
        "its left side is in V/s, its right side in V",
        "its left side is in V, its right side in s",
        "its left side is in V/s^2, its right side in m/s",
    ]


def test_functions_need_dimensionless_arguments_and_radians_are_dimensionless():
    ok = unit_model(
        lambda c: c.v == c.k_V * ac.sin(c.k_w * ac.time),  # rad/s * s = rad
        lambda c: c.phi == ac.atan2(c.x, c.y),  # atan2 of two lengths is an angle
        lambda c: c.v == c.k_V * ac.log(c.x / c.y),
        v="V", phi="rad", x="m", y="m", k_V="V", k_w="rad/s",
    )  # fmt: skip
    assert ok.ok, str(ok)
    bad = unit_model(
        lambda c: c.v == c.k_V * ac.exp(c.x),
        lambda c: c.v == c.k_V * ac.tanh(ac.time),
        v="V", x="m", k_V="V",
    )  # fmt: skip
    assert problems(bad) == [
        "takes exp of m (needs a dimensionless argument)",
        "takes tanh of s (needs a dimensionless argument)",
    ]


def test_products_powers_and_branches():
    ok = unit_model(
        lambda c: c.E == c.k_m * c.w**2 / 2 + c.k_c * c.x**2,  # a constant: no unit
        lambda c: c.w == ac.sqrt(c.k_c / c.k_m),
        lambda c: c.x == ac.if_else(c.w > 0, c.k_x, -c.k_x),
        E="J", w="1/s", x="m", k_m="kg", k_c="N/m", k_x="m",
    )  # fmt: skip
    assert ok.ok, str(ok)
    bad = unit_model(
        lambda c: c.x == ac.if_else(c.w > 0, c.k_x, c.w),
        lambda c: c.E == ac.fmax(c.x, c.w),
        lambda c: c.E == c.x ** c.w,
        E="J", w="1/s", x="m", k_x="m",
    )  # fmt: skip
    assert problems(bad) == [
        "has if_else branches in m and 1/s",
        "takes max of m and 1/s",
        "raises to a power in 1/s (needs a dimensionless exponent)",
        "raises m to a variable power (needs a dimensionless base)",
    ]


def test_a_constant_adopts_the_unit_of_what_it_is_added_to():
    # 273.15 + T_c (a constant added to a temperature) and 2*time inside cos (a constant
    # factor may carry the unit: Modelica's literals) pass; a mode multiplies a term freely
    class Stop(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            T, T_c = self.variable("T", unit="K"), self.variable("T_c", unit="K")
            x, f = self.variable("x", unit="m"), self.variable("f", unit="N")
            on = self.relation(x < 0, "on")
            self.equations(
                T == 273.15 + T_c,
                x == 0.1 * ac.cos(2 * ac.time),
                f == on * x * self.parameter("c", 1.0, "N/m"),
                T_c == T + on,  # a mode added to a temperature
            )

    report = ac.check_units(Stop("stop"))
    assert [(f.where, f.problem) for f in report.findings] == [
        ("equation #4", "adds K to 1"),
    ]


def test_start_values_updates_and_outer_parameters_are_checked():
    class Ball(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            g = self.outer("g", 9.81, "m/s")  # not the inner's m/s^2
            h0 = self.parameter("h0", 1.0, "s")
            h = self.variable("h", start=h0, fixed=True, unit="m")
            v = self.variable("v", start=0.0, fixed=True, unit="m/s")
            self.equations(ac.der(h) == v, ac.der(v) == -g)
            self.event([h], {v: -h})

    class World(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            self.inner("g", 9.81, "m/s^2")

    s = ac.System("fall")
    s.add(World("world"), Ball("ball"))
    found = {(f.component, f.where): f.problem for f in ac.check_units(s).findings}
    assert found == {
        ("ball", "equation #2"): "its left side is in m/s^2, its right side in m/s",
        ("ball", "start of h"): "gives h in m a value in s",
        ("ball", "event"): "gives v in m/s a value in m",
        ("ball", "outer"): "ball.g is in m/s, world.g in m/s^2",
    }


def test_connected_connectors_must_agree():
    s = one_port(Coil, "c")
    c = s.components[0]
    c.quantities["p.v"].unit = "A"  # as if its connector type declared another unit
    # one connection set: c.p, c.n and G.p (a loop through the ground)
    found = [f for f in ac.check_units(s).findings if f.where == "connection"]
    assert [(f.text, f.units, f.problem) for f in found] == [
        ("connect(c.p, c.n, G.p)", ("A", "V"), f"c.p.v is in A, {other}.v in V")
        for other in ("c.n", "G.p")
    ]


def test_every_instance_of_a_component_array_is_checked():
    s = ac.System("many")
    g = Ground("G")
    for r in Leaky.array("R", 3):
        s.connect(r.p, g.p)
        s.connect(r.n, g.p)
    report = ac.check_units(s)
    assert [(f.component, f.where, f.problem) for f in report.findings] == [
        (f"R{k}", "equation #3", "adds V to A") for k in (1, 2, 3)
    ]


LEAKY_FILE = """
import acausal as ac
from tests.test_units import Leaky, one_port
system = one_port(Leaky)
"""


def test_the_command_line_checks_units(tmp_path, capsys):
    from learning.cli import main

    bad, good = tmp_path / "bad.py", tmp_path / "good.py"
    bad.write_text(LEAKY_FILE)
    good.write_text(LEAKY_FILE.replace("Leaky", "Coil").replace("(Coil)", "(Coil, 'c')"))
    assert main(["check", "--units", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "R1 equation #3 'p.i == v + i': adds V to A" in out
    assert main(["check", "--units", str(good)]) == 0
    assert "units of loop: consistent" in capsys.readouterr().out


# -- the library and the examples -------------------------------------------------------------
def library_classes():
    from tests.library import CLASSES

    return [pytest.param(cls, id=name) for name, cls in CLASSES]


@pytest.mark.parametrize("cls", library_classes())
def test_every_library_component_passes_the_unit_check(cls):
    from tests.library import MODE_DEPENDENT, MODE_DEPENDENT_IN, with_every_option

    # only the path parameters (a friction's sa, a diode's s: an acceleration or a force by
    # mode) declare no unit, so every other quantity is checked
    path = MODE_DEPENDENT | MODE_DEPENDENT_IN.get(cls, set())
    for options in ({}, with_every_option(cls)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ac.ParameterWarning)
            report = ac.check_units(cls("x", **options))
        assert report.ok, str(report)
        assert {name.rpartition(".")[2] for name in report.undeclared} <= path


def example_systems():
    """The systems the examples build (each builder with the arguments its script uses)."""
    from components import electrical as el
    from examples import cart_pendulum, cauer_filter, ladders, learn_cauer
    from examples import furuta_pendulum as fp
    from examples import nnap_slider_crank as nn
    from examples import positioning_axis as pa
    from examples import reduce_slider_crank as rs
    from examples import two_bar_actuator as tb
    from examples import two_mass_servo as ts

    return {
        "cauer_filter": cauer_filter.build,
        "learn_cauer": lambda: learn_cauer.cauer(el.Resistor("R1", R=learn_cauer.R_TRUE)),
        "rc_ladder": lambda: ladders.rc_ladder(3),
        "chain": lambda: ladders.chain(3),
        "cart_pendulum": lambda: cart_pendulum.truth(cart_pendulum.UNSEEN),
        "furuta": lambda: fp.pendulum_system(fp.true_friction("arm"), fp.true_friction("pendulum")),
        "furuta_baseline": fp.baseline_system,
        "two_mass_servo": lambda: ts.servo(ts.true_friction("motor"), ts.true_friction("load")),
        "positioning_axis": lambda: pa.axis(pa.stick_slip_friction()),
        "positioning_axis_smooth": lambda: pa.axis(pa.smooth_friction()),
        "nnap_slider_crank": lambda: nn.mechanism(nn.true_load()),
        "reduce_slider_crank": lambda: rs.mechanism("train"),
        "two_bar_actuator": lambda: tb.mechanism(*tb.forces("sim1")),
    }


@pytest.mark.parametrize("name", list(example_systems()))
def test_the_examples_systems_pass_the_unit_check(name):
    system = example_systems()[name]()
    report = ac.check_units(system)
    assert report.ok, str(report)
    assert report.components == len(system.all_components())


# -- units carried to the compiled model and the results --------------------------------------
def rlc():
    """A step of 1 V on R = 1 Ohm, L = 1 H and C = 1 F in series."""
    from components import electrical as el

    s = ac.System("rlc")
    V, R = el.StepVoltage("V", V=1.0), el.Resistor("R", R="1 Ohm")
    L, C = el.Inductor("L", L="1000 mH", i0=0.0), el.Capacitor("C", C=1.0, v0=0.0)
    G = el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, L.p)
    s.connect(L.n, C.p)
    s.connect(C.n, V.n, G.p)
    return s


def test_the_model_knows_every_names_unit():
    from components import translational as tr

    model = ac.compile(rlc())
    units = model.units
    assert set(units) == set(model.names) | set(model.parameters)
    expected = {
        "C.v": "V", "L.i": "A", "R.p.v": "V", "C.n.i": "A",  # variables, aliases
        "der(C.v)": "V/s", "der(L.i)": "A/s",  # derivatives: per second
        "R.R": "Ohm", "L.L": "H", "C.C": "F", "V.start_time": "s",  # parameters
    }  # fmt: skip
    assert {n: units[n] for n in expected} == expected
    # a prescribed position differentiated twice by index reduction: m/s^2
    s = ac.System("servo")
    mass, servo = tr.Mass("mass", m=1.0), tr.Position("servo", s=0.1 * ac.sin(ac.time))
    s.connect(servo.flange, mass.flange_a)
    with pytest.warns(UserWarning, match="unconnected"):  # the mass's free flange
        moved = ac.compile(s)
    assert moved.units["der(der(mass.s))"] == "m/s^2" and moved.units["mass.a"] == "m/s^2"


def test_the_blt_shows_units():
    text = ac.compile(rlc()).blt()
    (states,) = [line for line in text.splitlines() if line.startswith("continuous states")]
    assert set(states.split(": ")[1].split(", ")) == {"C.v [V]", "L.i [A]"}
    assert "solves der(C.v) [V/s]" in text and "solves der(L.i) [A/s]" in text


@pytest.fixture(scope="module")
def rlc_result():
    from solvers import simulate

    return simulate(rlc(), t_end=2.0, dt=0.5, rtol=1e-10, atol=1e-12)


def test_a_result_gives_units_by_name(rlc_result):
    res = rlc_result
    assert [res.unit(n) for n in ("C.v", "der(L.i)", "time", "R.R")] == ["V", "A/s", "s", "Ohm"]
    with pytest.raises(ac.UnknownNameError, match="C.vv"):
        res.unit("C.vv")


def test_csv_headers_carry_units_and_the_values_are_unchanged(rlc_result, tmp_path):
    import numpy as np

    res = rlc_result
    path = res.to_csv(tmp_path / "rlc.csv", ["C.v", "L.i", "R.R"])
    with open(path) as f:
        assert f.readline().strip() == "time [s],C.v [V],L.i [A],R.R [Ohm]"
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    np.testing.assert_allclose(table[:, 2], res["L.i"], rtol=1e-11)


def test_dataframe_columns_are_names_and_units_are_in_attrs(rlc_result):
    import numpy as np

    frame = rlc_result.to_dataframe(["C.v", "L.i"])
    assert list(frame.columns) == ["C.v", "L.i"]
    assert frame.attrs["units"] == {"C.v": "V", "L.i": "A"}
    np.testing.assert_array_equal(frame["C.v"].to_numpy(), rlc_result["C.v"])


def test_a_plot_has_one_axis_per_unit_labelled(rlc_result):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    axes = rlc_result.plot("C.v", "L.i", "R.v")
    try:
        assert len(axes) == 2  # volts (C.v, R.v), then amperes
        assert [a.get_ylabel() for a in axes] == ["[V]", "L.i [A]"]
        assert [[line.get_label() for line in a.get_lines()] for a in axes] == [
            ["C.v", "R.v"],
            ["L.i"],
        ]
        assert axes[-1].get_xlabel() == "t [s]"
        assert axes[0].get_shared_x_axes().joined(axes[0], axes[1])
    finally:
        plt.close(axes[0].figure)
    single = rlc_result.plot("C.v", "L.i")
    try:
        assert [a.get_ylabel() for a in single] == ["C.v [V]", "L.i [A]"]
    finally:
        plt.close(single[0].figure)


def test_a_learned_component_has_the_units_of_the_port_it_replaces():
    import learning as ln

    law = ln.Polynomial(order=3, constraint="dissipative")
    rx = ln.Unknown("Rx", ac.Flange, law=law, template=1, f0="2 kN")
    units = {local: q.unit for local, q in rx.quantities.items() if not local.startswith("theta")}
    assert units == {
        "flange_a.s": "m", "flange_a.f": "N", "flange_b.s": "m", "flange_b.f": "N",
        "f": "N", "s": "m", "f0": "N",
    }  # fmt: skip
    assert rx.quantities["f0"].value == 2000.0
    assert ac.check_units(rx).ok


# -- describe() and repr ----------------------------------------------------------------------
def test_describe_lists_parameters_connectors_and_variables_with_units():
    c = Coil("c", R="2 kOhm", L="5 mH", w="10 rpm", T=300)
    w = 10 * 2 * math.pi / 60  # rad/s
    assert c.describe().splitlines() == [
        "Coil c",
        "  parameters:",
        "    R = 2000 Ohm",
        "    L = 0.005 H",
        f"    w = {w:.15g} rad/s",
        "    T = 300 K",
        "  connectors:",
        "    p (Pin): v [V], i [A]",
        "    n (Pin): v [V], i [A]",
        "  variables:",
        "    v [V]",
        "    i [A]",
    ]
    assert repr(c) == f"<Coil c: R=2000 Ohm, L=0.005 H, w={w:.6g} rad/s, T=300 K>"


def test_describe_shows_starts_modes_and_missing_units_and_repr_stays_short():
    class Relay(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            for k in range(6):
                self.parameter(f"k{k}", k + 0.5, "N")
            x0 = self.parameter("x0", "3 mm", "m")
            x = self.variable("x", start=x0, fixed=True, unit="m")
            y = self.variable("y")
            on = self.relation(x < 0, "on")
            self.equations(ac.der(x) == -x * on, y == x)

    r = Relay("relay")
    lines = r.describe().splitlines()
    assert "    x0 = 0.003 m" in lines and "    on_start = 0" in lines
    assert lines[-3:] == [
        "    x [m], start x0 (fixed)",
        "    y (no unit)",
        "    on [1], a discrete mode, start on_start",
    ]
    # four parameters, then how many more (6 k's, x0 and the mode's start: 8 in all)
    assert repr(r) == "<Relay relay: k0=0.5 N, k1=1.5 N, k2=2.5 N, k3=3.5 N, ... 4 more>"


def test_the_command_line_runs_both_checks_when_both_are_asked_for(tmp_path, capsys):
    """``check --units --feasibility``: both reports, exit 1 when either finds a problem
    (the leaky component's units are wrong; its law is a feasible resistor)."""
    from learning.cli import main

    bad = tmp_path / "bad.py"
    bad.write_text(LEAKY_FILE)
    assert main(["check", "--units", "--feasibility", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "adds V to A" in out and "Feasibility of" in out
