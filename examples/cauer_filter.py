"""Simulate the fifth-order Cauer low-pass filter (capacitor loops: index 2) and save a plot
and a CSV of its five state signals in ``out/``.

    python examples/cauer_filter.py [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import acausal as ac
from components import electrical as el
from solvers import simulate


def build(source: ac.Component | None = None, r1: ac.Component | None = None) -> ac.System:
    """The Cauer filter of Modelica.Electrical.Analog.Examples.CauerLowPassAnalog: by default
    a 1 V step at t = 1 s and R1 = 1 ohm; ``source`` (pins p, n) and ``r1`` (pins p, n,
    named R1) replace them, as the learning experiment does."""
    s = ac.System("cauer")
    V = source if source is not None else el.StepVoltage("V", V=1.0, start_time=1.0)
    R1 = r1 if r1 is not None else el.Resistor("R1", R=1.0)
    R2 = el.Resistor("R2", R=1.0)
    C1 = el.Capacitor("C1", C=1.072, v0=0.0)
    C2 = el.Capacitor("C2", C=1 / (1.704992**2 * 1.304))
    C3 = el.Capacitor("C3", C=1.682, v0=0.0)
    C4 = el.Capacitor("C4", C=1 / (1.179945**2 * 0.8586))
    C5 = el.Capacitor("C5", C=0.7262, v0=0.0)
    L1, L2 = el.Inductor("L1", L=1.304, i0=0.0), el.Inductor("L2", L=0.8586, i0=0.0)
    G = el.Ground("G")
    s.connect(V.p, R1.p)
    s.connect(R1.n, C1.p, C2.p, L1.p)
    s.connect(C2.n, L1.n, C3.p, C4.p, L2.p)
    s.connect(C4.n, L2.n, C5.p, R2.p)
    s.connect(V.n, C1.n, C3.n, C5.n, R2.n, G.p)
    return s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    system = build()
    model = ac.compile(system)
    print(model)  # the summary and the BLT
    res = simulate(model, t_end=60.0, dt=0.012, rtol=1e-8, atol=1e-10)
    signals = ["C1.v", "C3.v", "C5.v", "L1.i", "L2.i"]
    res.to_csv(out / "cauer.csv", signals)
    res.plot(*signals, path=out / "cauer.png")
    print(
        f"wrote {out / 'cauer.csv'} and {out / 'cauer.png'}; C5.v(60 s) = {res['C5.v'][-1]:.6f} V"
    )


if __name__ == "__main__":
    main()
