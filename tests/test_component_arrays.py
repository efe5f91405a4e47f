"""Arrays of components (``Component.array``): the same components, names and compiled
model as building the instances one by one, at the cost of one constructor call."""

import copy
import pickle

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from components import translational as tr
from examples.ladders import chain, rc_ladder


def test_instances_are_named_and_own_their_symbols():
    rs = el.Resistor.array("R", 3, R=2.0)
    assert [r.name for r in rs] == ["R1", "R2", "R3"]
    assert len({r.token for r in rs}) == 3
    r2 = rs[1]
    assert r2.p.owner is r2 and r2.connectors["n"].owner is r2
    assert r2.name_of(r2.v) == "R2.v" and r2.name_of(r2.p.i) == "R2.p.i"
    assert r2.quantities["R"].value == 2.0
    # its equations are the constructor's, in its own symbols
    built = el.Resistor("R2", R=2.0)
    assert [e.text() for e in r2.declared_equations] == [e.text() for e in built.declared_equations]
    names = {s.name() for e in r2.declared_equations for s in cs.symvar(e.residual)}
    assert all(r2.token in n for n in names)


def test_start_values_and_derivatives_refer_to_the_instance():
    caps = el.Capacitor.array("C", 2, C=0.5, v0=1.5)
    c2 = caps[1]
    start = c2.quantities["v"].start
    assert start.is_symbolic() and c2.name_of(start) == "C2.v0"
    assert c2.quantities["v"].fixed and c2.quantities["v0"].value == 1.5
    (eq,) = [e for e in c2.declared_equations if "der" in e.text()]
    assert eq.text() == "i == C*der(v)"


def test_an_array_ladder_compiles_to_the_same_model():
    by_array, one_by_one = ac.compile(rc_ladder(6, True)), ac.compile(rc_ladder(6, False))
    assert by_array == one_by_one
    assert "R4.v" in by_array.names and "C6.p.i" in by_array.names
    assert by_array.states == [f"C{k}.v" for k in range(1, 7)]


def test_an_array_system_copies_and_pickles():
    s = rc_ladder(3, True)
    model = ac.compile(s)
    assert ac.compile(copy.deepcopy(s)) == model
    assert pickle.loads(pickle.dumps(model)) == model
    # a copy of one instance leaves its array's stacks behind (no copy of the array)
    resistors = el.Resistor.array("R", 50, R=2.0)
    assert copy.deepcopy(resistors[7])._stacks[0].parts == {}
    # nor does a pickle carry them (with them: 1.47x the one-by-one ladder's size)
    assert len(pickle.dumps(rc_ladder(30, True))) < 1.2 * len(pickle.dumps(rc_ladder(30, False)))


def test_classes_that_cannot_be_copied_are_built_by_their_constructor():
    # the mass between hard stops has events: each instance is constructed
    stops = tr.MassWithStop.array("M", 3, m=2.0, smin=-1.0, smax=1.0)
    assert [m.name for m in stops] == ["M1", "M2", "M3"]
    assert [len(m.events) for m in stops] == [1, 1, 1]
    assert stops[2].quantities["m"].value == 2.0


@pytest.mark.filterwarnings("ignore:oscillators. unconnected connectors")
def test_a_mass_array_simulates_like_the_closed_form():
    """Three masses on springs to the wall, released from 0.1 m: each oscillates as
    ``s = 0.1 cos(w t)``, ``w = sqrt(c / m)`` (closed form)."""
    from solvers import simulate

    s = ac.System("oscillators")
    wall = tr.Fixed("wall")
    masses = tr.Mass.array("M", 3, m=0.5, s0=0.1, v0=0.0)
    springs = tr.Spring.array("S", 3, c=8.0)
    for m, k in zip(masses, springs):
        s.connect(wall.flange, k.flange_a)
        s.connect(k.flange_b, m.flange_a)
    res = simulate(s, t_end=1.0, dt=0.01, rtol=1e-10, atol=1e-12)
    exact = 0.1 * np.cos(4.0 * res.t)
    for k in (1, 2, 3):
        assert np.max(np.abs(res[f"M{k}.s"] - exact)) < 1e-7


@pytest.mark.parametrize("n", [0, -2, 1.5, True])
def test_a_bad_count_is_an_error(n):
    with pytest.raises(ac.OptionError, match="n must be an int"):
        el.Resistor.array("R", n)


def test_time_stays_shared_and_models_are_equal():
    """Sources read ``time``, which is not the template's own symbol: every instance reads
    the same ``time``, and the compiled model is the one built instance by instance."""

    def build(arrays: bool) -> ac.System:
        s = ac.System("sources")
        ground = el.Ground("G")
        if arrays:
            sources = el.SineVoltage.array("V", 3, V=2.0, f=0.5)
            loads = el.Resistor.array("R", 3, R=4.0)
        else:
            sources = [el.SineVoltage(f"V{k}", V=2.0, f=0.5) for k in (1, 2, 3)]
            loads = [el.Resistor(f"R{k}", R=4.0) for k in (1, 2, 3)]
        for v, r in zip(sources, loads):
            s.connect(v.p, r.p)
            s.connect(v.n, r.n, ground.p)
        return s

    model = ac.compile(build(True))
    assert model == ac.compile(build(False))
    current = model.outputs[model.check_name("R3.i")]  # V sin(2 pi f t) / R at t = 0.5
    values = cs.DM(list(model.defaults.values()))
    at = cs.substitute(current, cs.vertcat(model.p, model.t), cs.vertcat(values, 0.5))
    assert float(cs.evalf(at)) == pytest.approx(0.5, rel=1e-12)


def _flat_forms(system: ac.System, monkeypatch) -> tuple:
    """``flatten(system)`` and its compiled model twice: as compile does it (copies'
    scalars taken from their arrays' stacks, counted), and with every component's
    scalars stacked one by one."""
    from acausal import arrays
    from acausal.flatten import flatten

    unchanged, taken = arrays._unchanged, []

    def spy(c, which):
        found = unchanged(c, which)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(arrays, "_unchanged", spy)
    fast = flatten(system)
    counted = list(taken)  # (compile flattens once more)
    fast_model = ac.compile(system)
    monkeypatch.setattr(arrays, "_unchanged", lambda c, which: None)
    return (fast, fast_model), (flatten(system), ac.compile(system)), counted


def _same_entries(a: cs.SX, b: cs.SX) -> bool:
    """Same pattern, and entries equal as expressions (the connection equations are made
    anew by each flatten: compared a few levels deep)."""
    return a.sparsity() == b.sparsity() and all(
        cs.is_equal(x, y, 10) for x, y in zip(cs.vertsplit(a), cs.vertsplit(b))
    )


def test_flatten_takes_array_copies_from_their_stacks_as_if_one_by_one(monkeypatch):
    """The chain interleaves three arrays (masses, springs, dampers) with two components
    built alone; one copy gains a variable and an equation after the array was made, one
    its symbolic start values differ: those are stacked scalar by scalar, the others
    taken from the arrays' stacks, and the flat forms are entry for entry the same."""
    s = chain(5, arrays=True)
    comps = {c.name: c for c in s.all_components()}
    spring, mass = comps["S3"], comps["M4"]
    extra = spring.variable("power")
    spring.equations(extra == spring.f * spring.flange_a.s)
    mass.quantities["s"].start = mass.quantities["v"].start
    (fast, fast_model), (slow, slow_model), taken = _flat_forms(s, monkeypatch)
    # 17 components, three parts each; copies: masses 2-5, springs 2, 4, 5 (3 changed its
    # symbols and residuals), dampers 2-5; mass 4 changed its starts only
    assert len(taken) == 3 * 17 and sum(taken) == 3 * 12 - 2 - 1
    assert fast.variables == slow.variables and fast.symbols.keys() == slow.symbols.keys()
    assert _same_entries(fast.residuals, slow.residuals)
    assert _same_entries(fast.symbols.stack, slow.symbols.stack)
    assert all(cs.is_equal(fast.symbols[q].start, slow.symbols[q].start) for q in ("M4.s", "M5.s"))
    assert fast_model == slow_model


def test_vstack_is_vertcat():
    from acausal.symbols import vstack

    x, y = cs.SX.sym("x", 4), cs.SX.sym("y", 3)
    dense = [x, cs.sin(y), cs.SX(0, 1), x[1] * y[2], cs.SX(2.0)]
    sparse = [x, cs.SX(3, 1), y]  # structural zeros: kept, as vertcat keeps them
    many = [x[k % 4] for k in range(40)]
    for parts in (dense, sparse, many, [x]):
        assert _same_entries(vstack(parts), cs.vertcat(*parts))
    assert vstack(sparse).nnz() == 7
