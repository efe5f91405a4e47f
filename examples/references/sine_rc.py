"""A sine source driving a resistor into a 1 F capacitor, and two user-written cubic
resistors: the circuit of the output-error fits, where the resistor's current changes sign.

* :class:`CubicResistor`: ``v = a i + b i^3`` on a one-port (explicit in ``i``: the
  compiler solves for ``v``);
* :class:`ImplicitCubicResistor`: ``v = R i + a i^3`` with ``i`` unknown, solved by Newton
  (a Newton unknown of the compiled model);
* :func:`rc`: ``V sin(2 pi f t)`` -> resistor -> ``C`` (1 F) -> ground;
* :func:`measure`: the capacitor voltage of that circuit from IDAS at rtol 1e-10 on the
  grid :data:`T`, and the currents the resistor visited.
"""

from __future__ import annotations

import numpy as np

import acausal as ac
from components import electrical as el
from solvers import simulate

T = np.linspace(0.0, 6.0, 61)
TRUTH_TOL = dict(rtol=1e-10, atol=1e-12)


class CubicResistor(el.OnePort):
    """A user component: ``v = a i + b i^3``."""

    def __init__(self, name: str, a: float = 1.0, b: float = 0.5) -> None:
        super().__init__(name)
        a, b = self.parameter("a", a), self.parameter("b", b)
        self.equations(self.v == a * self.i + b * self.i**3)


class ImplicitCubicResistor(ac.Component):
    """``v = R i + a i^3``: solved for ``i`` by Newton (a Newton unknown of the model)."""

    def __init__(self, name: str, R: float = 1.0, a: float = 0.5) -> None:
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        self.n = self.connector("n", ac.Pin)
        R, a = self.parameter("R", R), self.parameter("a", a)
        v, i = self.variable("v"), self.variable("i")
        self.equations(
            v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            i == self.p.i,
            v == R * i + a * i**3,
        )


def rc(resistor: ac.Component, V: float = 3.0, f: float = 0.3, name: str = "rc") -> ac.System:
    """Sine source -> resistor -> 1 F capacitor: the resistor's current changes sign."""
    s = ac.System(name)
    src, C, G = el.SineVoltage("V", V=V, f=f), el.Capacitor("C", C=1.0, v0=0.0), el.Ground("G")
    s.connect(src.p, resistor.p)
    s.connect(resistor.n, C.p)
    s.connect(C.n, src.n, G.p)
    return s


def measure(
    resistor: ac.Component, grid: np.ndarray = T, **kw: float
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Data of the truth circuit: only the capacitor voltage, plus the visited currents."""
    res = simulate(rc(resistor, **kw), grid=grid, **TRUTH_TOL)
    return {"t": grid, "C.v": res["C.v"]}, res[f"{resistor.name}.i"]
