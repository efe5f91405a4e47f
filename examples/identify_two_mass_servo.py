"""The hybrid-structured-networks servo study (Section 5): a two-mass flexible servo whose
inertias, shaft stiffness and damping are identified together with two friction networks
from quantized encoder angles, by equation error on reconstructed derivatives.

    python examples/identify_two_mass_servo.py            # the full experiment (~2 min)
    python examples/identify_two_mass_servo.py --quick    # without the sweep (~30 s)

Steps (builders and data in ``examples/two_mass_servo.py``):

1. data: 2 s at 1 kHz of the true servo (stick/slip Coulomb plus viscous friction, IDAS at
   rtol 1e-8, the torque linear between samples), both angles quantized to 4.2e-4 rad; a
   second record (another torque seed) for validation;
2. reconstruction of ``q, q', q''`` of both angles by ``ln.reconstruct`` with the window
   from the spectrum (``fraction=1``) and the study's ``fraction=0.6``; windows, cutoffs
   and the mean absolute acceleration error relative to the truth's (the study: 5.8 %
   motor, 4.9 % load), and the windows that would minimize that error (the study's
   criterion; it reports 11/13 motor, 27 load);
3. the hybrid model: the servo with each friction an ``ln.Unknown`` whose law is a
   3-unit tanh network on that inertia's speed (the structured network's friction parts);
   ``m_m, m_l, k, b`` (started at 1.3, 0.7, 1.2, 0.8 times the truth) fitted together
   with the weights by ``ln.fit_equations``, on each reconstruction. First (not with
   ``--quick``) the study's choice of size (Section 5.3.2): 2, 3 and 5 units from
   ``--starts`` seeds each, the ranges of loss, curve errors and parameter errors;
4. the least-squares baseline: the same servo with ``F_c tanh(w / 0.01) + F_v w``
   friction, all eight parameters by ``ln.fit_equations``;
5. parameters +- standard errors against the truth and the study's Table 1; friction
   curves against the truth's (RMS over the visited speeds outside the band
   ``|w| < w_band``, relative to the truth's range there) and the white-box numbers read
   from them (Section 5.4.1: a line fitted to the curve on each side outside the band);
6. validation: each model simulated by IDAS on the second record's torque, RMS of both
   angles against the truth's;
7. ``out/servo_psd.png`` (spectra with the cutoffs), ``out/servo_friction.png`` (the
   curves), ``out/servo_validation.png`` (angles and their errors), ``out/servo_params.csv``.

Decisions:

* the truth's friction is the library's event-driven stick/slip Coulomb friction
  (``CoulombFriction`` plus a ``Damper`` per inertia): IDAS simulates it on the 1 kHz
  grid in a few seconds, so no smoothed truth is needed;
* ``w_band``: the largest true speed at which the 0.6-window reconstruction gives the
  speed the wrong sign (0.10 rad/s), the same band for every curve;
* 3 units: the loss falls by only about 2 % from 2 to 5 units (the study's criterion:
  more units are not worth it unless the error drops drastically); with 2 units one start
  in three ends in a worse minimum (loss +2 %, motor curve 5.5 %), and 5 units fit narrow
  spikes into the load's curve;
* both windows are reported, because neither wins everywhere: the study's 0.6 gives the
  better physical parameters (+0.6 % against +1.5 % for ``m_m``: the full window's
  two-pass acceleration is attenuated, which the fit reads as larger inertias), the full
  window the more reliable friction curves (the load's friction is a small part of the
  load's torque, its 0.6-window acceleration has a 27 % error, and the load network fits
  part of that correlated noise: 2.5 % to 12.5 % over three starts, 2.5 % to 3.5 % with
  the full window). Both meet the issue's targets with the first start;
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import learning as ln  # noqa: E402
from examples import two_mass_servo as ts  # noqa: E402
from examples.plotting import friction_curves, pyplot, spectra  # noqa: E402
from solvers import simulate  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "out"
FRACTIONS = (1.0, 0.6)
SIZES = (2, 3, 5)  # tanh units per friction network in the sweep


def rms(x: np.ndarray) -> float:
    """The root mean square of ``x``."""
    return float(np.sqrt(np.mean(np.square(x))))


def optimal_window(data: dict, side: str) -> tuple[int, float]:
    """The window (both passes equal) minimizing the mean absolute acceleration error
    against the truth, and that error (the study's criterion)."""
    best = (0, np.inf)
    for w in range(5, 42, 2):
        r = ln.reconstruct(data["t"], data[f"{side}.phi"], step=ts.STEP, window=w)
        err = ln.relative_mae(r.qdd, data[f"true {side}.a"])
        best = min(best, (w, err), key=lambda x: x[1])
    return best


def reconstructions(data: dict) -> tuple[dict, dict]:
    """The records and reconstructions for each fraction, with a printed report."""
    records, parts = {}, {}
    for fraction in FRACTIONS:
        records[fraction], parts[fraction] = ts.reconstructed(data, fraction)
        for side, r in parts[fraction].items():
            acc = ln.relative_mae(r.qdd, data[f"true {side}.a"])
            vel = ln.relative_mae(r.qd, data[f"true {side}.w"])
            print(
                f"  fraction {fraction}: {side:5s} cutoff {r.cutoff:5.1f} Hz, windows "
                f"{r.window}/{r.window2}: acceleration error {acc:6.1%}, speed {vel:5.1%}"
            )
    for side in ts.SIDES:
        w, err = optimal_window(data, side)
        print(f"  truth-optimal window {side:5s}: {w} ({err:.1%})")
    return records, parts


def network_curve(fit: ln.FitResult, net: ln.Unknown) -> Callable[[np.ndarray], np.ndarray]:
    """A learned friction network as a function of speed."""
    return lambda w: net.curve("f", {"der(x)": np.asarray(w)}, fit.params)


def baseline_curve(fit: ln.FitResult, side: str) -> Callable[[np.ndarray], np.ndarray]:
    """The baseline's fitted friction ``F_c tanh(w / w_s) + F_v w`` as a function of speed."""
    fc = fit.params[f"{side}_coulomb.tau_coulomb"]
    fv = fit.params[f"{side}_viscous.d"]
    return lambda w: fc * np.tanh(np.asarray(w) / ts.W_SMOOTH) + fv * np.asarray(w)


def sweep(rec: dict, data: dict, band: float, fraction: float, starts: int) -> None:
    """The study's choice of network size (Section 5.3.2): hybrid fits with ``SIZES``
    tanh units per friction from ``starts`` seeds each; per size the range over starts of
    the loss, the friction curve errors and the largest error of ``m_m, m_l, k, b``."""
    print(f"\nhybrid {fraction}: sizes x {starts} starts (ranges over the starts)")
    for hidden in SIZES:
        loss, worst, errors = [], [], {side: [] for side in ts.SIDES}
        for seed in range(starts):
            fit, nets = ts.fit_hybrid(rec, hidden=hidden, seed=seed)
            loss.append(fit.loss)
            worst.append(max(abs(fit.params[k] / v - 1) for k, v in ts.TRUTH.items()))
            for side in ts.SIDES:
                w = data[f"true {side}.w"]
                errors[side].append(
                    ts.curve_error(network_curve(fit, nets[side])(w), w, side, band)
                )
        text = ", ".join(f"{side} {min(e):.1%} .. {max(e):.1%}" for side, e in errors.items())
        print(
            f"  {hidden} units: loss {min(loss):.5f} .. {max(loss):.5f}, curve errors {text}, "
            f"largest parameter error {min(worst):.2%} .. {max(worst):.2%}"
        )


def params_table(name: str, fit: ln.FitResult, rows: list) -> None:
    """Print ``m_m, m_l, k, b`` +- standard errors against the truth and the study, and
    append them to the CSV ``rows``."""
    print(f"\n{name}: {fit.message} ({fit.wall_time:.1f} s)")
    for k, truth in ts.TRUTH.items():
        value, std = fit.params[k], fit.uncertainty[k]
        print(
            f"  {k:8s} {value:.5g} +- {std:.2g} (truth {truth:.5g}: {value / truth - 1:+.2%}; "
            f"study {ts.PAPER[k]:.5g}: {ts.PAPER[k] / truth - 1:+.2%})"
        )
        rows.append([name, k, value, std, truth, ts.PAPER[k]])


def friction_report(name: str, curves: dict, data: dict, band: float, rows: list) -> dict:
    """Curve errors outside the band and the white-box numbers of one model's friction
    ``curves`` (by side); returns the errors by side."""
    errors = {}
    for side in ts.SIDES:
        w = data[f"true {side}.w"]
        errors[side] = ts.curve_error(curves[side](w), w, side, band)
        box = ts.white_box(curves[side], w, band)
        print(
            f"  {name} {side:5s}: curve error {errors[side]:.1%} of range; Coulomb "
            f"{box['coulomb+']:.4f}/{box['coulomb-']:.4f}, viscous {box['viscous+']:.4f}/"
            f"{box['viscous-']:.4f} (+/-; truth {ts.COULOMB[side]}, {ts.VISCOUS[side]})"
        )
        for key, value in box.items():
            truth = ts.COULOMB[side] if key.startswith("coulomb") else ts.VISCOUS[side]
            rows.append([name, f"{side} {key}", value, "", truth, ""])
        rows.append([name, f"{side} curve error", errors[side], "", 0.0, ""])
    return errors


def validate(system: object, params: dict, check: dict) -> dict[str, np.ndarray]:
    """The angles of ``system`` (driven by the check record's torque) simulated by IDAS
    with ``params``."""
    res = simulate(system, grid=check["t"], rtol=1e-8, atol=1e-10, params=params)
    return {side: res[f"{side}.phi"] for side in ts.SIDES}


def plots(parts: dict, data: dict, curves: dict, band: float, check: dict, sims: dict) -> None:
    """``out/servo_psd.png``, ``out/servo_friction.png``, ``out/servo_validation.png``."""
    plt = pyplot()
    if plt is None:
        return
    titles = {
        side: f"{side}: windows {parts[1.0][side].window} (0.6: {parts[0.6][side].window})"
        for side in ts.SIDES
    }
    spectra(plt, parts[1.0], titles, OUT / "servo_psd.png")
    speeds = {side: data[f"true {side}.w"] for side in ts.SIDES}
    bands = dict.fromkeys(ts.SIDES, band)
    friction_curves(
        plt, ts.SIDES, speeds, ts.friction_torque, curves, bands, 0.5, OUT / "servo_friction.png"
    )
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    for col, side in enumerate(ts.SIDES):
        truth = check[f"true {side}.phi"]
        axes[0, col].plot(check["t"], truth, "k", lw=1.5, label="truth")
        for name, angles in sims.items():
            axes[0, col].plot(check["t"], angles[side], lw=1, label=name)
            axes[1, col].plot(check["t"], angles[side] - truth, lw=1, label=name)
        axes[0, col].set_title(f"validation record: {side} angle [rad]")
        axes[1, col].set_title("error [rad]")
        axes[1, col].set_xlabel("t [s]")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "servo_validation.png", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="no sweep over sizes and starts")
    parser.add_argument("--starts", type=int, default=3, help="network seeds per size in the sweep")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    tic = time.perf_counter()
    data, check = ts.measure(seed=0), ts.measure(seed=1)
    elapsed = time.perf_counter() - tic
    print(f"data: two records of {ts.DURATION:g} s at {ts.RATE:g} Hz ({elapsed:.0f} s)")
    for side in ts.SIDES:
        w = data[f"true {side}.w"]
        crossings = int(np.sum(np.diff(np.sign(w)) != 0))
        print(f"  {side:5s} speed {w.min():.2f} .. {w.max():.2f} rad/s, {crossings} reversals")
    print("\nreconstruction:")
    records, parts = reconstructions(data)
    band = ts.sign_band(data, records[0.6])
    print(f"w_band = {band:.3f} rad/s (the 0.6 reconstruction's speed has the wrong sign below)")
    rows: list = []
    curves, fits = {}, {}
    for fraction in FRACTIONS:
        if not args.quick:
            sweep(records[fraction], data, band, fraction, args.starts)
        name = f"hybrid {fraction}"
        fits[name], nets = ts.fit_hybrid(records[fraction])
        curves[name] = {side: network_curve(fits[name], nets[side]) for side in ts.SIDES}
        base = ts.fit_baseline(records[fraction])
        fits[f"baseline {fraction}"] = base
        curves[f"baseline {fraction}"] = {side: baseline_curve(base, side) for side in ts.SIDES}
    for name, fit in fits.items():
        params_table(name, fit, rows)
        if name.startswith("baseline"):
            for k in ts.BASELINE:
                print(f"  {k:26s} {fit.params[k]:.4f} +- {fit.uncertainty[k]:.2g}")
    print(f"\nfriction curves (outside |w| < {band:.3g} rad/s):")
    for name in fits:
        friction_report(name, curves[name], data, band, rows)
    print("\nvalidation (second record, IDAS): RMS of the angles against the truth")
    drive = (check["t"], check["tau"])
    sims = {}
    for name, fit in fits.items():
        if name.startswith("hybrid"):
            fraction = float(name.split()[1])
            speeds = {side: records[fraction][f"{side}.w"] for side in ts.SIDES}
            system, _ = ts.hybrid(speeds, drive=drive)
        else:
            system = ts.servo(
                ts.smooth_friction("motor", ts.W_SMOOTH),
                ts.smooth_friction("load", ts.W_SMOOTH),
                drive,
            )
        sims[name] = validate(system, fit.params, check)
        errors = {side: sims[name][side] - check[f"true {side}.phi"] for side in ts.SIDES}
        text = ", ".join(
            f"{side} {rms(e):.3g} rad ({rms(e) / np.std(check[f'true {side}.phi']):.1%} of "
            "the angle's std)"
            for side, e in errors.items()
        )
        print(f"  {name}: {text}")
    OUT.mkdir(exist_ok=True)
    with open(OUT / "servo_params.csv", "w", newline="") as fh:
        csv.writer(fh).writerows(
            [["model", "parameter", "value", "standard error", "truth", "study"], *rows]
        )
    plots(parts, data, curves, band, check, sims)
    print(
        "\nwrote out/servo_params.csv, out/servo_psd.png, out/servo_friction.png, "
        f"out/servo_validation.png ({time.perf_counter() - tic:.0f} s)"
    )


if __name__ == "__main__":
    main()
