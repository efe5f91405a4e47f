"""Models built with ``Component.array`` through the capabilities a scalar model has: index
reduction and state selection across instances, an algebraic loop spanning instances,
events, forward sensitivities, fitting. Each against an independent reference (the Modelica
result, a closed form, a nodal analysis by numpy, finite differences) and against the same
model built one instance at a time."""

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from components import translational as tr
from examples.ladders import rc_ladder
from solvers import simulate

from .validation.reference import load, max_error

# the Cauer filter's element values (examples/cauer_filter.py), given to the arrays' instances
CAUER = {
    "C1.C": 1.072,
    "C2.C": 1 / (1.704992**2 * 1.304),
    "C3.C": 1.682,
    "C4.C": 1 / (1.179945**2 * 0.8586),
    "C5.C": 0.7262,
    "L1.L": 1.304,
    "L2.L": 0.8586,
}


def cauer(arrays: bool) -> ac.System:
    """The Cauer low-pass filter with every capacitor, inductor and resistor built alike
    (``v0 = 0``, ``i0 = 0``, unit values; the element values are given as parameters):
    ``arrays`` as three arrays connected element by element, else one by one."""
    s = ac.System("cauer")
    V, G = el.StepVoltage("V", V=1.0, start_time=1.0), el.Ground("G")
    kinds = (
        (el.Resistor, "R", 2, {"R": 1.0}),
        (el.Capacitor, "C", 5, {"C": 1.0, "v0": 0.0}),
        (el.Inductor, "L", 2, {"L": 1.0, "i0": 0.0}),
    )
    if arrays:
        R, C, L = (cls.array(prefix, n, **kw) for cls, prefix, n, kw in kinds)
    else:
        R, C, L = ([cls(f"{pre}{j}", **kw) for j in range(1, n + 1)] for cls, pre, n, kw in kinds)

    def pin(group, name: str, j: int):  # pin ``name`` of the group's instance j (from 0)
        return getattr(group, name)[j] if arrays else getattr(group[j], name)

    s.connect(V.p, pin(R, "p", 0))
    s.connect(pin(R, "n", 0), pin(C, "p", 0), pin(C, "p", 1), pin(L, "p", 0))
    s.connect(pin(C, "n", 1), pin(L, "n", 0), pin(C, "p", 2), pin(C, "p", 3), pin(L, "p", 1))
    s.connect(pin(C, "n", 3), pin(L, "n", 1), pin(C, "p", 4), pin(R, "p", 1))
    s.connect(V.n, pin(C, "n", 0), pin(C, "n", 2), pin(C, "n", 4), pin(R, "n", 1), G.p)
    return s


def test_the_cauer_filter_from_arrays_reduces_its_index_and_matches_modelica():
    """Capacitor loops across the instances of one array (index 2): the same index, states
    and results (to the tolerances) as the filter built one by one with the same arguments, every
    signal within the reference's accuracy of the Modelica result (the tolerances of
    tests/validation/test_cauer.py). The loops' capacitors carry fixed start values too
    (instances of an array take the same arguments): redundant there, and consistent."""
    model, one_by_one = ac.compile(cauer(True)), ac.compile(cauer(False))
    assert model.index == 2 and sorted(model.states) == sorted(one_by_one.states)
    assert model.n_states == 5
    tol = {"t_end": 60.0, "dt": 0.012, "rtol": 1e-8, "atol": 1e-10, "params": CAUER}
    res, scalar = simulate(model, **tol), simulate(one_by_one, **tol)
    ref = load("Electrical.Analog.Examples.CauerLowPassAnalog")
    for name, rel in {"C1.v": 2e-5, "C3.v": 2e-5, "C5.v": 2e-5, "L1.i": 1e-4, "L2.i": 1e-4}.items():
        scale = np.ptp(ref[name])
        assert max_error(ref["time"], ref[name], res.t, res[name]) <= rel * scale, name
        # the same DAE with its equations in another order: equal to the tolerances, not bit
        # for bit (rounding may move a step); each is within 3e-7 of the exact solution
        # (tests/validation/test_cauer.py), measured apart here 1.1e-12
        assert np.max(np.abs(res[name] - scalar[name])) <= 1e-6 * scale, name


def test_masses_joined_rigidly_keep_one_state_pair():
    """Four masses of 0.25 kg joined rigidly flange to flange (positions tied: index 3):
    one position and one velocity remain; pushed by 1 N from rest they move as one body,
    ``s = t^2 / 2`` (closed form), every mass alike."""
    s = ac.System("rigid")
    masses = tr.Mass.array("M", 4, m=0.25, s0=0.0, v0=0.0)
    force = tr.ConstantForce("F", f_constant=1.0)
    s.connect(masses.flange_b[:-1], masses.flange_a[1:])
    s.connect(force.flange, masses.flange_a[0])
    with pytest.warns(UserWarning, match="unconnected"):  # the last mass's free flange
        model = ac.compile(s)
    assert model.n_states == 2 and model.index == 3
    res = simulate(model, t_end=1.0, dt=0.05, rtol=1e-10, atol=1e-12)
    for k in range(1, 5):
        assert np.max(np.abs(res[f"M{k}.s"] - res.t**2 / 2)) < 1e-9
        assert np.max(np.abs(res[f"M{k}.v"] - res.t)) < 1e-9


def resistive_ladder(n: int, arrays: bool) -> ac.System:
    """A 1 V step into ``n`` series resistors of 1 ohm, a 2 ohm shunt from each node to
    ground, and a 1 F capacitor at the last node: the node potentials are one linear
    algebraic loop through every instance."""
    s = ac.System("resistive")
    V, G = el.StepVoltage("V", V=1.0), el.Ground("G")
    C = el.Capacitor("C", C=1.0, v0=0.0)
    if arrays:
        series, shunt = el.Resistor.array("R", n, R=1.0), el.Resistor.array("Q", n, R=2.0)
        s.connect(V.p, series.p[0])
        s.connect(series.n[:-1], series.p[1:])
        s.connect(series.n, shunt.p)
        s.connect(shunt.n, G.p)
        s.connect(series.n[-1], C.p)
    else:
        prev = V.p
        for k in range(1, n + 1):
            r, q = el.Resistor(f"R{k}", R=1.0), el.Resistor(f"Q{k}", R=2.0)
            s.connect(prev, r.p)
            s.connect(r.n, q.p)
            s.connect(q.n, G.p)
            prev = r.n
        s.connect(prev, C.p)
    s.connect(C.n, V.n, G.p)
    return s


def test_an_algebraic_loop_through_every_instance_is_solved():
    """The resistive ladder's capacitor sees the Thevenin equivalent of the network, found
    here by nodal analysis in numpy: ``v = V_th (1 - exp(-t / (R_th C)))``; the array build
    and the one-by-one build agree to the tolerances."""
    n = 6
    g = np.diag(np.full(n, 2.0 + 0.5))  # each node: two 1 ohm series neighbours, 2 ohm shunt
    g -= np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)
    g[-1, -1] -= 1.0  # the last node has no series resistor after it
    b = np.zeros(n)
    b[0] = 1.0  # the source through R1
    v_th = np.linalg.solve(g, b)[-1]
    r_th = np.linalg.inv(g)[-1, -1]
    model = ac.compile(resistive_ladder(n, True))
    assert max(len(b.equations) for b in model.blocks) >= n  # one loop spanning instances
    tol = {"t_end": 5.0, "dt": 0.05, "rtol": 1e-10, "atol": 1e-12}
    res = simulate(model, **tol)
    exact = v_th * (1 - np.exp(-res.t / r_th))
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-8
    other = simulate(resistive_ladder(n, False), **tol)
    for name in ("C.v", "R1.i", f"Q{n}.v", "R3.n.v"):
        assert np.max(np.abs(res[name] - other[name])) < 1e-8, name  # (as C.v's bound)


def test_events_of_array_instances_fire_at_their_closed_form_times():
    """Masses between hard stops on springs to the wall (an array whose class has events:
    each instance constructed), released from three heights given as parameters: each
    reaches the lower stop ``smin = -0.3`` when ``s0 cos(w t) = smin``, ``w = sqrt(c/m) =
    4``, stops there (inelastic) and is pushed off at once: ``s = smin cos(w (t - t_hit))``
    after it (closed form); the one-by-one build gives the same trajectories."""
    s0 = {"M1.s0": 0.5, "M2.s0": 0.6, "M3.s0": 0.4}

    def build(arrays: bool) -> ac.System:
        s, wall = ac.System("stops"), tr.Fixed("wall")
        kw = {"m": 0.5, "smin": -0.3, "smax": 1.0, "s0": 0.5, "v0": 0.0}
        if arrays:
            springs, stops = tr.Spring.array("S", 3, c=8.0), tr.MassWithStop.array("M", 3, **kw)
            s.connect(wall.flange, springs.flange_a)
            s.connect(springs.flange_b, stops.flange_a)
            return s
        for k in range(1, 4):
            spring, mass = tr.Spring(f"S{k}", c=8.0), tr.MassWithStop(f"M{k}", **kw)
            s.connect(wall.flange, spring.flange_a)
            s.connect(spring.flange_b, mass.flange_a)
        return s

    runs = []
    for arrays in (True, False):
        with pytest.warns(UserWarning, match="unconnected"):
            model = ac.compile(build(arrays))
        runs.append(simulate(model, t_end=0.8, dt=0.005, rtol=1e-10, atol=1e-12, params=s0))
    t = runs[0].t
    for k in range(1, 4):
        start = s0[f"M{k}.s0"]
        hit = np.arccos(-0.3 / start) / 4.0
        exact = np.where(t < hit, start * np.cos(4.0 * t), -0.3 * np.cos(4.0 * (t - hit)))
        assert np.max(np.abs(runs[0][f"M{k}.s"] - exact)) < 1e-7
        assert np.max(np.abs(runs[0][f"M{k}.s"] - runs[1][f"M{k}.s"])) < 1e-7


def test_sensitivities_of_an_array_ladder_match_differences_and_the_scalar_build():
    """d C4.v / d R2.R and d C4.v / d C3.C of the RC ladder built from arrays: IDAS's
    forward sensitivities against central differences of two simulations, and against the
    same sensitivities of the ladder built one by one."""
    names, grid = ["R2.R", "C3.C"], np.linspace(0.0, 1.0, 41)
    tol = {"grid": grid, "rtol": 1e-11, "atol": 1e-13}
    model = ac.compile(rc_ladder(4, True))
    res = simulate(model, sensitivities=names, **tol)
    other = simulate(ac.compile(rc_ladder(4, False)), sensitivities=names, **tol)
    base = model.parameters
    for name in names:
        h = 1e-3 * base[name]  # differences: error h^2 and rtol / h, both ~1e-8
        up, down = (simulate(model, params={name: base[name] + d}, **tol) for d in (h, -h))
        fd = (up["C4.v"] - down["C4.v"]) / (2 * h)
        sens = res.sensitivity("C4.v", name)
        assert np.max(np.abs(sens - fd)) < 1e-5 * np.max(np.abs(fd)), name
        assert np.max(np.abs(sens - other.sensitivity("C4.v", name))) < 1e-7 * np.max(np.abs(fd))


def test_a_parameter_of_an_array_instance_is_fitted():
    """Data of the array-built RC ladder with R2.R doubled (0.5 ohm): fitting R2.R from 0.25
    recovers 0.5, as it does on the ladder built one by one."""
    grid = np.linspace(0.0, 1.0, 51)
    truth = simulate(rc_ladder(4, True), grid=grid, rtol=1e-11, atol=1e-13, params={"R2.R": 0.5})
    data = {"t": grid, "C4.v": truth["C4.v"]}
    for arrays in (True, False):
        fit = ln.fit(rc_ladder(4, arrays), data, physical=["R2.R"], progress=False)
        assert fit.params["R2.R"] == pytest.approx(0.5, rel=1e-6), arrays


class Lag(ac.Component):
    """``der(x) = u - k x`` from ``x(0) = 1``, ``u`` an expression given by the caller."""

    def __init__(self, name, u=0.0, k=2.0):
        super().__init__(name)
        x = self.variable("x", 1.0, fixed=True)
        k = self.parameter("k", k)
        self.equations(ac.der(x) == u - k * x)


class Source(ac.Component):
    """``y = g`` (a parameter other components' equations may read)."""

    def __init__(self, name):
        super().__init__(name)
        self.g = self.parameter("g", 3.0)
        self.y = self.variable("y")
        self.equations(self.y == self.g * ac.time)


@pytest.mark.parametrize("read", ["parameter", "derivative"])
def test_an_array_whose_template_reads_another_component(read):
    """Instances whose equations hold another component's parameter ``g`` or derivative
    ``der(y) = g`` (a KeyError before): ``x = g/k + (1 - g/k) exp(-k t)`` (closed form),
    as the one-by-one build gives it."""
    runs = []
    for arrays in (True, False):
        s, src = ac.System("lags"), Source("U")
        u = src.g if read == "parameter" else ac.der(src.y)
        s.add(src, *(Lag.array("L", 3, u=u) if arrays else [Lag(f"L{k}", u=u) for k in (1, 2, 3)]))
        runs.append(simulate(s, t_end=1.0, dt=0.05, rtol=1e-10, atol=1e-12))
    exact = 1.5 + (1.0 - 1.5) * np.exp(-2.0 * runs[0].t)
    for k in (1, 2, 3):
        assert np.max(np.abs(runs[0][f"L{k}.x"] - exact)) < 1e-8
        assert np.max(np.abs(runs[0][f"L{k}.x"] - runs[1][f"L{k}.x"])) < 1e-8


class Ramp(ac.Component):
    """One equation, ``der(x) = time`` from ``x(0) = 0``."""

    def __init__(self, name):
        super().__init__(name)
        x = self.variable("x", 0.0, fixed=True)
        self.equations(ac.der(x) == ac.time)


def test_an_array_of_one_equation_holding_time():
    """A template of one row that is no alias candidate (it holds time): its rows' affine
    form had a 1 x 0 shape (CasADi indexes a 1 x 1 by an empty list so) and failed;
    ``x = t^2 / 2`` (closed form)."""
    s = ac.System("ramps")
    s.add(Ramp.array("X", 3))
    res = simulate(s, t_end=1.0, dt=0.1, rtol=1e-10, atol=1e-12)
    for k in (1, 2, 3):
        assert np.max(np.abs(res[f"X{k}.x"] - res.t**2 / 2)) < 1e-9
