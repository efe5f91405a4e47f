"""State selection on closed loops: the variant matrix of ``examples/references/mechanisms.py``.

For each slider-crank (MSL Engine1a) and four-bar variant (start values on the crank joint,
on the inertia, on the rocker joint - the piston pin of the slider-crank - or nowhere;
free with 10 rad/s or torque-driven from rest; crank at 0 or 90 degrees): the states the
compiler chose, its state-selection warnings, the compile time, and whether 6.5 s of
simulation reach 10 crank revolutions, with the loop closure recomputed from the joint
coordinates and the energy balance (energy gained minus the work of the drive and the
damper, relative to the largest energy), and where the run switched states (dynamic state
selection) and its time.

    python bench/state_selection.py                    # the table on stdout
    python bench/state_selection.py --json out.json --markdown out.md
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

from machine import machine

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from examples.references import mechanisms as mech  # noqa: E402 - the shared builders

T_END, DT, RTOL, ATOL = 6.5, 0.01, 1e-9, 1e-11


def run(variant: mech.Variant) -> dict:
    """States, warnings and the outcome of one variant."""
    import acausal as ac
    from solvers import simulate

    row: dict = {"variant": variant.name}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tic = time.perf_counter()
        model = ac.compile(variant.build())
        row["compile_s"] = time.perf_counter() - tic
    row["states"] = [q for q in model.states if not q.startswith("work.")]
    row["warnings"] = [
        str(w.message) for w in caught if issubclass(w.category, ac.StateSelectionWarning)
    ]
    try:
        tic = time.perf_counter()
        res = simulate(model, t_end=T_END, dt=DT, rtol=RTOL, atol=ATOL)
        row["run_s"] = time.perf_counter() - tic
    except ac.ModelError as exc:
        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        return row
    row["revolutions"] = mech.revolutions(res, variant)
    row["closure"] = mech.loop_closure(res, variant.mechanism)
    row["energy"] = mech.energy_balance(res, variant)
    row["switches"] = [(t, list(states)) for t, states in res.state_switches]
    return row


def markdown(rows: list[dict]) -> str:
    lines = [
        "| variant | states | warned | 10 revolutions | closure (m, rad) | energy balance "
        "| switches (t: new states) | run (s) |",
        "|---|---|---|---|---:|---:|---|---:|",
    ]
    for r in rows:
        ok = "revolutions" in r and r["revolutions"] >= 10
        outcome = f"yes ({r['revolutions']:.1f})" if ok else r.get("error", "no")[:90]
        closure = f"{r['closure']:.1e}" if "closure" in r else ""
        energy = f"{r['energy']:.1e}" if "energy" in r else ""
        warned = "; ".join(w.split(": ", 1)[1][:60] + "..." for w in r["warnings"])
        switches = "; ".join(f"{t:.3g}: {states[0]}" for t, states in r.get("switches", []))
        run_s = f"{r['run_s']:.2f}" if "run_s" in r else ""
        lines.append(
            f"| {r['variant']} | {', '.join(r['states'])} | {warned} | {outcome} | "
            f"{closure} | {energy} | {switches} | {run_s} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the rows to this JSON file")
    parser.add_argument("--markdown", help="write the table to this markdown file")
    args = parser.parse_args()
    rows = [run(v) for v in mech.variants()]
    table = markdown(rows)
    print(table)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": machine(), "rows": rows}, fh, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(table + "\n")


if __name__ == "__main__":
    main()
