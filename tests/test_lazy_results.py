"""Results read lazily: rows of the solution, small functions, all at once into numpy.

Checked against closed forms (an RL circuit's current), against the model's output
expressions evaluated directly by CasADi (not through the result), and against finite
differences for sensitivities.
"""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from examples.ladders import chain, rc_ladder
from examples.references.sine_rc import ImplicitCubicResistor
from solvers import simulate

R, L, V = 2.0, 0.5, 1.0


def rl_circuit() -> ac.System:
    """A 1 V source, R = 2 ohm, L = 0.5 H from rest: i(t) = V/R (1 - exp(-R t / L))."""
    s = ac.System("rl")
    src = el.ConstantVoltage("V", V=V)
    res = el.Resistor("R", R=R)
    ind = el.Inductor("L", L=L, i0=0.0)
    gnd = el.Ground("G")
    s.connect(src.p, res.p)
    s.connect(res.n, ind.p)
    s.connect(ind.n, src.n, gnd.p)
    return s


def nonlinear_circuit() -> ac.System:
    """A 2 V source charging a capacitor through the cubic resistor."""
    s = ac.System("cubic_rc")
    src = el.ConstantVoltage("V", V=2.0)
    res = ImplicitCubicResistor("Rx", R=1.0, a=0.5)
    cap = el.Capacitor("C", C=0.3, v0=0.0)
    gnd = el.Ground("G")
    s.connect(src.p, res.p)
    s.connect(res.n, cap.p)
    s.connect(cap.n, src.n, gnd.p)
    return s


@pytest.fixture(scope="module")
def rl():
    model = ac.compile(rl_circuit())
    return model, simulate(model, t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)


def test_state_and_its_negated_alias_match_the_closed_form(rl):
    model, res = rl
    exact = V / R * (1 - np.exp(-R * res.t / L))
    assert np.max(np.abs(res["L.i"] - exact)) < 1e-8
    # L.n.i = -L.i: an alias with sign -1, read as minus the state's row
    assert np.array_equal(res["L.n.i"], -res["L.i"])
    readout = res.functions.readout
    k = model.names.index("L.n.i")
    assert readout.source[k] >= 0 and readout.sign[k] == -1.0
    # explicitly solved: the resistor's voltage R i and the inductor's L di/dt
    assert np.max(np.abs(res["R.v"] - R * exact)) < 1e-7
    assert np.max(np.abs(res["L.v"] - V * np.exp(-R * res.t / L))) < 1e-7
    assert np.max(np.abs(res["G.p.v"])) == 0.0


def outputs_directly(model: ac.Model, res) -> np.ndarray:
    """Every named variable from the model's output expressions, mapped by CasADi."""
    dae = model.dae
    fun = cs.Function("y", [dae.x, dae.z, model.p, model.t], [model.outputs])
    return np.asarray(fun.map(len(res.t))(res.x, res.z, res.p, res.t[None, :]))


def test_all_variables_at_once_equal_the_output_expressions(tmp_path):
    model = ac.compile(nonlinear_circuit())
    assert model.dae.z.numel() == 1  # Rx.i by Newton
    res = simulate(model, t_end=2.0, dt=0.05, rtol=1e-9, atol=1e-11)
    direct = outputs_directly(model, res)
    frame = res.to_dataframe()
    assert list(frame.columns) == list(model.names)
    assert np.array_equal(frame.index.to_numpy(), res.t)
    np.testing.assert_allclose(frame.to_numpy().T, direct, rtol=1e-14, atol=1e-14)
    # one at a time: the same numbers, a Newton unknown and an explicit variable alike
    for name in ("Rx.i", "Rx.v", "C.i", "Rx.n.i", "C.v", "V.i"):
        np.testing.assert_allclose(res[name], direct[model.names.index(name)], rtol=1e-14)
    # the circuit's physics: v = R i + a i^3 on the resistor (IDAS solves it to its
    # tolerances: measured 1.6e-9 at rtol 1e-9), i = C dv/dt
    i = res["Rx.i"]
    assert np.max(np.abs(res["Rx.v"] - (i + 0.5 * i**3))) < 1e-8
    assert np.max(np.abs(res["C.i"] - i)) < 1e-12
    # a subset, with time and a parameter, through to_csv
    path = res.to_csv(tmp_path / "out.csv", names=["C.v", "time", "Rx.a", "Rx.i"])
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    np.testing.assert_allclose(table[:, 1], res["C.v"], rtol=1e-11)
    np.testing.assert_allclose(table[:, 2], res.t, rtol=1e-11)
    assert np.all(table[:, 3] == 0.5)
    np.testing.assert_allclose(table[:, 4], i, rtol=1e-11)


def test_names_read_one_by_one_then_all_equal_the_output_expressions():
    """The readout finds each name's kind when it is first read: names read one at a time,
    then a mixed batch, then all of them, against the output expressions mapped by
    CasADi (a second way); a state is found to be a row of the solution."""
    model = ac.compile(nonlinear_circuit())
    res = simulate(model, t_end=2.0, dt=0.05, rtol=1e-9, atol=1e-11)
    direct = outputs_directly(model, res)
    readout = res.functions.readout
    order = np.random.default_rng(3).permutation(len(model.names))
    for k in order[:5]:
        np.testing.assert_allclose(res[model.names[k]], direct[k], rtol=1e-14, atol=1e-14)
    assert readout._classified.sum() == 5
    batch = order[3:12].tolist()
    got = readout.evaluate(batch, res._w(), res.p, res.t)
    np.testing.assert_allclose(got, direct[batch], rtol=1e-14, atol=1e-14)
    frame = res.to_dataframe()
    np.testing.assert_allclose(frame.to_numpy().T, direct, rtol=1e-14, atol=1e-14)
    assert readout._classified.all()
    c = model.names.index("C.v")  # a state: a row of the solution, sign 1, offset 0
    assert readout.source[c] >= 0 and readout.sign[c] == 1.0 and readout.offset[c] == 0.0


def test_dataframe_is_a_copy():
    model = ac.compile(rl_circuit())
    res = simulate(model, t_end=0.5, dt=0.1)
    frame = res.to_dataframe()
    before = res["L.i"].copy()
    frame.loc[:, "L.i"] = 123.0
    assert np.array_equal(res["L.i"], before)


def test_sensitivity_of_an_alias_and_an_explicit_variable():
    model = ac.compile(rl_circuit())
    res = simulate(model, t_end=1.0, dt=0.02, rtol=1e-10, atol=1e-12, sensitivities=["R.R"])
    t = res.t
    # d/dR of i = V/R (1 - exp(-R t/L))
    di = -V / R**2 * (1 - np.exp(-R * t / L)) + V / R * (t / L) * np.exp(-R * t / L)
    assert np.max(np.abs(res.sensitivity("L.n.i", "R.R") + di)) < 1e-7
    # R.v = R i: d/dR = i + R di/dR (the parameter's own direction counts)
    i = V / R * (1 - np.exp(-R * t / L))
    assert np.max(np.abs(res.sensitivity("R.v", "R.R") - (i + R * di))) < 1e-7


def test_unknown_name_is_named_in_the_error(rl):
    _, res = rl
    with pytest.raises(Exception, match="L.ii"):
        res["L.ii"]


@pytest.mark.parametrize("build", [rc_ladder, chain])
def test_a_name_read_alone_is_classified_as_in_a_batch(build, monkeypatch):
    """A few names are classified one by one from the symbols each holds (the cost of
    that expression, not of the model), the symbols found in ``w`` by a sparsity pass for
    the first ``LOOKUPS`` names and by a table of ``w``'s symbols after them; a batch of
    more than ``FEW`` by whole-vector calls. The three ways give every name of a stepped
    RC ladder (time in the source) and a spring chain (offsets of parameters) the same
    row, sign, offset or dependencies."""
    import solvers.readout
    from solvers.readout import FEW, LOOKUPS, Readout

    model = ac.compile(build(6, True))
    every = np.arange(len(model.names))
    assert every.size > max(FEW, LOOKUPS)
    batch, alone = Readout(model), Readout(model)
    batch._classify(every)
    for k in every:
        alone._classify(np.array([k]))
    assert alone._lookups == LOOKUPS and alone._rows_of is not None  # both ways used
    monkeypatch.setattr(solvers.readout, "LOOKUPS", every.size)
    passes = Readout(model)  # every name by a sparsity pass
    for k in every:
        passes._classify(np.array([k]))
    assert passes._rows_of is None
    for other in (alone, passes):
        assert np.array_equal(batch.source, other.source)
        assert np.array_equal(batch.sign, other.sign)
        assert np.array_equal(batch.offset, other.offset)
        assert batch._deps.keys() == other._deps.keys()
        assert all(set(batch._deps[k]) == set(other._deps[k]) for k in batch._deps)
    assert (batch.source >= 0).sum() > len(model.states)  # states and their aliases


class _Flag(ac.Component):
    """``f = 1`` while its pin's voltage is above 0.5 V, else 0: a variable that depends
    on one state only through a comparison (a zero derivative, not a row of it)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        f = self.variable("f")
        self.equations(self.p.i == 0, f == cs.if_else(self.p.v > 0.5, 1.0, 0.0))


def test_a_variable_switched_by_a_state_reads_right_alone_and_in_a_batch():
    """The flag on the last capacitor of a charging RC ladder equals ``C10.v > 0.5`` at
    every output (the closed form of its equation from the state read), read alone and
    with every name at once (once read as ``0 * C10.v + 0``: all zeros)."""
    s = rc_ladder(10)
    flag = _Flag("F")
    capacitors = next(a for a in s._order if isinstance(a, ac.ComponentArray) and a.prefix == "C")
    s.connect(flag.p, capacitors.p[9])
    model = ac.compile(s)
    runs = [simulate(model, t_end=3.0, dt=0.5) for _ in range(2)]
    assert runs[0].functions.readout is not runs[1].functions.readout  # each its own kinds
    expected = (runs[0]["C10.v"] > 0.5).astype(float)
    assert 0.0 < expected.mean() < 1.0  # it switches
    np.testing.assert_array_equal(runs[0]["F.f"], expected)  # alone
    np.testing.assert_array_equal(runs[1].to_dataframe()["F.f"].to_numpy(), expected)  # batch
