"""State selection (issue 10, static part): the dummy-derivative costs, the numerical check
at the start point, ties named at compile time, advice in the model's domain.

* the cost rules on hand-made graphs (no symbols): a fixed start counts at the derivative
  level where the choice is made, through a derivative alias ``w = der(phi)`` too; a state
  priority outranks a fixed start; a choice singular at the start point is replaced by
  the cheapest regular one;
* small models: a priority anywhere in an alias class counts; a tie is a warning when the
  equations are nonlinear (a mechanism), a recorded fact when linear (a capacitor loop);
* MSL Engine1a with the start values on the crank joint: the crank angle is the state, and
  the run matches the Modelica reference, closes the loop and conserves energy;
* the variant matrix of :mod:`examples.references.mechanisms`: the states chosen for every
  variant, and ten revolutions for those a static choice can carry;
* a singular block of a mechanism is explained with joints and ``state_priority``.
"""

import warnings

import casadi as cs
import numpy as np
import pytest
import scipy.sparse as sp

import acausal as ac
from acausal.structure.algorithms import pantelides, states_and_algebraic
from acausal.structure.diagnose import explain_block, is_singular
from acausal.structure.dummies import independent_columns, regular_choice, select_dummies
from acausal.structure.selection import Worth, strongest
from components import electrical as el
from examples.references import mechanisms as mech
from examples.references.pendulum import Pendulum
from solvers import simulate

from .validation.reference import load, max_error

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors")

# -- the cost rules on a hand-made loop --------------------------------------------------
PSI, PHI, W, LAM = range(4)
# one degree of freedom: coordinates psi (declared first) and phi tied by g(psi, phi) = 0,
# accelerations with a multiplier lam, and w = der(phi), a derivative alias:
#   e0: g(psi, phi) = 0   e1: w = der(phi)   e2: psi'' = f(psi, phi, lam)   e3: phi'' = h(...)
LOOP = [
    {(PSI, 0), (PHI, 0)},
    {(W, 0), (PHI, 1)},
    {(PSI, 2), (PSI, 0), (PHI, 0), (LAM, 0)},
    {(PHI, 2), (PSI, 0), (PHI, 0), (LAM, 0)},
]
ALIASES = [(W, PHI, 1)]  # w = der(phi)


def reduced_loop():
    """Pantelides on LOOP, differentiating structurally (each column keeps its order and
    gains the next): g is differentiated twice, e1 never (w is no highest derivative)."""
    rows = [set(r) for r in LOOP]

    def differentiate(e):
        rows.append(set(rows[e]) | {(v, o + 1) for v, o in rows[e]})
        return rows[-1]

    p = pantelides(LOOP, 4, differentiate)
    assert p.child == {0: 4, 4: 5} and p.hv == (2, 2, 0, 0)
    return p


def kept_states(priority=(0, 0, 0, 0), fixed=(False,) * 4, aliases=ALIASES, jacobian=None):
    p = reduced_loop()
    worth = Worth(p.hv, aliases, priority, fixed)
    choices = select_dummies(p.rows, p.child, p.hv, worth.cost, jacobian, worth.rank)
    states, _ = states_and_algebraic(p.hv, frozenset(c for ch in choices for c in ch.dummies))
    return states, choices


def test_a_fixed_speed_counts_where_the_second_derivatives_are_chosen():
    # level 1 (g'') picks one of psi'', phi'': demoting phi'' takes the state phi' away,
    # and phi' is w, whose start is fixed: 10 + 100 against 10 for psi''
    states, _ = kept_states(fixed=(False, False, True, False))
    assert states == [(PHI, 0), (PHI, 1)]
    p = reduced_loop()
    worth = Worth(p.hv, ALIASES, [0] * 4, [False, False, True, False])
    assert worth.cost((PHI, 2)) == 110 and worth.cost((PSI, 2)) == 10
    assert worth.cost((PHI, 1)) == 10  # demoting phi' takes phi away: no start on phi
    # without the alias the fixed w0 is invisible: a tie, and psi (declared first) wins
    states, _ = kept_states(fixed=(False, False, True, False), aliases=[])
    assert states == [(PSI, 0), (PSI, 1)]


def test_a_state_priority_outranks_a_fixed_start():
    states, _ = kept_states(priority=(1, 0, 0, 0), fixed=(False, False, True, False))
    assert states == [(PSI, 0), (PSI, 1)]  # 10 + 1000 against 10 + 100
    # a priority asked through the alias (the joint's speed) counts for phi
    states, _ = kept_states(priority=(0, 0, 1, 0))
    assert states == [(PHI, 0), (PHI, 1)]
    # a negative priority (avoid) outranks a fixed start too: cost max(1, 10 + 100 - 1000)
    states, _ = kept_states(priority=(0, -1, 0, 0), fixed=(False, False, True, False))
    assert states == [(PSI, 0), (PSI, 1)]


def test_strongest_request_of_an_alias_class():
    assert strongest([0, 2, -1, 1]) == 2  # a request to keep wins
    assert strongest([0, -1, 0]) == -1  # else a request to avoid
    assert strongest([0, 0]) == 0


def test_a_tie_is_reported_and_decided_by_declaration_order():
    states, choices = kept_states()
    assert states == [(PSI, 0), (PSI, 1)]
    # level 1: psi'' kept, phi'' the dummy, both cost 10 and either would do
    assert [(ch.level, ch.ties) for ch in choices] == [(1, (((PSI, 2), (PHI, 2)),)), (2, ())]
    _, choices = kept_states(fixed=(False, False, True, False))
    assert all(ch.ties == () for ch in choices)  # the fixed w0 decides


def level_jacobian(psi, phi):
    """``dg/dz`` with ``dg/dpsi = psi``, ``dg/dphi = phi`` at every level."""
    column = {PSI: psi, PHI: phi}
    return lambda g, cand: sp.csr_matrix([[column[v] for v, _ in cand]] * len(g))


def test_a_choice_singular_at_the_start_is_replaced_by_the_cheapest_regular_one():
    # the fixed w0 prefers phi as the state, so psi'' is the dummy: but dg/dpsi = 0 at the
    # start (psi is at a dead point), so psi'' cannot be solved from g'' there
    states, choices = kept_states(fixed=(False, False, True, False), jacobian=level_jacobian(0, 1))
    assert states == [(PSI, 0), (PSI, 1)]
    assert choices[0].status == "reselected"
    assert choices[0].cheapest == ((PSI, 2),) and choices[0].dummies == ((PHI, 2),)
    _, choices = kept_states(fixed=(False, False, True, False), jacobian=level_jacobian(0.5, 2))
    assert [ch.status for ch in choices] == ["regular", "regular"]
    _, choices = kept_states(jacobian=level_jacobian(0, 0))
    assert choices[0].status == "singular"  # no choice is regular: the structural one stays


def test_greedy_basis_of_the_columns():
    mat = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 1e-3]])  # columns 0 and 1 are parallel
    assert independent_columns(mat, [0, 1, 2]) == [0, 2]
    assert independent_columns(mat, [1, 0, 2]) == [1, 2]
    assert regular_choice(mat, [0, 2], [0, 1, 2]) == ("regular", [0, 2])
    assert regular_choice(mat, [0, 1], [1, 0, 2]) == ("reselected", [1, 2])
    assert regular_choice(mat[:, :2], [0, 1], [0, 1])[0] == "singular"


# -- small models ----------------------------------------------------------------------------
class Probe(ac.Component):
    """A variable equal to a signal of another component: an alias of it."""

    def __init__(self, name, signal, state_priority=0):
        super().__init__(name)
        self.value = self.variable("value", state_priority=state_priority)
        self.equations(self.value == signal)


def compiled(*components):
    s = ac.System("test")
    s.add(*components)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = ac.compile(s)
    return model, [w for w in caught if issubclass(w.category, ac.StateSelectionWarning)]


def test_a_state_priority_anywhere_in_the_alias_class_counts():
    pend = Pendulum("pend")
    model, caught = compiled(pend, Probe("probe", pend.y, state_priority=1))
    # pend.y represents the class {pend.y, probe.value}; the probe's priority is the class's
    assert sorted(model.states) == ["pend.vy", "pend.y"]
    assert caught == [] and model.ir.state_ties == ()


def test_a_tie_in_a_mechanism_is_named_at_compile_time():
    model, caught = compiled(Pendulum("pend", x_start=0.6, y_start=-0.8))
    assert sorted(model.states) == ["pend.vx", "pend.x"]  # declared first
    assert model.ir.state_ties == (("pend.x", ("pend.y",)),)
    (warning,) = caught
    text = str(warning.message)
    assert "pend.x was chosen among equally good candidates pend.x, pend.y" in text
    assert "state_priority=1 on pend" in text
    assert model.ir.notes == (text,)


def test_a_pendulum_started_level_keeps_its_height():
    """At x = L, y = 0 the constraint's gradient (2x, 2y) has no y part: the tie's
    choice x (declared first) would leave y'' (the dummy) undetermined there, so y is taken."""
    model, caught = compiled(Pendulum("pend", x_start=1.0, y_start=0.0))
    assert sorted(model.states) == ["pend.vy", "pend.y"]
    texts = [str(w.message) for w in caught]
    assert "the preferred states pend.x are singular at the start values" in texts[0]
    # it falls; at the bottom (t = 0.59 s) y has its own dead point, which only dynamic
    # state selection passes: here the first 0.5 s, against energy conservation
    res = simulate(model, t_end=0.5, dt=0.01, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(res["pend.x"] ** 2 + res["pend.y"] ** 2 - 1)) <= 1e-9
    assert res["pend.y"][-1] < -0.9
    energy = (res["pend.vx"] ** 2 + res["pend.vy"] ** 2) / 2 + 9.81 * res["pend.y"]
    assert np.max(np.abs(energy)) <= 1e-7  # it started at rest at height 0


def capacitor_loop():
    """A source charges node a through R; C1 (a-ground), C2 (b-ground), C3 (a-b) close a
    loop of capacitors (index 2), none with a start value."""
    s = ac.System("c_loop")
    src, r, g = el.ConstantVoltage("V", V=1.0), el.Resistor("R", R=1.0), el.Ground("G")
    c1, c2, c3 = (el.Capacitor(f"C{k}", C=1.0) for k in (1, 2, 3))
    s.connect(src.p, r.p)
    s.connect(r.n, c1.p, c3.p)
    s.connect(c3.n, c2.p)
    s.connect(src.n, c1.n, c2.n, g.p)
    return s


def test_a_tie_in_linear_equations_is_recorded_not_warned():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = ac.compile(capacitor_loop())
    assert model.index == 2 and len(model.ir.states) == 2
    assert not [w for w in caught if issubclass(w.category, ac.StateSelectionWarning)]
    (kept, others), *_ = model.ir.state_ties
    assert {kept, *others} <= {"C1.v", "C2.v", "C3.v"} and others


# -- Engine1a with the start values on the crank joint -------------------------------------
CRANK = mech.Variant("slider_crank", place="crank", drive="free", theta0=0.0)
ENGINE1A_INERTIA = mech.Variant("slider_crank", place="inertia", drive="free", theta0=0.0)
EXAMPLE = "Mechanics.MultiBody.Examples.Loops.Engine1a"


@pytest.fixture(scope="module")
def engine():
    """The crank-start Engine1a on the reference's grid, with the inertia-start one (the
    existing validation model) as a second method."""
    ref = load(EXAMPLE)
    model = ac.compile(CRANK.build())
    run = simulate(model, grid=ref["time"], rtol=1e-10, atol=1e-12)
    other = simulate(ENGINE1A_INERTIA.build(), grid=ref["time"], rtol=1e-10, atol=1e-12)
    return ref, model, run, other


def test_engine1a_with_starts_on_the_crank_keeps_the_crank_angle(engine):
    _, model, run, _ = engine
    assert model.states == ["B1.phi", "B1.w"]
    assert model.ir.notes == ()
    assert run.t[-1] == pytest.approx(4.999)  # the whole 5 s (it stopped at 0.155 s)
    assert run["B1.phi"][-1] > 50  # 53.4 rad: the crank passed 90 degrees 16 times


@pytest.mark.parametrize("name, tol", [("inertia.phi", 1e-5), ("inertia.w", 5e-4)])
def test_engine1a_with_starts_on_the_crank_matches_the_reference(engine, name, tol):
    ref, _, run, other = engine
    err = max_error(ref["time"], ref[name], run.t, run[name])
    # measured: 1.48e-4 rad of a 53.4 rad range (2.8e-6), 2.06e-4 rad/s of 1.66 (1.2e-4):
    # the reference's own accuracy (tests/validation/test_engine1a.py)
    assert err <= tol * np.ptp(ref[name]), err
    # the same motion as with the starts on the inertia (measured 1.6e-9, 2.6e-9)
    assert np.max(np.abs(run[name] - other[name])) <= 1e-6


def test_engine1a_with_starts_on_the_crank_closes_the_loop_and_conserves_energy(engine):
    _, _, run, _ = engine
    assert mech.loop_closure(run, "slider_crank") <= 1e-8  # measured 6e-13
    assert mech.energy_balance(run, CRANK) <= 1e-6  # measured 6.5e-10 of 76.6 J
    assert mech.energy(run, "slider_crank")[0] == pytest.approx(76.6, abs=0.05)


# -- the variant matrix ---------------------------------------------------------------------
# the states chosen, by (mechanism, place, drive); the same at 0 and 90 degrees except
# where noted. A slider-crank's piston pin and a four-bar's rocker have dead points on the
# way, so with the start values there the run stops (dynamic state selection, not static).
STATES = {
    ("slider_crank", "crank"): ["B1.phi", "B1.w"],
    ("slider_crank", "inertia"): ["inertia.phi", "inertia.w"],
    ("slider_crank", "rocker"): ["pin.phi", "pin.w"],  # at 90: B1 (pin's dead point)
    ("slider_crank", "none"): ["B1.phi", "B1.w"],  # a tie, named
    ("four_bar", "crank"): ["B1.phi", "B1.w"],
    ("four_bar", "inertia"): ["inertia.phi", "inertia.w"],
    ("four_bar", "rocker"): ["B4.phi", "B4.w"],
    ("four_bar", "none"): ["B1.phi", "B1.w"],  # a tie, named
}


@pytest.mark.parametrize("variant", mech.variants(), ids=lambda v: v.name)
def test_states_chosen_for_each_variant(variant):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = ac.compile(variant.build())
    notes = [str(w.message) for w in caught if issubclass(w.category, ac.StateSelectionWarning)]
    states = [q for q in model.states if not q.startswith("work.")]
    pin_dead_point = variant.mechanism == "slider_crank" and variant.place == "rocker"
    if pin_dead_point and variant.theta0 > 0:  # the fixed pin angle is its extreme
        assert states == ["B1.phi", "B1.w"]
        assert "the preferred states pin.phi are singular at the start values" in notes[0]
        return
    assert states == STATES[variant.mechanism, variant.place]
    assert bool(notes) == (variant.place == "none")
    if variant.place == "none":
        assert "B1.phi was chosen among equally good candidates" in notes[0]


RUNS = [v for v in mech.variants() if v.place in ("crank", "none")]


@pytest.mark.parametrize("variant", RUNS, ids=lambda v: v.name)
def test_ten_revolutions_with_the_crank_as_state(variant):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.StateSelectionWarning)
        res = simulate(variant.build(), t_end=6.5, dt=0.01, rtol=1e-9, atol=1e-11)
    assert mech.revolutions(res, variant) >= 10  # 10.7 to 12.0 measured
    assert mech.loop_closure(res, variant.mechanism) <= 1e-8  # measured up to 1.2e-11
    assert mech.energy_balance(res, variant) <= 1e-6  # measured up to 7e-9


@pytest.mark.parametrize("mechanism", mech.MECHANISMS)
def test_a_priority_on_the_crank_outranks_the_rocker_starts(mechanism):
    variant = mech.Variant(mechanism, "rocker", "free", np.pi / 2 if mechanism == "four_bar" else 0)
    model = ac.compile(variant.build(state_priority={"B1": 2}))
    assert model.states == ["B1.phi", "B1.w"]
    res = simulate(model, t_end=6.5, dt=0.01, rtol=1e-9, atol=1e-11)
    assert mech.revolutions(res, variant) >= 10
    assert mech.loop_closure(res, mechanism) <= 1e-8
    assert mech.energy_balance(res, variant) <= 1e-6


# -- advice in the model's domain ----------------------------------------------------------
def test_a_singular_block_of_a_mechanism_names_joints_and_state_priority():
    """The piston-pin state (starts on the pin) evaluated at the crank's 90 degrees, the
    pin's dead point: the block that solves the crank angle from it is singular there."""
    model = ac.compile(mech.Variant("slider_crank", "rocker", "free", 0.0).build())
    assert model.states == ["pin.phi", "pin.w"]
    at_90 = simulate(
        mech.Variant("slider_crank", "crank", "free", np.pi / 2).build(), grid=[0, 1e-3]
    )
    crank = model.reduced.unknowns.index("B1.phi")
    k, block = next((k, b) for k, b in enumerate(model.blocks, 1) if (crank, 0) in b.unknowns)
    ir = model.ir
    res = cs.vertcat(*[ir.equations[r].residual for r in block.equations])
    jac = cs.jacobian(res, cs.vertcat(*[ir.sym(c) for c in block.unknowns]))
    syms = cs.symvar(jac)
    values = [
        model.defaults[n] if n in model.defaults else at_90[n][0]
        for n in (model.symbol_name(s) for s in syms)
    ]
    mat = np.asarray(cs.evalf(cs.substitute(jac, cs.vertcat(*syms), cs.DM(values))))
    assert is_singular(mat, tol=1e-9)
    text = explain_block(ir, k, block, mat, "at t = 0.155")
    assert "from the states pin.phi, pin.w" in text and "a dead point of pin" in text
    assert "The coordinates of B1, cylinder are free to move there: give B1 a higher" in text
    assert "Ground" not in text and "resistance" not in text
