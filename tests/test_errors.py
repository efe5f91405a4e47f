"""Errors a user can cause: the exception type, and a message naming their own components.

Each ``case_*`` function makes one mistake and returns the ModelError it raises; the tests
check the type and the names in the message, and that no raw CasADi text leaks through.
"""

import contextlib
import io
import re

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from solvers import simulate


def raised(fn, kind=ac.ModelError):
    with pytest.raises(kind) as info:
        fn()
    return info.value


def rc(R=2.0, C=0.5):
    s = ac.System("rc")
    V = el.ConstantVoltage("V", V=1.0)
    R1 = el.Resistor("R1", R=R)
    C1 = el.Capacitor("C1", C=C, v0=0.0)
    G = el.Ground("G")
    s.connect(V.p, R1.p)
    s.connect(R1.n, C1.p)
    s.connect(C1.n, V.n, G.p)
    return s


class Slider(ac.Component):
    """A tiny mechanical component: one translational flange, no force."""

    def __init__(self, name):
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        self.equations(self.flange.f == 0)


class Leaky(ac.Component):
    """A user one-port with a typo: the last law should determine ``w`` but does not use it."""

    def __init__(self, name, R=1.0):
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        self.n = self.connector("n", ac.Pin)
        v, i, self.w = self.variable("v"), self.variable("i"), self.variable("w")
        R = self.parameter("R", R)
        self.equations(
            v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            i == self.p.i,
            v == R * i,
            v == 2 * R * i,  # meant: w == 2 * R * i
        )


class Root(ac.Component):
    """``z*z == rhs`` solved for ``z``, integrated into ``x``."""

    def __init__(self, name, rhs):
        super().__init__(name)
        z = self.variable("z", start=1.0)
        x = self.variable("x", start=0.0, fixed=True)
        self.equations(z * z == rhs, ac.der(x) == z)


# -- the mistakes -------------------------------------------------------------------------------
def case_pin_to_flange():
    s = ac.System("mixed")
    R1, M1 = el.Resistor("R1"), Slider("M1")
    return raised(lambda: s.connect(R1.p, M1.flange), ac.ConnectError)


def case_same_name():
    s = ac.System("twins")
    a, b = el.Resistor("R1"), el.Resistor("R1", R=2.0)
    s.connect(a.p, el.Ground("G").p)
    return raised(lambda: s.connect(a.n, b.p), ac.NameClashError)


def no_ground_system():
    s = ac.System("floating")
    V, R1, C1 = el.ConstantVoltage("V"), el.Resistor("R1"), el.Capacitor("C1", v0=0.0)
    s.connect(V.p, R1.p)
    s.connect(R1.n, C1.p)
    s.connect(C1.n, V.n)
    return s


def case_no_ground():
    s = no_ground_system()
    return raised(lambda: simulate(s, t_end=1.0))


def case_parallel_sources():
    s = ac.System("fight")
    V1, V2 = el.ConstantVoltage("V1", V=1.0), el.ConstantVoltage("V2", V=2.0)
    R1, G = el.Resistor("R1"), el.Ground("G")
    s.connect(V1.p, V2.p, R1.p)
    s.connect(V1.n, V2.n, R1.n, G.p)
    return raised(lambda: ac.compile(s), ac.StructureError)


def case_singular_component():
    s = ac.System("leak")
    V, L1, G = el.ConstantVoltage("V"), Leaky("L1"), el.Ground("G")
    s.connect(V.p, L1.p)
    s.connect(V.n, L1.n, G.p)
    return raised(lambda: ac.compile(s), ac.StructureError)


def case_parallel_capacitors():
    s = ac.System("pair")
    C1, C2 = el.Capacitor("C1", v0=1.0), el.Capacitor("C2", v0=2.0)
    R1, G = el.Resistor("R1"), el.Ground("G")
    s.connect(C1.p, C2.p, R1.p)
    s.connect(C1.n, C2.n, R1.n, G.p)
    return raised(lambda: simulate(s, t_end=1.0), ac.InitializationError)


def case_capacitor_loop():
    s = ac.System("ring")
    C1, C2, C3 = (el.Capacitor(f"C{k}", v0=float(k)) for k in (1, 2, 3))
    G = el.Ground("G")
    s.connect(C1.p, C2.n)
    s.connect(C2.p, C3.n)
    s.connect(C3.p, C1.n, G.p)
    return raised(lambda: simulate(s, t_end=1.0), ac.InitializationError)


def case_nan_parameter():
    return raised(lambda: el.Resistor("R1", R=float("nan")), ac.ParameterError)


def case_string_parameter():
    # a value with a unit must be a quantity of the resistance's dimension ("1k" is one
    # Boltzmann constant; a Resistor declared without unit takes no unit at all)
    return raised(lambda: el.Resistor("R1", R="1k"), ac.UnitError)


def case_nan_parameter_in_simulate():
    return raised(lambda: simulate(rc(), t_end=1.0, params={"R1.R": np.nan}), ac.ParameterError)


def case_unknown_param():
    return raised(lambda: simulate(rc(), t_end=1.0, params={"R1.r": 3.0}), ac.UnknownNameError)


def case_unknown_variable():
    res = simulate(rc(), t_end=1.0)
    return raised(lambda: res["C1.V"], ac.UnknownNameError)


def no_real_root_system(rhs):
    s = ac.System("root")
    s.add(Root("S1", rhs))
    return s


def case_solver_failure():
    s = no_real_root_system(1 - ac.time)  # z = sqrt(1 - t): no real solution after t = 1
    return raised(lambda: simulate(s, t_end=2.0), ac.SimulationError)


def case_initialization_failure():
    s = no_real_root_system(-1 - ac.time)  # no real z at all
    return raised(lambda: simulate(s, t_end=1.0), ac.InitializationError)


# -- one test per mistake ------------------------------------------------------------------
def test_connect_pin_to_flange():
    msg = str(case_pin_to_flange())
    assert "R1.p" in msg and "M1.flange" in msg
    assert "Pin" in msg and "Flange" in msg and "same type" in msg


def test_two_components_with_one_name():
    msg = str(case_same_name())
    assert "'R1'" in msg and "unique name" in msg


def test_no_ground_names_the_floating_components():
    err = case_no_ground()
    # the potentials are determined only up to a constant: found structurally by compile
    assert isinstance(err, ac.StructureError)
    msg = str(err)
    for name in ("V", "R1", "C1"):
        assert re.search(rf"\b{name}\b", msg), name
    assert "Ground" in msg  # what to do


def test_no_ground_message_has_no_empty_lists():
    msg = str(case_no_ground())
    assert "components involved: ." not in msg
    assert "constrain only 0 unknowns" not in msg


def test_parallel_voltage_sources_name_both_sources():
    msg = str(case_parallel_sources())
    over = msg.split("Under-determined")[0]
    assert re.search(r"^\s+V1: ", over, re.MULTILINE) and re.search(r"^\s+V2: ", over, re.MULTILINE)
    assert "Remove one" in over


def test_parallel_voltage_sources_do_not_suggest_a_ground():
    assert "a Ground (or Fixed)" not in str(case_parallel_sources())


def test_structurally_singular_user_component():
    msg = str(case_singular_component())
    assert "structurally singular" in msg
    over, orphan = msg.split("L1.w occurs in no equation")
    assert "add an equation for it in L1" in orphan  # the unknown no equation determines
    # the two laws that both fix L1's current, one of which should have used w
    assert len(re.findall(r"^\s+L1: v == .*R.*i", over, re.MULTILINE)) == 2, over


def test_variable_in_no_equation_gets_specific_advice():
    msg = str(case_singular_component())
    assert "L1.w" in msg and "a Ground (or Fixed)" not in msg


def test_parallel_capacitors_with_conflicting_starts_name_both():
    msg = str(case_parallel_capacitors())
    assert "C1.v" in msg and "C2.v" in msg
    assert re.search(r"\b1\b", msg) and re.search(r"\b2\b", msg)  # the two start values
    assert "remove" in msg.lower()


def test_capacitor_loop_with_all_starts_fixed_names_all_three():
    msg = str(case_capacitor_loop())
    for name in ("C1.v", "C2.v", "C3.v"):
        assert name in msg
    assert "remove one" in msg.lower()


@pytest.mark.parametrize("case", [case_nan_parameter, case_string_parameter])
def test_bad_parameter_value_names_it(case):
    msg = str(case())
    assert "R1.R" in msg and "finite" in msg


def test_nan_parameter_override_names_it():
    assert "R1.R" in str(case_nan_parameter_in_simulate())


def test_unknown_parameter_suggests_close_match():
    err = case_unknown_param()
    assert "'R1.r'" in str(err) and "Did you mean 'R1.R'" in str(err)


def test_unknown_variable_suggests_close_match():
    err = case_unknown_variable()
    assert isinstance(err, KeyError)  # so `name in result`-style code can catch it
    assert "'C1.V'" in str(err) and "'C1.v'" in str(err)


def test_solver_failure_names_the_equation():
    msg = str(case_solver_failure())
    assert re.search(r"S1: .*z.*==.*time", msg), msg  # the block solved by Newton that failed


def test_solver_failure_reports_the_time():
    msg = str(case_solver_failure())
    times = [float(t) for t in re.findall(r"t\s*[=≈~]\s*([-+0-9.eE]+)", msg)]
    assert times and abs(times[0] - 1.0) < 0.05, msg


def test_solver_failure_when_sys_stderr_is_not_fd_2():
    printed = io.StringIO()
    with contextlib.redirect_stderr(printed):
        msg = str(case_solver_failure())
    assert "Function sim" not in printed.getvalue(), printed.getvalue()
    assert "at t = 1" in msg and not RAW.search(msg), msg


def test_initialization_failure_names_the_equation():
    msg = str(case_initialization_failure())
    assert "S1" in msg and "z" in msg


CASES = [
    case_pin_to_flange,
    case_same_name,
    case_no_ground,
    case_parallel_sources,
    case_singular_component,
    case_parallel_capacitors,
    case_capacitor_loop,
    case_nan_parameter,
    case_string_parameter,
    case_nan_parameter_in_simulate,
    case_unknown_param,
    case_unknown_variable,
    case_solver_failure,
    case_initialization_failure,
]

RAW = re.compile(
    r"casadi|\.cpp|Function::|Error in |Traceback|@\d+|\bSX\b|\bMX\b|\bDM\b|IDA_|Consult IDAS"
)


@pytest.mark.parametrize("case", CASES)
def test_no_raw_casadi_text(case):
    msg = str(case())
    assert msg.strip()
    assert not RAW.search(msg), msg


def rl_extreme(L):
    s = ac.System("rl_extreme")
    V, R = el.ConstantVoltage("V", V=1e3), el.Resistor("R", R=1.0)
    L, G = el.Inductor("L", L=L, i0=0.0), el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, L.p)
    s.connect(L.n, V.n, G.p)
    return s


def test_fast_start_is_retried_from_the_true_rates():
    """i'(0) = V/L = 1e12 A/s at rtol 1e-12: the cached integrators' x'(0) = 0 start fails
    at t = 0, the run is repeated from the true x'(0) and gives the closed form
    ``i = V/R (1 - exp(-R t / L))``, 1000 A after the 1 ns time constant."""
    res = simulate(rl_extreme(1e-9), t_end=1.0, dt=0.1, rtol=1e-12, atol=1e-14)
    assert res["L.i"][0] == 0.0
    assert res["L.i"][1:] == pytest.approx(1e3, rel=1e-12)


def test_failure_at_the_start_gets_start_specific_advice():
    """A 1 fs time constant: IDAS's first step (1e-12 of the run) meets an error of order
    ``h |x''(0)|`` it cannot reduce at rtol 1e-12, even from the true x'(0)."""
    with pytest.raises(ac.SimulationError) as info:
        simulate(rl_extreme(1e-15), t_end=1.0, dt=0.1, rtol=1e-12, atol=1e-14)
    msg = str(info.value)
    assert "failed at t = 0" in msg and "loosen rtol/atol" in msg
    assert "Try a tighter" not in msg  # the wrong advice here


def test_errors_carry_their_data():
    """The failure time, the equations involved and the initialization residuals are
    fields of the errors (the messages are built from them, never parsed back)."""
    err = case_solver_failure()  # z = sqrt(1 - t) has no real solution after t = 1
    assert err.time == pytest.approx(1.0, abs=1e-3)
    assert any(e.startswith("S1:") for e in err.equations)
    assert f"t = {err.time:.6g}" in str(err)
    err = case_initialization_failure()  # z^2 = -1 - t: no real z at t = 0
    (row, value), *_ = err.residuals
    # |z^2 + 1| >= 1 for every real z; Newton ends on a NaN here (its step divides by 2 z)
    assert "block 1" in row and (np.isnan(value) or abs(value) >= 1.0)
    assert f"{value:.3g}" in str(err)


def test_a_large_floating_model_lists_a_dozen_components_and_counts_the_rest():
    s = ac.System("ring")
    resistors = [el.Resistor(f"R{k}") for k in range(30)]
    for a, b in zip(resistors, resistors[1:] + resistors[:1]):
        s.connect(a.n, b.p)  # a closed ring with no reference potential
    msg = str(raised(lambda: ac.compile(s), ac.StructureError))
    listed = re.search(r"components involved: (.*) and (\d+) more\.", msg)
    assert listed and len(listed.group(1).split(", ")) == 12 and int(listed.group(2)) == 18
    assert "connect a reference" in msg


def _divider(r3: float) -> ac.System:
    """1 V across R1 = 1 ohm in series with R2 = 1 ohm parallel to R3 = ``r3``."""
    s = ac.System("divider")
    V, G = el.StepVoltage("V", V=1.0, start_time=0.0), el.Ground("G")
    R1, R2, R3 = el.Resistor("R1", R=1.0), el.Resistor("R2", R=1.0), el.Resistor("R3", R=r3)
    s.connect(V.p, R1.p)
    s.connect(R1.n, R2.p, R3.p)
    s.connect(R2.n, R3.n, V.n, G.p)
    return s


def test_a_block_singular_at_the_parameter_values_is_named_at_compile_time():
    """A zero resistance (the scalar block ``v = R i`` for ``i``) and a resistor network
    whose linear loop is singular at its values (R1 in series with R2 || R3 = 1 || -0.5
    = -1 ohm: no current is determined by 1 V across zero total resistance) are refused
    by ``compile`` with the block's equations and what to check; R3 = -0.25 (2/3 ohm in
    all) compiles."""
    with pytest.raises(ac.StructureError, match="singular at the model's parameter values"):
        ac.compile(rc(R=0.0))
    with pytest.raises(ac.StructureError) as err:
        ac.compile(_divider(-0.5))
    assert "R1: v == R*i" in str(err.value) and "R3: v == R*i" in str(err.value)
    assert "zero resistance" in str(err.value)
    ac.compile(_divider(-0.25))


class TooFewEquations(ac.Component):
    """A two-pin component that states only that its current passes through."""

    def __init__(self, name):
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        self.equations(self.p.i + self.n.i == 0)


def test_too_few_equations_and_a_shorted_source_are_structural_errors():
    """Both crashed in alias elimination with CasADi's 'Dimension mismatch' (its substitution
    of no rows) instead of the structural error: the unbalanced model says which current
    no equation determines, the shorted source that its equation is left redundant."""
    few = ac.System("few")
    V, B, G = el.ConstantVoltage("V", V=1.0), TooFewEquations("B"), el.Ground("G")
    few.connect(V.p, B.p)
    few.connect(B.n, V.n, G.p)
    with pytest.raises(ac.StructureError, match=r"unbalanced: 0 equations for 1 unknown"):
        ac.compile(few)
    short = ac.System("short")
    V, G = el.ConstantVoltage("V", V=1.0), el.Ground("G")
    short.connect(V.p, V.n, G.p)
    with pytest.raises(ac.StructureError, match=r"(?s)structurally singular.*V: v == V"):
        ac.compile(short)


class ExtraEquation(ac.Component):
    """A resistor that also fixes its own voltage: one equation too many."""

    def __init__(self, name):
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        v = self.variable("v")
        self.equations(
            v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            v == 2.0 * self.p.i,
            v == 1.0,
        )


def test_an_unbalanced_model_names_the_component_that_lacks_or_adds_equations():
    """Modelica's local balance: a component's equations plus its connectors' flows equal
    its unknowns. B (2 pins, no variable) has 1 equation for 4 unknowns less 2 flows: one
    missing; X has 4 for 5 less 2: one too many. The message names them, not only the
    unknowns left over elsewhere."""
    few = ac.System("few")
    V, B, R, G = (
        el.ConstantVoltage("V", V=1.0),
        TooFewEquations("B"),
        el.Resistor("R"),
        el.Ground("G"),
    )
    few.connect(V.p, B.p)
    few.connect(B.n, R.p)
    few.connect(R.n, V.n, G.p)
    with pytest.raises(ac.StructureError) as info:
        ac.compile(few)
    assert "B: 1 equation and 2 connector flows for 4 unknowns (1 missing)" in str(info.value)
    assert "R:" not in str(info.value).split("Under-determined")[0]  # R is balanced
    many = ac.System("many")
    V, X, G = el.ConstantVoltage("V", V=1.0), ExtraEquation("X"), el.Ground("G")
    many.connect(V.p, X.p)
    many.connect(X.n, V.n, G.p)
    with pytest.raises(ac.StructureError) as info:
        ac.compile(many)
    assert "X: 4 equations and 2 connector flows for 5 unknowns (1 too many)" in str(info.value)


def test_every_complete_library_class_is_locally_balanced():
    """The rule the message above applies holds for every class of the library, with its
    defaults and with every option on; only the partial bases break it (they leave their
    constitutive equation to a subclass)."""
    from acausal.structure import flatten
    from acausal.structure.diagnose import local_imbalance
    from tests.library import CLASSES, with_every_option

    broken = set()
    for name, cls in CLASSES:
        for options in ({}, with_every_option(cls)):
            s = ac.System("one")
            s.add(cls("c", **options))
            if local_imbalance(flatten(s)):
                broken.add(name)
    partial = {n for n, _ in CLASSES if n.split(".")[1].startswith("Partial")}
    assert broken == partial | {"electrical.OnePort"}  # Modelica's Interfaces.OnePort


class Oscillator(ac.Component):
    """``der(der(x)) == -x`` written directly (Modelica asks for a variable per rate)."""

    def __init__(self, name):
        super().__init__(name)
        x = self.variable("x", 0.5, fixed=True)
        self.equations(ac.der(ac.der(x)) == -x)


@pytest.mark.parametrize("arrays", [False, True])
def test_a_derivative_of_a_derivative_is_a_named_error(arrays):
    """It reached alias elimination as an unknown no column held (a CasADi free-variable
    error, or a KeyError for an array); now an EquationError naming it and the rewrite."""
    s = ac.System("osc")
    s.add(*(Oscillator.array("O", 2) if arrays else [Oscillator("O1"), Oscillator("O2")]))
    msg = str(raised(lambda: ac.compile(s), ac.EquationError))
    assert msg.startswith("der(der(O1.x)): a derivative of a derivative is not supported")
    assert "w == der(x) in O1" in msg and not RAW.search(msg)
