"""A 2-D thermal plate: an ``n x m`` grid of heat capacitors, each coupled by thermal
conductors to its four neighbours, the top edge held hot and the three others cold
(issue 35's 2-D reference model), with its transient and steady state in closed form.

Cell ``(i, j)`` (row ``i = 1 .. n`` from the hot edge, column ``j = 1 .. m``) is the
capacitor ``C<(i - 1) m + j>`` (row-major), of capacity ``C``, temperature ``T_ij``,
starting at ``T_cold``. Neighbours in a row are joined by ``Gx<(i - 1)(m - 1) + j>``
(``(i, j)`` to ``(i, j + 1)``), in a column by ``Gy<(i - 1) m + j>`` (``(i, j)`` to
``(i + 1, j)``), all of conductance ``G``. Around the grid lies a fixed-temperature border
one conductance ``G`` away: ``Ghot<j>`` joins cell ``(1, j)`` to the source ``hot``
(``T_hot``); ``Gcold<k>`` join the bottom row (``k = 1 .. m``), then the left column and
the right column (``m + i``, ``m + n + i``) to the source ``cold`` (``T_cold``). With
``T_0j = T_hot`` and ``T_(n+1)j = T_i0 = T_i(m+1) = T_cold`` the border values,

    C dT_ij/dt = G (T_(i-1)j + T_(i+1)j + T_i(j-1) + T_i(j+1) - 4 T_ij),

that is ``C dT/dt = -G (L_n (x) I + I (x) L_m) T + G b`` with ``L_k = tridiag(-1, 2, -1)``
(the 1-D second difference, ``k x k``) and ``b`` the border values next to each cell.

**Closed form.** ``L_k``'s eigenvectors are ``s_p(i) = sin(p pi i / (k + 1))`` with
eigenvalues ``2 - 2 cos(p pi / (k + 1))`` and ``|s_p|^2 = (k + 1) / 2``; the 2-D operator's
are the products ``s_p(i) s_q(j)`` with eigenvalue ``lam_p + mu_q``. Writing
``T = T_cold + u``, ``u`` starts at 0 and is driven by ``dT = T_hot - T_cold`` on the top
row only (``b - T_cold L 1 = dT e_1 (x) 1``), so each mode relaxes on its own:

    u_ij(t) = sum_pq a_pq (1 - exp(-G (lam_p + mu_q) t / C)) / (lam_p + mu_q) s_p(i) s_q(j),
    a_pq = 4 dT / ((n + 1)(m + 1)) s_p(1) sum_j s_q(j),

the steady state being ``t -> inf`` (the discrete Laplace problem's sine-series solution).
``sum_j s_q(j)`` is ``cot(q pi / (2 (m + 1)))`` for odd ``q``, 0 for even. The slowest
mode, ``p = q = 1``, has the time constant ``tau = C / (G (lam_1 + mu_1))``.

    python examples/references/thermal_plate.py 30      # 30 x 30: simulate, compare
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import acausal as ac  # noqa: E402
from components import thermal as th  # noqa: E402

T_HOT, T_COLD = 373.15, 293.15


def _instances(cls: type, prefix: str, count: int, arrays: bool, **kw: float) -> list:
    if arrays:
        return cls.array(prefix, count, **kw)
    return [cls(f"{prefix}{k}", **kw) for k in range(1, count + 1)]


def plate(
    n: int,
    m: int | None = None,
    C: float = 1.0,
    G: float = 1.0,
    T_hot: float = T_HOT,
    T_cold: float = T_COLD,
    arrays: bool = True,
) -> ac.System:
    """The ``n x m`` plate (``m = n`` by default; see the module docstring).
    ``arrays=True`` builds each kind of component by ``Component.array`` and connects
    the arrays element by element (the grid's indices), ``False`` by one constructor
    call per instance and one ``connect`` per cell: the same names and the same results
    (the variables in another order)."""
    m = n if m is None else m
    s = ac.System(f"plate_{n}x{m}")
    caps = _instances(th.HeatCapacitor, "C", n * m, arrays, C=C, T0=T_cold)
    gx = _instances(th.ThermalConductor, "Gx", n * (m - 1), arrays, G=G) if m > 1 else []
    gy = _instances(th.ThermalConductor, "Gy", (n - 1) * m, arrays, G=G) if n > 1 else []
    ghot = _instances(th.ThermalConductor, "Ghot", m, arrays, G=G)
    gcold = _instances(th.ThermalConductor, "Gcold", m + 2 * n, arrays, G=G)
    hot, cold = th.FixedTemperature("hot", T=T_hot), th.FixedTemperature("cold", T=T_cold)
    cell = np.arange(n * m).reshape(n, m)  # the capacitors' indices, row-major
    border = np.concatenate([cell[-1], cell[:, 0], cell[:, -1]])  # bottom, left, right
    if arrays:  # the grid's index arithmetic, one connect per kind of neighbour
        pairs = [(gx, cell[:, :-1], cell[:, 1:]), (gy, cell[:-1], cell[1:])]
        for g, a, b in pairs:
            if len(g):
                s.connect(caps.port[a.ravel()], g.port_a)
                s.connect(caps.port[b.ravel()], g.port_b)
        s.connect(caps.port[cell[0]], ghot.port_a)
        s.connect(caps.port[border], gcold.port_a)
        s.connect(hot.port, ghot.port_b)
        s.connect(cold.port, gcold.port_b)
        return s
    node = [[c.port] for c in caps]  # the connectors meeting at each cell, row-major
    for i in range(n):
        for j in range(m):
            if j < m - 1:
                g = gx[i * (m - 1) + j]
                node[i * m + j].append(g.port_a)
                node[i * m + j + 1].append(g.port_b)
            if i < n - 1:
                g = gy[i * m + j]
                node[i * m + j].append(g.port_a)
                node[(i + 1) * m + j].append(g.port_b)
    for g, k in zip(ghot + gcold, np.concatenate([cell[0], border]).tolist()):
        node[k].append(g.port_a)
    for members in node:
        s.connect(*members)
    s.connect(hot.port, *[g.port_b for g in ghot])
    s.connect(cold.port, *[g.port_b for g in gcold])
    return s


def cell_names(n: int, m: int | None = None) -> list[str]:
    """The capacitors' temperature names ``C<k>.T``, row-major (reshape to ``(n, m)``)."""
    m = n if m is None else m
    return [f"C{k}.T" for k in range(1, n * m + 1)]


def _sines(k: int) -> tuple[np.ndarray, np.ndarray]:
    """``S[p - 1, i - 1] = sin(p pi i / (k + 1))`` and the eigenvalues ``2 - 2 cos(p pi /
    (k + 1))`` of ``L_k``, ``p, i = 1 .. k``."""
    p = np.arange(1, k + 1)
    return np.sin(np.outer(p, p) * np.pi / (k + 1)), 2.0 - 2.0 * np.cos(p * np.pi / (k + 1))


def temperatures(
    t: float,
    n: int,
    m: int | None = None,
    C: float = 1.0,
    G: float = 1.0,
    T_hot: float = T_HOT,
    T_cold: float = T_COLD,
) -> np.ndarray:
    """``T_ij(t)`` by the double sine series (module docstring), shape ``(n, m)``;
    ``t = np.inf`` gives the steady state."""
    m = n if m is None else m
    sn, lam = _sines(n)
    sm, mu = _sines(m)
    rate = lam[:, None] + mu[None, :]
    a = 4.0 * (T_hot - T_cold) / ((n + 1) * (m + 1)) * np.outer(sn[:, 0], sm.sum(axis=1))
    weight = a * -np.expm1(-G * rate * t / C) / rate if np.isfinite(t) else a / rate
    return T_cold + sn.T @ weight @ sm


def steady_state(n: int, m: int | None = None, **kw: float) -> np.ndarray:
    """The steady state ``T_ij`` in closed form, shape ``(n, m)`` (``temperatures`` at
    ``t = inf``; the conductances and capacities drop out)."""
    return temperatures(np.inf, n, m, **kw)


def slowest_time_constant(n: int, m: int | None = None, C: float = 1.0, G: float = 1.0) -> float:
    """``tau = C / (G (lam_1 + mu_1))``, the slowest mode's time constant."""
    m = n if m is None else m
    return C / (G * (4.0 - 2.0 * np.cos(np.pi / (n + 1)) - 2.0 * np.cos(np.pi / (m + 1))))


if __name__ == "__main__":
    from solvers import simulate

    size = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    t_end = 25 * slowest_time_constant(size)
    res = simulate(ac.compile(plate(size)), t_end=t_end, dt=t_end / 10, rtol=1e-8, atol=1e-8)
    final = np.array([res[name][-1] for name in cell_names(size)]).reshape(size, size)
    err = np.max(np.abs(final - steady_state(size)))
    print(f"plate {size} x {size}: max |T(25 tau) - closed form| = {err:.2e} K")
