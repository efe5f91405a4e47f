"""The modeling language: user connectors, der() of expressions, inner/outer, hierarchy."""

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from solvers import simulate

Fluid = ac.ConnectorType("Fluid", potentials=("p",), flows=("q",))


class Tank(ac.Component):
    """A tank of area A: ``A der(h) = port.q``, pressure ``p = rho g h`` (rho g = 1)."""

    def __init__(self, name, A=1.0, h0=None):
        super().__init__(name)
        self.port = self.connector("port", Fluid)
        A = self.parameter("A", A)
        self.h = self.variable("h", start=self.initial("h0", h0), fixed=h0 is not None)
        self.equations(A * ac.der(self.h) == self.port.q, self.port.p == self.h)


class Pipe(ac.Component):
    """Laminar pipe: ``q = (a.p - b.p) / R`` from a to b."""

    def __init__(self, name, R=1.0):
        super().__init__(name)
        self.a, self.b = self.connector("a", Fluid), self.connector("b", Fluid)
        R = self.parameter("R", R)
        self.equations(self.a.q + self.b.q == 0, self.a.q == (self.a.p - self.b.p) / R)


def test_user_connector_type_two_tanks_equalize():
    s = ac.System("tanks")
    t1, t2, pipe = Tank("t1", A=1.0, h0=2.0), Tank("t2", A=1.0, h0=0.0), Pipe("pipe", R=0.5)
    s.connect(t1.port, pipe.a)
    s.connect(pipe.b, t2.port)
    res = simulate(s, t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    # h1 - h2 = 2 exp(-t (1/A1 + 1/A2)/R), and the total volume is conserved
    assert np.max(np.abs(res["t1.h"] - res["t2.h"] - 2 * np.exp(-4 * res.t))) < 1e-8
    assert np.max(np.abs(res["t1.h"] + res["t2.h"] - 2.0)) < 1e-10


def test_der_of_an_expression_follows_the_chain_rule():
    class Square(ac.Component):
        def __init__(self, name):
            super().__init__(name)
            x = self.variable("x", start=1.0, fixed=True)
            y = self.variable("y")
            self.equations(ac.der(x) == 1, y == ac.der(x * x + ac.sin(ac.time)))

    s = ac.System("chain")
    s.add(Square("sq"))
    res = simulate(s, t_end=1.0, dt=0.1, rtol=1e-10, atol=1e-12)
    x = 1.0 + res.t
    assert np.max(np.abs(res["sq.y"] - (2 * x + np.cos(res.t)))) < 1e-8


class World(ac.Component):
    def __init__(self, name, g=9.81):
        super().__init__(name)
        self.inner("g", g)


class Falling(ac.Component):
    def __init__(self, name):
        super().__init__(name)
        g = self.outer("g", 1.0)
        self.y = self.variable("y", start=0.0, fixed=True)
        v = self.variable("v", start=0.0, fixed=True)
        self.equations(ac.der(self.y) == v, ac.der(v) == -g)


def test_outer_parameter_comes_from_the_inner_one():
    s = ac.System("fall")
    s.add(World("world", g=2.0), Falling("a"), Falling("b"))
    res = simulate(s, t_end=1.0, dt=0.5)
    assert res["a.y"][-1] == pytest.approx(-1.0) and res["b.y"][-1] == pytest.approx(-1.0)
    assert list(res.params) == ["world.g"]  # the outer ones are not parameters of their own
    moon = simulate(s, t_end=1.0, dt=0.5, params={"world.g": 1.62})
    assert moon["b.y"][-1] == pytest.approx(-0.81)


def test_outer_without_inner_uses_its_default():
    s = ac.System("alone")
    s.add(Falling("a"))
    assert simulate(s, t_end=1.0, dt=0.5)["a.y"][-1] == pytest.approx(-0.5)


def test_two_inners_of_one_name_are_an_error():
    s = ac.System("two_worlds")
    s.add(World("w1"), World("w2"), Falling("a"))
    with pytest.raises(ac.NameClashError, match="w1.g and w2.g"):
        ac.compile(s)


class RC(ac.Component):
    """A hierarchical low-pass: R from p to out, C from out to n; exposes p, n, out."""

    def __init__(self, name, R=1.0, C=1.0):
        super().__init__(name)
        self.R, self.C = el.Resistor("R", R=R), el.Capacitor("C", C=C, v0=0.0)
        self.connect(self.R.n, self.C.p)
        self.p = self.expose("p", self.R.p)
        self.n = self.expose("n", self.C.n)
        self.out = self.expose("out", self.C.p)


def test_hierarchical_component_and_exposed_names():
    s = ac.System("nested")
    V, G = el.ConstantVoltage("V", V=1.0), el.Ground("G")
    f1, f2 = RC("f1", R=1.0, C=1.0), RC("f2", R=1.0, C=1.0)
    s.connect(V.p, f1.p)
    s.connect(f1.out, f2.p)
    s.connect(V.n, f1.n, f2.n, G.p)
    res = simulate(s, t_end=5.0, dt=0.01, rtol=1e-10, atol=1e-12)
    # two loaded RC stages: v1' = (1 - v1) - (v1 - v2), v2' = v1 - v2
    from scipy.integrate import solve_ivp

    ref = solve_ivp(
        lambda t, v: [1 - 2 * v[0] + v[1], v[0] - v[1]],
        (0, 5),
        [0, 0],
        t_eval=res.t,
        rtol=1e-12,
        atol=1e-14,
    )
    assert np.max(np.abs(res["f2.C.v"] - ref.y[1])) < 1e-8
    assert np.max(np.abs(res["f1.out.v"] - res["f1.C.v"])) == 0.0  # an exposed name


def test_sampled_position_is_a_c2_spline_differentiated_exactly():
    from scipy.interpolate import CubicSpline

    from components import translational as tr

    t = np.linspace(0.0, 2.0, 41)
    s_ref = 0.3 * np.sin(2.0 * t) * np.exp(-t)
    sys = ac.System("servo")
    mass = tr.Mass("m", m=0.7)
    servo = tr.Position("servo", s=(t, s_ref))
    sys.connect(servo.flange, mass.flange_a)
    res = simulate(sys, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12)
    spline = CubicSpline(t, s_ref)
    assert ac.compile(sys).index == 3
    assert np.max(np.abs(res["m.s"] - spline(res.t))) < 1e-12
    # the servo pushes the mass: flange force -m s''(t) on the source side
    assert np.max(np.abs(res["m.a"] - spline(res.t, 2))) < 1e-9
