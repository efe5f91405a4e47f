"""Learn a resistor nobody specified, inside the Cauer low-pass filter, from the load voltage.

The experiment of Matei et al. ("Learning constitutive equations of physical components with
predefined feasibility conditions"), with our numbers: the filter of
``../shared/validation`` (CauerLowPassAnalog) is driven by a 6 V sine that sends current both
ways through R1, whose truth is a linear 2 ohm resistor. Only the load voltage ``R2.v`` is
measured. R1 is replaced by an unknown component with (a) a separable odd polynomial law and
(b) the paper's one-hidden-layer tanh law, each constrained to stay feasible (and the
polynomial dissipative); both are fitted by least squares with IDAS forward sensitivities,
and again by direct collocation with IPOPT.
The same fits with the constraints off (same start, same budget) count the simulations that
fail. Writes ``out/learned_vi.png`` (learned voltage-current maps against the truth),
``out/learned_output.png`` and ``out/learned_params.csv``.

    python examples/learn_cauer.py [--out DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.optimize import brentq

import acausal as ac
import learning as ln
from components import electrical as el
from solvers import simulate

try:
    from examples.cauer_filter import build
except ImportError:  # run as a script: its own folder is on sys.path
    from cauer_filter import build

R_TRUE = 2.0
SAMPLES = np.linspace(0.0, 40.0, 201)
BUDGET = 40  # least-squares evaluations per fit


def cauer(r1: ac.Component) -> ac.System:
    """The Cauer filter of the validation set with ``r1`` in R1's place and a 6 V sine."""
    return build(source=el.SineVoltage("V", V=6.0, f=0.05), r1=r1)


def laws(constrained: bool) -> dict[str, ln.Law]:
    """The two candidate laws, with or without their feasibility constraints."""
    return {
        "polynomial": ln.Polynomial(order=3, constraint="dissipative" if constrained else None),
        "neural": ln.NeuralNet.paper_resistor(constraint="feasible" if constrained else None),
    }


def voltage_of(unknown: ln.Unknown, params: dict[str, float], currents: np.ndarray) -> np.ndarray:
    """The learned map: ``v`` solving ``g(i, v) = 0`` for each current (bracketing root)."""
    g = unknown.law.function()
    theta = [params[n] for n in unknown.parameter_names()]
    out = []
    for i in currents:
        f = lambda v, i=i: float(g([i, v], theta))  # noqa: E731
        out.append(brentq(f, -100.0, 100.0, xtol=1e-12))
    return np.array(out)


def learn(
    law: ln.Law, data: ln.Experiment | dict, budget: int | None, method: str = "least_squares"
) -> tuple[ln.FitResult, ln.Unknown]:
    unknown = ln.Unknown("R1", ac.Pin, law=law)
    fit = ln.fit(cauer(unknown), data, method=method, max_nfev=budget, progress=False)
    return fit, unknown


def errors(
    fit: ln.FitResult, unknown: ln.Unknown, currents: np.ndarray, data: ln.Experiment | dict
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """The learned map's largest error (relative to the truth's range) over ``currents``,
    the output's RMS error (relative to its range), the map and the simulated output."""
    v = voltage_of(unknown, fit.params, currents)
    map_err = np.max(np.abs(v - R_TRUE * currents)) / np.max(np.abs(R_TRUE * currents))
    y = simulate(fit.system, grid=SAMPLES, rtol=1e-10, atol=1e-12)["R2.v"]
    rms = np.sqrt(np.mean((y - data["R2.v"]) ** 2)) / np.ptp(data["R2.v"])
    return map_err, rms, v, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    truth = simulate(cauer(el.Resistor("R1", R=R_TRUE)), grid=SAMPLES, rtol=1e-10, atol=1e-12)
    data = ln.Experiment({"t": SAMPLES, "R2.v": truth["R2.v"]}, name="Cauer filter")
    currents = np.linspace(truth["R1.i"].min(), truth["R1.i"].max(), 101)
    print(
        f"data: R2.v at {len(SAMPLES)} times; R1's current visits "
        f"[{currents[0]:.3f}, {currents[-1]:.3f}] A"
    )

    rows, maps, outputs = [], {}, {}
    for name, law in laws(constrained=True).items():
        tic = time.perf_counter()
        fit, unknown = learn(law, data, BUDGET)
        map_err, rms, maps[name], outputs[name] = errors(fit, unknown, currents, data)
        print(
            f"\n{name} law, constraints on: loss {fit.loss:.3g} after {fit.n_simulations} "
            f"simulations ({fit.n_failed} failed), {time.perf_counter() - tic:.1f} s"
        )
        print(
            f"  v-i map error {map_err:.2e} of the truth's range; "
            f"output RMS error {rms:.2e} of its range"
        )
        for wname, value in unknown.weights(fit.params).items():
            print(f"  {wname:>6} = {value: .6g}")
            rows.append((name, wname, value))
        rows += [(name, "map_error", map_err), (name, "output_rms", rms)]

    print("\nthe same constrained laws by direct collocation (Radau IIA, IPOPT):")
    for name, law in laws(constrained=True).items():
        fit, unknown = learn(law, data, None, method="collocation")
        map_err, rms, _, _ = errors(fit, unknown, currents, data)
        print(
            f"  {name}: loss {fit.loss:.3g}, v-i map error {map_err:.2e}, output RMS error "
            f"{rms:.2e}, {fit.wall_time:.1f} s ({fit.message.split(';')[0]})"
        )
        rows += [(name, "collocation_map_error", map_err), (name, "collocation_s", fit.wall_time)]

    for name, law in laws(constrained=False).items():
        fit, _ = learn(law, data, BUDGET)
        print(
            f"\n{name} law, constraints off, same start and budget: {fit.n_simulations} "
            f"simulations, {fit.n_failed} failed, loss {fit.loss:.3g}"
        )
        rows.append((name, "failed_without_constraints", fit.n_failed))

    with open(out / "learned_params.csv", "w") as fh:
        fh.write("law,quantity,value\n")
        fh.writelines(f"{a},{b},{c:.10g}\n" for a, b, c in rows)
    _plot(out, currents, maps, truth.t, data["R2.v"], outputs)
    print(
        f"\nwrote {out / 'learned_vi.png'}, {out / 'learned_output.png'}, "
        f"{out / 'learned_params.csv'}"
    )


def _plot(out: Path, currents, maps, t, measured, outputs) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(currents, R_TRUE * currents, "k-", lw=3, alpha=0.3, label="truth: v = 2 i")
    for name, v in maps.items():
        ax.plot(currents, v, "--", label=f"learned ({name})")
    ax.set_xlabel("current i [A]")
    ax.set_ylabel("voltage v [V]")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "learned_vi.png", dpi=120)
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(t, measured, "k.", ms=3, label="measured R2.v")
    for name, y in outputs.items():
        ax.plot(t, y, label=f"fitted ({name})")
    ax.set_xlabel("time [s]")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "learned_output.png", dpi=120)


if __name__ == "__main__":
    main()
