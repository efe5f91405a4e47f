"""Fixed start values on variables the model determines (issue 10).

A fixed start on a variable that the rest of the model already determines (a capacitor's
voltage across a source, an inductor's current in series with a current source, the last
voltage of a capacitor loop) is redundant: a consistent one is accepted and holds, a
conflicting one is an :class:`~acausal.InitializationError` naming the fixed start, what
determines the variable, and the value each gives it.
"""

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from solvers import simulate

V_SOURCE = 2.0
R, C = 0.5, 0.4  # the RC branch: tau = 0.2 s


def capacitor_across_source(v0: float, branch: bool = False) -> ac.System:
    """C1 (``v0`` fixed) straight across the source V; with ``branch``, also R2 in series
    with C2 (``v0 = 0``) across V, so the model has a state and IDAS runs."""
    s = ac.System("across")
    V = el.ConstantVoltage("V", V=V_SOURCE)
    C1 = el.Capacitor("C1", C=1e-3, v0=v0)
    G = el.Ground("G")
    s.connect(V.p, C1.p)
    s.connect(V.n, C1.n, G.p)
    if branch:
        R2, C2 = el.Resistor("R2", R=R), el.Capacitor("C2", C=C, v0=0.0)
        s.connect(V.p, R2.p)
        s.connect(R2.n, C2.p)
        s.connect(C2.n, G.p)
    return s


def inductor_after_current_source(i0: float) -> ac.System:
    """I = 0.5 + 0.2 sin(2 pi t) through L1 (``i0`` fixed) and R1 in series."""
    s = ac.System("series")
    I = el.SineCurrent("I", I=0.2, f=1.0, offset=0.5)  # noqa: E741
    L1, R1, G = el.Inductor("L1", L=0.3, i0=i0), el.Resistor("R1", R=2.0), el.Ground("G")
    s.connect(I.n, L1.p)
    s.connect(L1.n, R1.p)
    s.connect(R1.n, I.p, G.p)
    return s


class ChargeStore(ac.Component):
    """A user capacitor written with its charge: ``q = C v``, ``i = dq/dt``; ``v0`` fixes
    the voltage, which across a source is an algebraic variable."""

    def __init__(self, name: str, C: float = 1.0, v0: float | None = None) -> None:
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        v = self.variable("v", start=self.initial("v0", v0), fixed=v0 is not None)
        q = self.variable("q")
        self.equations(
            v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            q == self.parameter("C", C) * v,
            self.p.i == ac.der(q),
        )


class StartedResistor(ac.Component):
    """A user resistor whose voltage may have a fixed start value (an algebraic variable)."""

    def __init__(self, name: str, R: float = 1.0, v0: float | None = None) -> None:
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        v = self.variable("v", start=self.initial("v0", v0), fixed=v0 is not None)
        self.equations(
            v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            v == self.parameter("R", R) * self.p.i,
        )


def store_across_source(v0: float) -> ac.System:
    s = ac.System("store")
    V, U1, G = el.ConstantVoltage("V", V=V_SOURCE), ChargeStore("U1", C=0.1, v0=v0), el.Ground("G")
    s.connect(V.p, U1.p)
    s.connect(V.n, U1.n, G.p)
    return s


def rc_started_on_resistor(vr0: float, vc0: float | None = None) -> ac.System:
    """V -> R1 (a StartedResistor, ``v0 = vr0``) -> C1 (``v0 = vc0``, free if None)."""
    s = ac.System("rc_user")
    V, R1 = el.ConstantVoltage("V", V=V_SOURCE), StartedResistor("R1", R=R, v0=vr0)
    C1, G = el.Capacitor("C1", C=C, v0=vc0), el.Ground("G")
    s.connect(V.p, R1.p)
    s.connect(R1.n, C1.p)
    s.connect(C1.n, V.n, G.p)
    return s


def two_capacitor_loops(v0: dict[str, float]) -> ac.System:
    """Nodes a, b, c over ground: C1 a-G, C2 a-b, C3 b-G, C4 a-c, C5 c-G, every voltage
    fixed. Two independent loops (C1 C2 C3, C1 C4 C5): 3 degrees of freedom for 5 fixed
    values, consistent when v1 = v2 + v3 = v4 + v5."""
    s = ac.System("loops")
    caps = {k: el.Capacitor(k, C=1.0, v0=v) for k, v in v0.items()}
    G = el.Ground("G")
    s.connect(caps["C1"].p, caps["C2"].p, caps["C4"].p)
    s.connect(caps["C2"].n, caps["C3"].p)
    s.connect(caps["C4"].n, caps["C5"].p)
    s.connect(caps["C1"].n, caps["C3"].n, caps["C5"].n, G.p)
    return s


def conflict(system: ac.System, **options) -> ac.InitializationError:
    with pytest.raises(ac.InitializationError) as info:
        simulate(system, t_end=1.0, dt=0.1, **options)
    return info.value


# -- consistent: accepted and held -----------------------------------------------------------
def test_capacitor_across_source_holds_the_source_value():
    res = simulate(capacitor_across_source(V_SOURCE), t_end=1.0, dt=0.01)
    assert np.max(np.abs(res["C1.v"] - V_SOURCE)) <= 1e-12
    assert np.max(np.abs(res["C1.i"])) <= 1e-12  # i = C dv/dt = 0


def test_capacitor_across_source_beside_an_rc_branch():
    """The fixed start is held while IDAS integrates the branch: C2.v = V (1 - e^(-t/RC))."""
    res = simulate(
        capacitor_across_source(V_SOURCE, branch=True), t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12
    )
    assert np.max(np.abs(res["C1.v"] - V_SOURCE)) <= 1e-12
    expected = V_SOURCE * (1 - np.exp(-res.t / (R * C)))
    assert np.max(np.abs(res["C2.v"] - expected)) < 1e-7


def test_capacitor_across_a_sine_source_follows_it():
    """v0 = the source at t = 0 (its offset); then v = 2 + sin(4 pi t), i = C 4 pi cos(4 pi t)
    through the dummy derivative."""
    s = ac.System("sine")
    V = el.SineVoltage("V", V=1.0, f=2.0, offset=2.0)
    C1, G = el.Capacitor("C1", C=0.01, v0=2.0), el.Ground("G")
    s.connect(V.p, C1.p)
    s.connect(V.n, C1.n, G.p)
    res = simulate(s, t_end=1.0, dt=0.01)
    w = 4 * np.pi
    assert np.max(np.abs(res["C1.v"] - (2.0 + np.sin(w * res.t)))) <= 1e-12
    assert np.max(np.abs(res["C1.i"] - 0.01 * w * np.cos(w * res.t))) <= 1e-12


def test_inductor_after_current_source_holds_the_source_current():
    """i = 0.5 + 0.2 sin(2 pi t) from the consistent i0 = 0.5; v = L di/dt."""
    res = simulate(inductor_after_current_source(0.5), t_end=2.0, dt=0.01)
    w = 2 * np.pi
    assert abs(res["L1.i"][0] - 0.5) <= 1e-12
    assert np.max(np.abs(res["L1.i"] - (0.5 + 0.2 * np.sin(w * res.t)))) <= 1e-12
    assert np.max(np.abs(res["L1.v"] - 0.3 * 0.2 * w * np.cos(w * res.t))) <= 1e-12


def test_user_component_start_on_an_algebraic_variable_is_held():
    res = simulate(store_across_source(V_SOURCE), t_end=1.0, dt=0.1)
    assert np.max(np.abs(res["U1.v"] - V_SOURCE)) <= 1e-12
    assert np.max(np.abs(res["U1.q"] - 0.1 * V_SOURCE)) <= 1e-12


def test_fixed_resistor_voltage_sets_the_capacitor_start():
    """A fixed start on the resistor's (algebraic) voltage determines the free capacitor's:
    C1.v = V - vr0 e^(-t/RC)."""
    res = simulate(rc_started_on_resistor(0.5), t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)
    assert abs(res["R1.v"][0] - 0.5) <= 1e-12
    expected = V_SOURCE - 0.5 * np.exp(-res.t / (R * C))
    assert np.max(np.abs(res["C1.v"] - expected)) < 1e-7


def test_fixed_starts_on_both_ends_of_a_loop_agree():
    """vr0 + vc0 = V: two fixed starts for one degree of freedom, consistent."""
    res = simulate(rc_started_on_resistor(0.5, 1.5), t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)
    assert abs(res["R1.v"][0] - 0.5) <= 1e-12 and abs(res["C1.v"][0] - 1.5) <= 1e-12
    expected = V_SOURCE - 0.5 * np.exp(-res.t / (R * C))
    assert np.max(np.abs(res["C1.v"] - expected)) < 1e-7


def test_consistent_over_fixed_capacitor_loops_hold_every_value():
    """a = 1, b = 0.4, c = 0.3: no current flows, every fixed voltage holds."""
    v0 = {"C1": 1.0, "C2": 0.6, "C3": 0.4, "C4": 0.7, "C5": 0.3}
    res = simulate(two_capacitor_loops(v0), t_end=1.0, dt=0.1)
    for name, value in v0.items():
        assert np.max(np.abs(res[f"{name}.v"] - value)) <= 1e-12, name


def test_consistency_is_checked_to_1e_9_relative():
    """A start off by 1e-12 is consistent (the source's value is the one kept); off by 1e-8
    it is a conflict."""
    res = simulate(capacitor_across_source(V_SOURCE + 1e-12), t_end=1.0, dt=0.5)
    assert np.all(res["C1.v"] == V_SOURCE)
    err = conflict(capacitor_across_source(V_SOURCE + 1e-8))
    assert err.residuals[0][1] == pytest.approx(1e-8, rel=1e-6)


def test_parameter_overrides_are_checked_without_recompiling():
    model = ac.compile(capacitor_across_source(V_SOURCE))
    res = simulate(model, t_end=1.0, dt=0.5, params={"V.V": 3.0, "C1.v0": 3.0})
    assert np.max(np.abs(res["C1.v"] - 3.0)) <= 1e-12
    err = conflict(model, params={"V.V": 3.0})
    assert err.residuals[0][1] == pytest.approx(V_SOURCE - 3.0, abs=1e-12)


# -- conflicting: both sides named, with their values -----------------------------------------
@pytest.mark.parametrize("branch", [False, True])
def test_capacitor_start_conflicting_with_source_names_both(branch):
    err = conflict(capacitor_across_source(1.5, branch=branch))
    ((row, value),) = err.residuals
    assert "C1.v0 = 1.5" in row and "C1.v = 2 determined by V: v == V" in row
    assert value == pytest.approx(1.5 - V_SOURCE, abs=1e-12)
    msg = str(err)
    assert row in msg and "Remove the fixed start of C1.v, or make it 2" in msg


def test_inductor_start_conflicting_with_current_source_names_both():
    err = conflict(inductor_after_current_source(1.0))
    ((row, value),) = err.residuals
    assert "L1.i0 = 1" in row and "L1.i = 0.5 determined by I: i ==" in row
    assert value == pytest.approx(0.5, abs=1e-12)


def test_user_component_start_conflicting_with_source_names_both():
    err = conflict(store_across_source(1.0))
    ((row, value),) = err.residuals
    assert "U1.v0 = 1" in row and "U1.v = 2 determined by V: v == V" in row
    assert value == pytest.approx(1.0 - V_SOURCE, abs=1e-12)


def test_conflicting_starts_on_both_ends_of_a_loop_name_both():
    """vr0 = 0.5 and vc0 = 0 on V = 2: the capacitor's start gives R1.v = 2."""
    err = conflict(rc_started_on_resistor(0.5, 0.0))
    ((row, value),) = err.residuals
    assert "R1.v0 = 0.5" in row and "R1.v = 2" in row and "C1.v = C1.v0 = 0" in row
    assert value == pytest.approx(0.5 - V_SOURCE, abs=1e-12)
    assert "1 of these 2 fixed values must go" in str(err)


def test_over_fixed_capacitor_loops_say_how_many_must_go():
    """Five fixed voltages, three degrees of freedom: two must go; both loops conflict
    (v1 = 1 but v2 + v3 = 1.1 and v4 + v5 = 1.2)."""
    v0 = {"C1": 1.0, "C2": 0.6, "C3": 0.5, "C4": 0.7, "C5": 0.5}
    err = conflict(two_capacitor_loops(v0))
    msg = str(err)
    assert "2 of these 5 fixed values must go (remove 2 of them" in msg
    for name in v0:
        assert f"{name}.v" in msg
    # each conflict: the fixed value against the one the model gives; with the latter in
    # place of the former, both loops close (whichever two voltages were left redundant)
    assert len(err.residuals) == 2
    values = dict(v0)
    for row, residual in err.residuals:
        name = row.split()[2].removesuffix(".v")  # "fixed start C3.v = ..."
        assert f"{name}.v0 = {v0[name]:g}" in row
        values[name] = v0[name] - residual
    assert values["C1"] == pytest.approx(values["C2"] + values["C3"], abs=1e-12)
    assert values["C1"] == pytest.approx(values["C4"] + values["C5"], abs=1e-12)


class CubicConductor(ac.Component):
    """``i = G v^3``: Newton from the guess ``v = 0`` meets a zero derivative."""

    def __init__(self, name: str, G: float = 2.0) -> None:
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        v = self.variable("v")
        self.equations(
            v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            self.p.i == self.parameter("G", G) * v**3,
        )


@pytest.mark.parametrize("with_state", [False, True])
def test_where_newton_stalls_the_damped_fallback_starts_and_the_run_goes_on(with_state):
    """1 A into a cubic conductor of G = 2 (``v = 0.5^(1/3)``), alone (no states: Newton at
    each output time) or beside an RC branch (IDAS): Newton from 0 does not converge, the
    damped fallback does, and the run continues from its start (without states it used to
    redo Newton from 0 and fail with a non-finite solution)."""
    from solvers import simulator

    s = ac.System("cubic")
    I, K, G = el.ConstantCurrent("I", I=1.0), CubicConductor("K", G=2.0), el.Ground("G")
    s.connect(I.n, K.p)
    s.connect(I.p, K.n, G.p)
    if with_state:
        V, R1, C1 = (
            el.ConstantVoltage("V", V=1.0),
            el.Resistor("R1", R=R),
            el.Capacitor("C1", C=C, v0=0.0),
        )
        s.connect(V.p, R1.p)
        s.connect(R1.n, C1.p)
        s.connect(C1.n, V.n, G.p)
    model = ac.compile(s)
    p = np.asarray(model.parameter_vector(), dtype=float)
    newton_z = simulator(model, np.array([0.0, 1.0]), 1e-8, 1e-10, p).init.fun(p)[1]
    assert not np.all(np.isfinite(newton_z.full()))  # Newton alone fails from v = 0
    res = simulate(model, t_end=1.0, dt=0.1)
    assert np.max(np.abs(res["K.v"] - 0.5 ** (1 / 3))) < 1e-12
    if with_state:  # the RC branch: 1 - exp(-t / RC)
        assert np.max(np.abs(res["C1.v"] - (1 - np.exp(-res.t / (R * C))))) < 1e-5


def _row_by_row(first, adjacency, col_to_row, nx):
    """The matching of rows ``first, ...`` one augmenting path at a time, then a search per
    state for the free ones: what the bulk steps must reproduce."""
    from solvers.initialize import _free_column, _match_row

    redundant = [
        r for r in range(first, len(adjacency)) if not _match_row(r, adjacency, col_to_row)
    ]
    free = []
    for k in range(nx):
        if _free_column([k], adjacency, col_to_row) >= 0:
            free.append(k)
            adjacency.append([k])
            col_to_row[k] = len(adjacency) - 1
    return redundant, free


def test_bulk_matching_equals_matching_row_by_row():
    """States' own starts matched at once and free states taken in bulk give the rows,
    matching, redundant rows and free states that row-by-row augmenting paths give, on
    random graphs: own starts first (some on the same state), then rows on several
    columns (states and algebraic ones)."""
    from solvers.initialize import _free_states, _match_fixed

    rng = np.random.default_rng(3)
    for _ in range(300):
        nx, nz, n_own, n_more = (int(v) for v in rng.integers(1, 8, 4))
        rows = [[int(c)] for c in rng.integers(0, nx, n_own)]
        for _ in range(n_more):
            rows.append(sorted(set(rng.integers(0, nx + nz, rng.integers(1, 4)).tolist())))
        ours = ([list(a) for a in rows], [-1] * (nx + nz))
        theirs = ([list(a) for a in rows], [-1] * (nx + nz))
        redundant = _match_fixed(0, *ours)
        free = _free_states(nx, *ours)
        assert (redundant, free) == _row_by_row(0, *theirs, nx)
        assert ours == theirs
