"""The reduced component under the user's names (issue 32), its equations against an
independent reference (the decoder's derivatives by finite differences, after the
right-hand side became one shared graph of the network), and a failed simulation that
says which coordinate left its training range (the simulator's report of the ranges that
components declare, checked first on an ODE with a closed-form solution)."""

from dataclasses import replace

import numpy as np
import pytest

import acausal as ac
import learning as ln
from acausal.errors import OptionError
from examples import two_bar_actuator as tb
from solvers import simulate

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors:UserWarning")


@pytest.fixture(scope="module")
def sim1():
    return tb.simulate_case("sim1", duration=2.0)


@pytest.fixture(scope="module")
def given(sim1):
    """The sliders' heights given as minimal coordinates, a small decoder, 3 epochs."""
    return ln.reduce_mechanism(
        tb.natural(sim1), hidden=(6, 6), epochs=3, batch=64, lr=1e-2, progress=False
    )


def test_the_minimal_coordinates_keep_the_users_names(given, sim1):
    """``coordinates`` are the result variables given, ``names`` their local names, and
    both name a coordinate everywhere: start values, ports, the result (``red.slide1.s``
    is ``red.q_slide1_s``), the decoded points and centres of mass under the bodies' names
    (equal to the numpy decoder's); a start from natural coordinates is keyed by them."""
    assert given.coordinates == tb.MINIMAL == ("slide1.s", "slide2.s")
    assert given.names == ("slide1_s", "slide2_s")
    assert [given.local(c) for c in given.coordinates] == list(given.names)
    assert [given.local(n) for n in given.names] == list(given.names)
    with pytest.raises(OptionError, match="'slide3.s' is no minimal coordinate"):
        given.local("slide3.s")
    r = given.data.records[0]
    q0, v0 = given.initial(r["x"][0], r["v"][0], record=0)
    assert list(q0) == list(v0) == list(tb.MINIMAL)
    s = ac.System("named")
    comp = given.component(
        "red",
        q0={"slide1.s": 0.01, "slide2_s": -0.02},  # either name
        v0={"slide1.s": 0.0, "slide2.s": 0.0},
        ports={"slide1.s": ac.Flange, "slide2.s": ac.Flange},
    )
    assert comp.port("slide1.s") is comp.port("slide1_s") is comp.slide1_s
    for i, c in enumerate(given.coordinates, 1):
        tb.mount(s, i, comp.port(c), tb.forces("sim2")[i - 1])
    res = simulate(s, t_end=0.5, dt=0.01, rtol=1e-8, atol=1e-10)
    assert res["red.slide1.s"][0] == pytest.approx(0.01, abs=1e-12)
    assert res["red.slide2.s"][0] == pytest.approx(-0.02, abs=1e-12)
    assert np.array_equal(res["red.slide1.s"], res["red.q_slide1_s"])
    q = np.column_stack([res[f"red.{c}"] for c in given.coordinates])
    x = given.decode(q)
    for j, n in enumerate(given.data.names):
        assert np.allclose(res[f"red.{n}"], x[:, j], rtol=0, atol=1e-12)
    for b, centre in given.data.centres(x).items():
        assert np.allclose(res[f"red.{b}.x_cm"], centre[:, 0], rtol=0, atol=1e-12)
        assert np.allclose(res[f"red.{b}.y_cm"], centre[:, 1], rtol=0, atol=1e-12)


def test_coordinates_whose_local_names_collide_are_refused(sim1):
    nc = tb.natural(sim1)
    with pytest.raises(OptionError, match="same local name"):
        ln.reduce_mechanism(replace(nc, minimal=("a.b", "a_b")), epochs=0, progress=False)


def test_the_reduced_equations_match_the_decoders_finite_differences(given):
    """The generalized forces of the component's equations at random ``(q, v, a)``:
    ``M a + J^T M_n h''[v, v] - J^T f_g`` with ``J`` and ``h''[v, v]`` from central
    differences of the numpy decoder (step 1e-4: error 1e-8 of the terms)."""
    rng = np.random.default_rng(0)
    span = given.high - given.low
    q = given.low + span * rng.uniform(size=(6, 2))
    v, a = rng.normal(size=(6, 2)), rng.normal(size=(6, 2))
    comp = given.component("red")
    by = lambda z: dict(zip(given.names, z.T))  # noqa: E731
    Q = comp.dynamics(by(q), v=by(v), a=by(a))["Q"]
    Mn, fg, h = given.data.mass, given.data.gravity, 1e-4
    for k in range(q.shape[0]):
        J = np.column_stack(
            [
                (given.decode(q[k] + h * e) - given.decode(q[k] - h * e))[0] / (2 * h)
                for e in np.eye(2)
            ]
        )
        curve = (
            given.decode(q[k] + h * v[k]) - 2 * given.decode(q[k]) + given.decode(q[k] - h * v[k])
        )[0] / h**2
        expected = J.T @ Mn @ J @ a[k] + J.T @ Mn @ curve - J.T @ fg
        assert np.allclose(Q[k], expected, rtol=1e-6, atol=1e-6 * np.max(np.abs(expected)))


class Blowup(ac.Component):
    """``x' = x^2``, ``x(0) = 1``: ``x = 1/(1 - t)``, infinite at ``t = 1``; valid in
    ``[0, 11]``, which it leaves at ``t = 1 - 1/11``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.x = self.variable("x", start=1.0, fixed=True)
        self.equations(ac.der(self.x) == self.x**2)

    def valid_ranges(self) -> tuple:
        return ((self.x, 0.0, 11.0, "valid range"),)


def test_a_failed_run_names_the_variables_outside_their_declared_ranges():
    """IDAS fails at the blow-up, t = 1; the error keeps the run up to the last output
    time before it (``x = 1/(1 - t)`` to 1e-4 relative: 2e-5 measured at t = 0.99, where
    x = 100 and the error grows with it) and says that ``b.x`` is outside
    ``[0, 11]`` since t = 0.91 s, the first output time after 1 - 1/11."""
    s = ac.System("blowup")
    s.add(Blowup("b"))
    with pytest.raises(ac.SimulationError) as caught:
        simulate(s, t_end=2.0, dt=0.01, rtol=1e-8, atol=1e-10)
    err = caught.value
    assert err.time == pytest.approx(1.0, abs=1e-6)
    t = err.result.t
    assert t[-1] == pytest.approx(0.99)
    assert np.allclose(err.result["b.x"], 1 / (1 - t), rtol=1e-4)
    assert f"b.x = {1 / (1 - t[-1]):.4g}" in str(err)
    assert "outside its valid range [0, 11] since t = 0.91 s" in str(err)


def test_a_reduced_model_that_fails_beyond_its_training_range_says_so(sim1):
    """Learned coordinates, an untrained ``(6,)`` decoder: far outside the training range
    its tanh layer saturates, ``J`` and ``M_m`` vanish, and a start speed whose energy
    exceeds every potential difference drives a coordinate to infinity in finite time, so
    IDAS gives up. The error names each coordinate outside its training range with its
    value at the last output time reached and the range; that partial run is the one a
    second simulation up to that time gives (to 1e-6 of the range)."""
    red = ln.reduce_mechanism(
        ln.natural_coordinates(sim1, tb.BODIES), hidden=(6,), epochs=0, progress=False
    )
    assert red.coordinates == red.names == ("z1", "z2")
    s = ac.System("free")
    s.add(red.component("red", q0={"z1": 0.0, "z2": 0.0}, v0={"z1": 5.0, "z2": 0.0}))
    with pytest.raises(ac.SimulationError) as caught:
        simulate(s, t_end=1.0, dt=0.01, rtol=1e-8, atol=1e-10)
    err = caught.value
    outside = 0
    for k, c in enumerate(red.coordinates):
        value, low, high = err.result[f"red.{c}"][-1], red.low[k], red.high[k]
        if low <= value <= high:
            assert f"red.{c} =" not in str(err)
            continue
        outside += 1
        assert f"red.{c} = {value:.6g}, outside its training range [{low:.6g}, {high:.6g}]" in str(
            err
        )
    assert outside >= 1
    again = simulate(s, t_end=err.result.t[-1], dt=0.01, rtol=1e-8, atol=1e-10)
    for k, c in enumerate(red.coordinates):
        scale = red.high[k] - red.low[k]
        assert np.allclose(again[f"red.{c}"], err.result[f"red.{c}"], rtol=0, atol=1e-6 * scale)
