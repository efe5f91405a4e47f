"""Two small models of the learning tests and benchmarks, and the oscillator's data.

* :func:`oscillator`: ``m s'' = F - c s - d s'`` (mass ``m``, spring ``k``, damper ``d`` to
  a fixed point), pushed by a sampled or symbolic force, or by the parameter
  ``F.f_constant``, which a rollout drives from the data's column ``"F"`` (:data:`INPUTS`);
* :func:`diode_circuit`: a source through ``R1`` into a node with a capacitor to ground and
  ``R2`` in series with an exponential diode to ground (a nonlinear algebraic block);
* :func:`oscillator_trajectories`: the oscillator forced by ``2 sin(w t)`` from IDAS at
  rtol 1e-12, sampled with its states.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import acausal as ac
from components import electrical as el
from components import translational as tr
from solvers import simulate

C_TRUE, D_TRUE = 40.0, 0.5
INPUTS = {"F.f_constant": "F"}


def oscillator(
    force: object = None, c: float = C_TRUE, d: float = D_TRUE, s0: float = 0.1
) -> ac.System:
    """The mass-spring-damper; ``force`` a signal (to make data) or None (the parameter
    ``F.f_constant``, an input of a rollout)."""
    s = ac.System("oscillator")
    m = tr.Mass("m", m=1.0, s0=s0, v0=0.0)
    k, damper, fixed = tr.Spring("k", c=c), tr.Damper("d", d=d), tr.Fixed("fx")
    push = tr.ConstantForce("F", f_constant=0.0) if force is None else tr.Force("F", f=force)
    s.connect(push.flange, m.flange_a)
    s.connect(m.flange_b, k.flange_b, damper.flange_b)
    s.connect(k.flange_a, damper.flange_a, fixed.flange)
    return s


def oscillator_trajectories(
    freqs: Sequence[float] = (3.0, 5.0, 8.0), t_end: float = 2.0, dt: float = 2e-3
) -> list[dict[str, np.ndarray]]:
    """One record per frequency ``w``: the force ``2 sin(w t)``, start ``s0 = 0.05 j`` for
    the ``j``-th, columns ``t``, ``m.s``, ``m.v``, ``F``."""
    out = []
    for j, w in enumerate(freqs):
        res = simulate(
            oscillator(2.0 * ac.sin(w * ac.time), s0=0.05 * j),
            t_end=t_end,
            dt=dt,
            rtol=1e-12,
            atol=1e-14,
        )
        out.append({"t": res.t, "m.s": res["m.s"], "m.v": res["m.v"], "F": 2 * np.sin(w * res.t)})
    return out


def diode_circuit(R1: float = 10.0, R2: float = 5.0, Is: float = 1e-6) -> ac.System:
    """V -> R1 -> node with C to ground and R2 + exponential diode to ground: R2 and the
    diode are a nonlinear algebraic block (Newton) inside a rollout."""
    s = ac.System("diode_rc")
    v, g = el.ConstantVoltage("V", V=1.0), el.Ground("G")
    r1, r2 = el.Resistor("R1", R=R1), el.Resistor("R2", R=R2)
    c, d = el.Capacitor("C", C=0.01, v0=0.0), el.Diode("D", Is=Is)
    s.connect(v.p, r1.p)
    s.connect(r1.n, c.p, r2.p)
    s.connect(r2.n, d.p)
    s.connect(v.n, c.n, d.n, g.p)
    return s
