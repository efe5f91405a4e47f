"""Helpers several test files share: data made once per process (runs at tight tolerances
that several files read), e.g. the oscillator's trajectories of
:mod:`examples.references.oscillator`."""

import functools

import numpy as np

import acausal as ac
import learning as ln
from examples.references.oscillator import oscillator_trajectories


def trajectories(freqs=(3.0, 5.0, 8.0), t_end=2.0, dt=2e-3):
    """:func:`oscillator_trajectories`, each call a fresh copy of one run per process."""
    return [{k: v.copy() for k, v in d.items()} for d in _runs(tuple(freqs), t_end, dt)]


@functools.lru_cache(maxsize=4)
def _runs(freqs, t_end, dt):
    return oscillator_trajectories(freqs, t_end, dt)


def unknown(order=3, constraint="dissipative", **kw):
    return ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=order, constraint=constraint, **kw))


def learned_voltage(w, i, order):
    """The v with g_f(i) = g_x(v) for the learned odd polynomials: the one real root of
    sum_k w_xk v^k - g_f(i) (g_x strictly increasing), by numpy's polynomial roots."""
    out = []
    for ik in i:
        gf = sum(w[f"w_f{p}"] * ik**p for p in range(1, 2 * order, 2))
        coeffs = np.zeros(2 * order)  # highest power first: v^(2 order - 1) ... v^0
        for p in range(1, 2 * order, 2):
            coeffs[2 * order - 1 - p] = w[f"w_x{p}"]
        coeffs[-1] = -gf
        roots = np.roots(np.trim_zeros(coeffs, "f"))
        real = roots[np.abs(roots.imag) < 1e-7].real
        assert real.size == 1
        out.append(real[0])
    return np.array(out)


def map_error(fit, order, i_visited, v_true):
    """max |v_learned(i) - v_true(i)| / max |v_true| over the visited current range."""
    i = np.linspace(i_visited.min(), i_visited.max(), 101)
    v = learned_voltage(fit.weights["Rx"], i, order)
    return np.max(np.abs(v - v_true(i))) / np.max(np.abs(v_true(i)))


def finite_difference_dynamics(
    component: ln.Lagrangian, q: dict, v: np.ndarray, a: np.ndarray, h: float = 1e-6
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``M``, the bias ``b`` and ``Q^ = M a + b`` at samples (rows of ``v``, ``a``; ``q`` by
    coordinate) from ``M`` and ``V`` evaluated numerically by ``Lagrangian.dynamics`` and
    their derivatives by central differences, in numpy (independent of the symbolic
    assembly and of CasADi's derivatives)."""
    at = component.dynamics(q)
    shifted = [
        (component.dynamics({**q, c: q[c] + h}), component.dynamics({**q, c: q[c] - h}))
        for c in component.coordinates
    ]
    dM = [(up["M"] - down["M"]) / (2 * h) for up, down in shifted]
    dV = np.stack([(up["V"] - down["V"]) / (2 * h) for up, down in shifted], axis=1)
    Mdot = sum(d * v[:, i, None, None] for i, d in enumerate(dM))
    dT = np.stack([0.5 * np.einsum("ki,kij,kj->k", v, d, v) for d in dM], axis=1)
    bias = np.einsum("kij,kj->ki", Mdot, v) - dT + dV
    return at["M"], bias, np.einsum("kij,kj->ki", at["M"], a) + bias


def same_equations(a: ac.Model, b: ac.Model) -> bool:
    """Whether two models have the same equations up to order: the components' (by their
    origin text) and the connection sets (as sets of connector names), and the same
    names. An array build numbers its variables and connectors in another order than a
    build one instance at a time."""

    def summary(model: ac.Model) -> tuple:
        eqs = model.flat.equations
        own = sorted(e.origin for e in eqs if e.component is not None)
        sets = {frozenset(e.source.connectors) for e in eqs if e.component is None}
        return own, sets, sorted(model.names), sorted(model.states)

    return summary(a) == summary(b)
