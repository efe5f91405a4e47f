"""The simulate path reads a compiled model only through Model-level accessors.

A simulation of an event-free model, with or without Newton unknowns, reads ``model.t``,
``p``, ``dae``, ``names``, ``outputs``, ``states``, ``modes``, ``ranges``,
``alternatives``, ``initial_starts``, ``defaults``... but never the stages' forms
``model.flat``, ``model.reduced``, ``model.ir`` themselves: a model whose forms raise when
read, once those accessors are made, simulates to the same numbers. (A subclass of Model
that synthesizes these accessors need not make the forms for a simulation.)
"""

import pickle
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import acausal as ac
from examples.ladders import chain, rc_ladder
from examples.references.mechanisms import variants
from examples.references.switching import friction_system
from solvers import simulate
from tests.test_initial_values import two_capacitor_loops
from tests.test_lazy_results import nonlinear_circuit

FORMS = ("flat", "reduced", "ir")
# the accessors made from the forms, once: made before the forms are taken away
CACHED = ("initial_starts", "ranges", "alternatives", "states", "modes", "t", "_index_of", "p")
N = 20  # stages of the ladders
LOOPS = {"C1": 1.0, "C2": 0.6, "C3": 0.4, "C4": 0.7, "C5": 0.3}  # consistent voltages


class Unreadable:
    """Stands for a stage's form that must not be read: reading any attribute of it is an
    AssertionError naming the form and the attribute."""

    def __init__(self, form: str) -> None:
        self.form = form

    def __getattr__(self, name: str) -> None:
        raise AssertionError(f"model.{self.form}.{name} read")


def without_forms(model: ac.Model) -> ac.Model:
    """``model`` with its accessors made (:data:`CACHED`), then its forms unreadable."""
    for name in CACHED:
        getattr(model, name)
    for form in FORMS:
        object.__setattr__(model, form, Unreadable(form))
    return model


CASES = {
    "chain": (lambda: chain(N), {"t_end": 1.0, "dt": 1e-3}),
    "rc_ladder": (lambda: rc_ladder(N), {"t_end": 1.0, "dt": 1e-3, "rtol": 1e-10, "atol": 1e-12}),
    "cubic_rc": (nonlinear_circuit, {"t_end": 2.0, "dt": 0.05, "rtol": 1e-9, "atol": 1e-11}),
}


@pytest.mark.parametrize("case", CASES)
def test_a_simulation_reads_no_form_of_the_model(case):
    build, options = CASES[case]
    model = without_forms(ac.compile(build()))
    newton = case == "cubic_rc"  # the cubic resistor's current, solved by Newton / IDAS
    assert model.dae.z.numel() == newton and len(model.initial_starts.newton) == newton
    if not newton:
        assert model.z_columns() == []  # (read from dae alone)
    res = simulate(model, **options)
    ref = simulate(ac.compile(build()), **options)
    assert res.names == ref.names
    for name in ref.names:
        scale = max(1.0, np.max(np.abs(ref[name])))
        assert np.max(np.abs(res[name] - ref[name])) <= 1e-12 * scale, name


def rc_ladder_voltages(t: np.ndarray) -> np.ndarray:
    """The capacitor voltages of the RC ladder, by scipy's Radau on its ODE written by
    hand: ``C v_k' = (v_(k-1) - v_k) / R - (v_k - v_(k+1)) / R``, ``v_0 = 1`` (the step
    source, on from t = 0), no current beyond the last stage, ``R = C = 1/N``, from 0."""
    a = np.zeros((N, N))
    k = np.arange(N)
    a[k, k] = -2.0
    a[k[1:], k[:-1]] = a[k[:-1], k[1:]] = 1.0
    a[-1, -1] = -1.0
    rate = 1.0 / (1.0 / N * 1.0 / N)  # 1 / (R C)
    a *= rate
    b = np.zeros(N)
    b[0] = rate

    def f(_t, v):
        return a @ v + b

    sol = solve_ivp(f, (t[0], t[-1]), np.zeros(N), "Radau", t, rtol=1e-12, atol=1e-14, jac=a)
    return sol.y


def test_the_rc_ladder_without_its_forms_matches_its_ode():
    model = without_forms(ac.compile(rc_ladder(N)))
    res = simulate(model, t_end=1.0, dt=1e-3, rtol=1e-10, atol=1e-12)
    last = rc_ladder_voltages(res.t)[-1]
    np.testing.assert_allclose(res[f"C{N}.v"], last, rtol=1e-8, atol=1e-12)


def described(model: ac.Model, start: object) -> tuple | None:
    """A start value as (the variable it was declared on, fixed, its value as text)."""
    return None if start is None else (start.source, start.fixed, model.display(start.value))


def fixed(model: ac.Model, starts: tuple) -> list[tuple]:
    """Fixed starts as (column, place in (x, values), the start :func:`described`)."""
    return [(f.col, f.at, described(model, f.start)) for f in starts]


def test_initial_starts_of_reference_models():
    """The start values initialization read before ``Model.initial_starts``: modes' (a
    friction's), fixed starts on algebraic unknowns (two capacitor loops: C3.v and C5.v are
    determined by the other voltages), guesses of Newton unknowns (a slider-crank)."""
    model = ac.compile(friction_system())
    starts = model.initial_starts
    assert [described(model, s) for s in starts.states] == [
        ("m.s", True, "m.s0"),
        ("m.v", True, "m.v0"),
    ]
    assert [described(model, s) for s in starts.modes] == [("fr.mode", True, "fr.mode_start")]
    assert starts.newton == () and starts.fixed_others == ()
    assert fixed(model, starts.fixed_on_states) == [
        ((1, 0), 0, ("m.s", True, "m.s0")),
        ((2, 0), 1, ("m.v", True, "m.v0")),
    ]

    model = ac.compile(two_capacitor_loops(LOOPS))
    starts = model.initial_starts
    assert model.states == ["C1.v", "C2.v", "C4.v"] and starts.modes == starts.newton == ()
    assert fixed(model, starts.fixed_on_states) == [
        ((0, 0), 0, ("C1.v", True, "C1.v0")),
        ((2, 0), 1, ("C2.v", True, "C2.v0")),
        ((4, 0), 2, ("C4.v", True, "C4.v0")),
    ]
    assert fixed(model, starts.fixed_others) == [
        ((6, 0), 9, ("C3.v", True, "C3.v0")),
        ((7, 0), 11, ("C5.v", True, "C5.v0")),
    ]
    for f in starts.fixed_others:  # the place of its value in (x, values)
        k = model.ir.algebraic.index(f.col)
        assert f.at == model.dae.x.numel() + k

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a connector left unconnected)
        model = ac.compile(variants()[0].build())  # the slider-crank, fixed at the crank
    starts = model.initial_starts
    assert model.states == ["B1.phi", "B1.w"]
    assert [described(model, s) for s in starts.states] == [("B1.phi", True, "B1.phi0"), None]
    assert model.dae.z.numel() == 4
    assert [described(model, s) for s in starts.newton] == [
        ("cylinder.s", False, "0.3"),
        None,
        None,
        ("pin.phi", False, "0"),
    ]
    assert fixed(model, starts.fixed_on_states) == [((4, 0), 0, ("B1.phi", True, "B1.phi0"))]
    # the crank's speed B1.w, reported as a state, is der(B1.phi)'s: its own column algebraic
    assert fixed(model, starts.fixed_others) == [((5, 0), 8, ("B1.w", True, "B1.w0"))]


def test_a_model_with_its_accessors_made_pickles_and_compares_as_before():
    model = ac.compile(two_capacitor_loops(LOOPS))
    for name in CACHED:
        getattr(model, name)
    copy = pickle.loads(pickle.dumps(model))
    assert copy == model and copy.dump() == ac.compile(two_capacitor_loops(LOOPS)).dump()
    assert not {"initial_starts", "ranges", "alternatives", "t"} & set(vars(copy))  # not pickled
    assert fixed(copy, copy.initial_starts.fixed_others) == fixed(
        model, model.initial_starts.fixed_others
    )
