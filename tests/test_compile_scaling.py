"""The compiler on the benchmark ladders and the reference models: the structural facts
(states, dummy derivatives, blocks) against closed forms in the ladder's size, and the
simulated ladders against the same equations written by hand (scipy). The compiler's
speed is measured in ``bench/compile_scaling.py``, not here."""

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import acausal as ac
from examples.cauer_filter import build as cauer
from examples.ladders import chain, rc_ladder
from examples.references.mechanisms import Variant


@pytest.mark.parametrize("n", [2, 7, 40])
def test_rc_ladder_structure(n):
    model = ac.compile(rc_ladder(n))
    assert model.index == 1 and model.dummy_derivatives == []
    assert model.states == [f"C{k}.v" for k in range(1, n + 1)]
    # per stage R.v, R.i, C.i and der(C.v) (a node's potential is its C.v, the pins'
    # currents aliases), the last C.i an alias of its R.i, plus the source's voltage and
    # the ground's current: 4 n + 1 scalar blocks, all explicit
    assert len(model.blocks) == 4 * n + 1
    assert {len(b.equations) for b in model.blocks} == {1}
    assert {b.kind for b in model.blocks} == {"explicit"}


@pytest.mark.parametrize("n", [1, 6, 30])
def test_chain_structure(n):
    model = ac.compile(chain(n))
    # a mass's flanges sit at s -/+ L/2 and its damper's s_rel is s - L/2 - s0 (the wall at
    # s0): aliases with parameter offsets, so der(s_rel) is der(s) and nothing is
    # differentiated (index 1, no dummy derivative)
    assert model.index == 1 and model.dummy_derivatives == []
    assert model.states == [f"M{k // 2 + 1}.{'sv'[k % 2]}" for k in range(2 * n)]
    assert all(e.order == 0 for e in model.ir.equations)
    # per stage: the spring's force and (past the first stage, whose place the wall's flow
    # balance takes) its s_rel, the mass's der(s), der(v) and a, the damper's v_rel and
    # force, and a flange's flow balance: 8 n explicit blocks
    assert len(model.blocks) == len(model.ir.equations) == 8 * n
    assert {len(b.equations) for b in model.blocks} == {1}
    assert {b.kind for b in model.blocks} == {"explicit"}
    assert model.reduced.eliminated["D1.s_rel"][:2] == (1.0, "M1.s")


def test_cauer_filter_structure():
    """The capacitor loops C1-C2 and C3-C4-C5... leave five states (index 2)."""
    model = ac.compile(cauer())
    assert model.index == 2
    assert sorted(model.states) == ["C1.v", "C3.v", "C5.v", "L1.i", "L2.i"]
    assert model.dummy_derivatives == ["der(C2.v)", "der(C4.v)"]
    assert sorted(len(b.equations) for b in model.blocks) == [1] * 11 + [10]
    assert [b.kind for b in model.blocks].count("linear") == 1


def test_slider_crank_structure():
    """One degree of freedom: the crank angle and its speed, plus the work meter's W."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.StateSelectionWarning)
        model = ac.compile(Variant("slider_crank", "crank", "torque", 0.0).build())
    assert model.index == 3
    assert model.states == ["B1.phi", "B1.w", "work.W"]
    # the piston's frames sit at its centre minus r_cm (it does not turn) and the housing
    # at phi0: aliases with parameter offsets, whose derivatives are no dummies
    assert len(model.dummy_derivatives) == 31
    assert model.reduced.eliminated["piston.frame_a.x"][:2] == (1.0, "piston.x_cm")
    assert sorted(len(b.equations) for b in model.blocks if len(b.equations) > 1) == [4, 4, 46]
    assert len(model.ir.states) + len(model.ir.algebraic) == sum(len(ch) for ch in model.ir.chains)


# 60 stages: the ground's (wall's) balance holds more than DENSE_ROW unknowns, so
# causalization differentiates it apart from the other rows
@pytest.mark.parametrize("n", [4, 60])
def test_rc_ladder_simulates_like_its_ode(n):
    from solvers import simulate

    res = simulate(rc_ladder(n), t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)
    r = c = 1.0 / n

    def rhs(t, v):
        cur = np.concatenate([[(1.0 - v[0]) / r], (v[:-1] - v[1:]) / r, [0.0]])
        return (cur[:-1] - cur[1:]) / c

    ref = solve_ivp(rhs, (0, 1), np.zeros(n), method="Radau", t_eval=res.t, rtol=1e-11, atol=1e-13)
    for k in range(n):
        assert np.max(np.abs(res[f"C{k + 1}.v"] - ref.y[k])) < 1e-7


@pytest.mark.parametrize("n", [4, 60])
def test_chain_simulates_like_its_ode(n):
    from solvers import simulate

    res = simulate(chain(n), t_end=0.5, dt=0.005, rtol=1e-10, atol=1e-12)
    m, c, d = 1.0 / n, 100.0 * n, float(n)

    def rhs(t, y):
        x, v = y[:n], y[n:]
        ext = np.concatenate([[0.0], x])  # the wall, then the masses
        tension = c * (ext[1:] - ext[:-1])  # spring k: between k - 1 and k
        force = -tension + np.concatenate([tension[1:], [1.0]]) - d * v
        return np.concatenate([v, force / m])

    ref = solve_ivp(
        rhs, (0, 0.5), np.zeros(2 * n), method="Radau", t_eval=res.t, rtol=1e-11, atol=1e-13
    )
    for k in range(n):
        assert np.max(np.abs(res[f"M{k + 1}.s"] - ref.y[k])) < 1e-8
    if n == 4:  # (the chain of 60 has not settled by 0.5 s)
        # the static deflection of n springs of 100 n N/m in series under 1 N: 1/100 m
        assert res[f"M{n}.s"][-1] == pytest.approx(0.01, rel=0.02)


def _thermal():
    """Two heat capacitors through a conductor and a resistor to a fixed temperature."""
    from components import thermal as th

    s = ac.System("thermal")
    c1, c2 = th.HeatCapacitor("C1", C=2.0, T0=300.0), th.HeatCapacitor("C2", C=1.0, T0=350.0)
    g, r, fixed = (
        th.ThermalConductor("G", G=0.5),
        th.ThermalResistor("R", R=4.0),
        th.FixedTemperature("T", T=290.0),
    )
    s.connect(c1.port, g.port_a)
    s.connect(g.port_b, c2.port, r.port_a)
    s.connect(r.port_b, fixed.port)
    return s


def _systems():
    """Small systems of every connector kind: electrical, translational (offsets from a
    wall), thermal, planar (a loop, offsets of parameters)."""
    from examples.references.ivp_mechanisms import andrews
    from examples.references.slider_crank_reference import slider_crank

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [rc_ladder(5), chain(4), cauer(), _thermal(), slider_crank(), andrews()]


@pytest.mark.parametrize("k", range(6))
def test_alias_elimination_keeps_the_incidence_of_its_equations(k):
    """The incidence alias elimination hands on (connection rows from the variables
    flatten recorded, the rows it changed re-read in a few columns) equals CasADi's
    sparsity of the equations it leaves, taken afresh."""
    import casadi as cs

    from acausal.flatten import flatten
    from acausal.structure.alias import eliminate_aliases
    from acausal.structure.graph import pattern

    red = eliminate_aliases(flatten(_systems()[k]))
    res = cs.vertcat(*[e.residual for e in red.equations])
    cols = cs.vertcat(*[red.flat.t if q is None else red.sym(q) for q in red.pattern_position])
    expected = pattern(res, cols)
    assert len(red.equations) > 0 and red.pattern.shape == expected.shape
    assert red.pattern.nnz == expected.nnz and (red.pattern != expected).nnz == 0


@pytest.mark.parametrize("seed", range(6))
def test_connection_sets_are_the_connected_parts_of_the_connector_graph(seed):
    """The connection sets (found on a sparse matrix) against networkx's connected
    components of the same connectors and ``connect`` calls: the same sets, each in
    declaration order, the sets ordered by their first connector; unconnected connectors
    are sets of one."""
    import networkx as nx

    from components import electrical as el

    rng = np.random.default_rng(seed)
    s = ac.System("random")
    parts = [el.Resistor(f"R{k}", R=1.0) for k in range(30)]
    pins = [p for r in parts for p in (r.p, r.n)]
    s.add(*parts)
    for _ in range(int(rng.integers(5, 40))):
        picked = rng.choice(len(pins), size=int(rng.integers(2, 4)), replace=False)
        s.connect(*[pins[k] for k in picked])
    sets = s.connection_sets()
    position = {id(p): k for k, p in enumerate(pins)}
    expected = sorted(
        (sorted(c, key=lambda p: position[id(p)]) for c in nx.connected_components(s.graph())),
        key=lambda c: position[id(c[0])],
    )
    assert [[p.name for p in c] for c in sets] == [[p.name for p in c] for c in expected]
    assert sum(len(c) for c in sets) == len(pins)


def test_objects_made_while_the_collector_is_paused_are_kept_from_young_scans_not_leaked():
    import gc
    import weakref

    from acausal.gc_pause import paused_gc

    class Node:
        pass

    enabled = gc.isenabled()
    with paused_gc():
        cycle = Node()
        cycle.me = cycle
        ref = weakref.ref(cycle)
        del cycle
        kept = [Node() for _ in range(5000)]
    # the allocations after the with start young scans; none reaches what was made inside
    kept += [[k] for k in range(5000)]
    assert ref() is not None and gc.isenabled() == enabled
    gc.collect()  # a full collection still frees the cycle made inside
    assert ref() is None
