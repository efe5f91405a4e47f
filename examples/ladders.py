"""The two benchmark ladders of issue 15, as systems (used by ``bench/`` and the tests).

* ``rc_ladder(n)``: a 1 V step source (``V``, at ``start_time``) feeding ``n`` stages, each
  a series resistor ``R_k`` then a shunt capacitor ``C_k`` to ground (``G``), ``R = C =
  1/n`` (a discretized diffusion line whose slowest time constant is about 0.4 s).
* ``chain(n)``: ``n`` masses ``M_k`` of ``1/n`` kg from rest at 0, springs ``S_k`` of
  ``100 n`` N/m (from the wall to ``M1``, then between neighbours), dampers ``D_k`` of ``n``
  N s/m from each mass to the wall, 1 N (``F``) on the last mass.

``arrays=True`` builds each kind of component with ``Component.array`` (one template
instance mapped over the others) and connects the arrays element by element, ``False``
one constructor call and one ``connect`` per instance; both give the same names and the
same results (the variables in another order).

    python examples/ladders.py 1000     # compile and simulate both, print the last outputs
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import acausal as ac  # noqa: E402
from components import electrical as el  # noqa: E402
from components import translational as tr  # noqa: E402


def _instances(cls: type, prefix: str, n: int, arrays: bool, **kw: float) -> list:
    if arrays:
        return cls.array(prefix, n, **kw)
    return [cls(f"{prefix}{k}", **kw) for k in range(1, n + 1)]


def rc_ladder(n: int, arrays: bool = True, start_time: float = 0.0) -> ac.System:
    """The RC ladder (see the module docstring)."""
    s = ac.System(f"rc_ladder_{n}")
    source, ground = el.StepVoltage("V", V=1.0, start_time=start_time), el.Ground("G")
    s.connect(source.n, ground.p)
    resistors = _instances(el.Resistor, "R", n, arrays, R=1.0 / n)
    capacitors = _instances(el.Capacitor, "C", n, arrays, C=1.0 / n, v0=0.0)
    if arrays:  # element by element: R_k.n - R_(k+1).p, R_k.n - C_k.p, every C_k.n - ground
        s.connect(source.p, resistors.p[0])
        s.connect(resistors.n[:-1], resistors.p[1:])
        s.connect(resistors.n, capacitors.p)
        s.connect(capacitors.n, ground.p)
        return s
    prev = source.p
    for r, c in zip(resistors, capacitors):
        s.connect(prev, r.p)
        s.connect(r.n, c.p)
        s.connect(c.n, ground.p)
        prev = r.n
    return s


def chain(n: int, arrays: bool = True) -> ac.System:
    """The mass-spring-damper chain (see the module docstring)."""
    s = ac.System(f"chain_{n}")
    wall, force = tr.Fixed("wall"), tr.ConstantForce("F", f_constant=1.0)
    masses = _instances(tr.Mass, "M", n, arrays, m=1.0 / n, s0=0.0, v0=0.0)
    springs = _instances(tr.Spring, "S", n, arrays, c=100.0 * n)
    dampers = _instances(tr.Damper, "D", n, arrays, d=float(n))
    if arrays:  # element by element, as the loop below
        s.connect(wall.flange, springs.flange_a[0])
        s.connect(masses.flange_b[:-1], springs.flange_a[1:])
        s.connect(springs.flange_b, masses.flange_a, dampers.flange_b)
        s.connect(dampers.flange_a, wall.flange)
        s.connect(masses.flange_b[-1], force.flange)
        return s
    prev = wall.flange
    for m, k, d in zip(masses, springs, dampers):
        s.connect(prev, k.flange_a)
        s.connect(k.flange_b, m.flange_a, d.flange_b)
        s.connect(d.flange_a, wall.flange)
        prev = m.flange_b
    s.connect(prev, force.flange)
    return s


if __name__ == "__main__":
    from solvers import simulate

    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    for build, out in ((rc_ladder, f"C{size}.v"), (chain, f"M{size}.s")):
        res = simulate(ac.compile(build(size)), t_end=1.0, dt=1e-3, rtol=1e-6, atol=1e-8)
        print(f"{build.__name__}({size}): {out}(1 s) = {res[out][-1]:.6g}")
