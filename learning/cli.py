"""The ``acausal`` command: simulate a model file, print its BLT, or check its structure.

It lives in ``learning``, the top of the package layers, because ``check --feasibility``
runs the learning package's feasibility report; nothing imports it.

    acausal simulate model.py --t-end 10 --out result.csv [--dt 0.01] [--param R1.R=2]
                              [--vars C1.v,R1.i] [--plot result.png] [--rtol 1e-6] [--atol 1e-8]
    acausal blt model.py
    acausal check model.py [--feasibility | --units]
    acausal export model.py --fmu model.fmu [--param R1.R=2] [--start-time 0]

A model file is a Python file that defines a module-level ``system`` (an ``acausal.System``)
or a function ``build()`` returning one. A mistake in the model or the options is printed
as one message on stderr, without a traceback, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
import types
import warnings
from collections.abc import Mapping
from pathlib import Path

import acausal as ac
from acausal.errors import ModelError
from solvers import Result, export_fmu, simulate

from .feasibility import check_feasibility


class CommandError(Exception):
    """A problem with the command line's inputs: the model file or an option."""


# -- loading a model file ------------------------------------------------------------------
def load_system(path: str | Path) -> ac.System:
    """Run the Python file ``path`` and return its ``system`` (or what its ``build()`` returns)."""
    file = Path(path)
    if not file.is_file():
        what = "is a folder, not a file" if file.is_dir() else "does not exist"
        raise CommandError(
            f"{path} {what}; give the path of a Python file that defines `system` "
            "or `build()` returning an acausal.System"
        )
    stem = re.sub(r"\W", "_", file.stem)
    module = types.ModuleType(f"acausal_model_{stem}")
    module.__file__ = str(file)
    folder = str(file.resolve().parent)
    sys.path.insert(0, folder)  # like `python model.py`: the file's folder is importable
    sys.modules[module.__name__] = module  # dataclasses and pickle look the module up here
    try:  # compiled from source each time: no stale bytecode, no __pycache__ beside the file
        exec(compile(file.read_bytes(), str(file), "exec"), module.__dict__)
        system = getattr(module, "system", None)
        if system is None:
            build = getattr(module, "build", None)
            if not callable(build):
                raise CommandError(
                    f"{path} defines neither `system` nor a function `build()`; add "
                    "`system = ac.System(...)` at module level or `def build(): ... return system`"
                )
            system = build()
    except (ModelError, CommandError):
        raise
    except Exception as exc:  # a mistake in the user's own Python code
        raise CommandError(_in_user_code(file, exc)) from None
    finally:
        if sys.path and sys.path[0] == folder:
            del sys.path[0]
    if not isinstance(system, ac.System):
        source = "`system`" if hasattr(module, "system") else "`build()` returned"
        raise CommandError(
            f"{path}: {source} is {type(system).__name__} {system!r:.60}, not an acausal.System"
        )
    return system


def _in_user_code(file: Path, exc: Exception) -> str:
    """``model.py, line 7: NameError: ...`` pointing at the last line of the user's file."""
    line = exc.lineno if isinstance(exc, SyntaxError) else None
    target = file.resolve()
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == target:
            line = frame.lineno
    where = f"{file}, line {line}" if line else str(file)
    text = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    return f"{where}: {type(exc).__name__}: {text} (while loading the model)"


# -- the subcommands -----------------------------------------------------------------------
def _parse_params(items: list[str]) -> dict[str, float]:
    params: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CommandError(f"--param {item!r}: write it as NAME=VALUE, e.g. R1.R=2.5")
        try:
            params[name.strip()] = float(value)
        except ValueError:
            raise CommandError(
                f"--param {item!r}: {value!r} is not a number; e.g. --param R1.R=2.5"
            ) from None
    return params


def _parse_vars(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip() and n.strip() != "time"]
    if not names:
        raise CommandError(f"--vars {text!r} names no variable; e.g. --vars C1.v,R1.i")
    return names


def cmd_simulate(args: argparse.Namespace) -> int:
    """Simulate, write the CSV (and the plot) and print one line about what was written."""
    params = _parse_params(args.param)
    names = _parse_vars(args.vars)
    model = ac.compile(load_system(args.file))
    for name in names or []:  # fail before a long simulation, not after it
        if name not in model.defaults:
            model.check_name(name)
    res = simulate(
        model, t_end=args.t_end, dt=args.dt, rtol=args.rtol, atol=args.atol, params=params
    )
    try:
        res.to_csv(args.out, names)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    written = [str(args.out)]
    if args.plot:
        _plot(res, names, args.plot)
        written.append(str(args.plot))
    ncols = len(names) if names is not None else len(res.names)
    print(
        f"simulated {model.name} from t = {res.t[0]:g} to {res.t[-1]:g} "
        f"({len(res.t)} output times, {ncols} variables); wrote {' and '.join(written)}"
    )
    return 0


def _plot(res: Result, names: list[str] | None, path: str) -> None:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise CommandError("--plot needs matplotlib: pip install matplotlib") from None
    try:
        axes = res.plot(*(names or []), path=path)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from None
    plt.close(axes[0].figure)


def cmd_export(args: argparse.Namespace) -> int:
    """Export the model as an FMU and print where it went."""
    params = _parse_params(args.param)
    path = export_fmu(
        load_system(args.file), args.fmu, params=params or None, start_time=args.start_time
    )
    print(f"wrote {path} (FMI 2.0 model exchange, linux64)")
    return 0


def cmd_blt(args: argparse.Namespace) -> int:
    """Print the BLT blocks of the compiled model."""
    print(ac.compile(load_system(args.file)).blt())
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Print a structural report; a structural error propagates as a ModelError (exit 1).
    With ``--feasibility``, the learning package's feasibility report (exit 1 if it finds
    a problem); with ``--units``, the unit-consistency report (exit 1 if units disagree);
    with both, both reports (exit 1 if either finds a problem)."""
    if args.units or args.feasibility:
        codes = [main_units(args.file)] if args.units else []
        if args.feasibility:
            codes.append(main_check(args.file, t_end=args.t_end, dt=args.dt))
        return max(codes)
    system = load_system(args.file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unconnected connectors: listed below
        model = ac.compile(system)
    print(check_report(model))
    return 0


def main_check(
    path: str | Path,
    *,
    t_end: float | None = None,
    dt: float | None = None,
    params: Mapping[str, float] | None = None,
    small_capacitor: float | None = None,
) -> int:
    """``acausal check --feasibility FILE.py``: load the file's ``system`` (or ``build()``),
    print the feasibility report; returns the exit code (0 feasible, 1 problems found)."""
    report = check_feasibility(
        load_system(path), t_end=t_end, dt=dt, params=params, small_capacitor=small_capacitor
    )
    print(report)
    return 0 if report.ok else 1


def main_units(path: str | Path) -> int:
    """``acausal check --units FILE.py``: print :func:`acausal.check_units`'s report on the
    file's system; returns the exit code (0 consistent, 1 units disagree)."""
    report = ac.check_units(load_system(path))
    print(report)
    return 0 if report.ok else 1


def check_report(model: ac.Model) -> str:
    """Balance, continuous states and discrete modes (counted apart, as in
    :meth:`acausal.Model.summary`), index, dummy derivatives, unconnected connectors, loops
    and blocks."""
    flat, red = model.flat, model.reduced
    loops = [b for b in model.blocks if len(b.equations) > 1]
    newton = [b for b in model.blocks if b.kind == "newton"]
    unconnected = list(flat.unconnected)

    def listing(items: list[str]) -> str:
        return f"({len(items)}): {', '.join(items)}" if items else "(0): none"

    largest = f" (largest: {max(len(b.equations) for b in loops)} equations)" if loops else ""
    lines = [
        f"check of {model.name}: structurally sound",
        f"  balance: {len(red.equations)} equations for {len(red.unknowns)} unknowns after "
        f"eliminating {len(red.eliminated)} aliases ({len(flat.equations)} equations, "
        f"{len(flat.variables)} variables before)",
        f"  parameters: {len(flat.parameters)}",
        f"  continuous states {listing(model.states)}",
        f"  discrete modes {listing(model.modes)}",
        f"  index: {model.index}",
        f"  dummy derivatives {listing(model.dummy_derivatives)}",
        f"  unconnected connectors {listing(unconnected)}"
        + (" - each gets zero flow" if unconnected else ""),
        f"  BLT blocks: {len(model.blocks)}",
        f"  algebraic loops: {len(loops)}{largest}",
        f"  Newton blocks: {len(newton)} ({model.dae.z.numel()} unknowns solved by Newton / IDAS)",
    ]
    return "\n".join(lines)


# -- entry point -----------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acausal", description="Simulate and inspect acausal models defined in Python files."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    file_help = "Python file defining `system` or `build()`"

    sim = sub.add_parser("simulate", help="simulate and write a CSV (and a plot)")
    sim.add_argument("file", metavar="FILE.py", help=file_help)
    sim.add_argument("--t-end", type=float, required=True, help="end time")
    sim.add_argument("--dt", type=float, default=None, help="output step (default t_end/500)")
    sim.add_argument("--rtol", type=float, default=1e-6, help="relative tolerance (1e-6)")
    sim.add_argument("--atol", type=float, default=1e-8, help="absolute tolerance (1e-8)")
    sim.add_argument(
        "--param", action="extend", nargs="+", default=[], metavar="NAME=VALUE",
        help="override a parameter, e.g. --param R1.R=2 C1.C=1e-3",
    )  # fmt: skip
    sim.add_argument("--out", required=True, metavar="result.csv", help="CSV file to write")
    sim.add_argument("--plot", default=None, metavar="plot.png", help="also save a plot")
    sim.add_argument(
        "--vars", default=None, metavar="a,b,...", help="columns to write (default: all)"
    )
    sim.set_defaults(run=cmd_simulate)

    blt = sub.add_parser("blt", help="print the BLT blocks of the compiled model")
    blt.add_argument("file", metavar="FILE.py", help=file_help)
    blt.set_defaults(run=cmd_blt)

    export = sub.add_parser("export", help="export the model as an FMI 2.0 FMU")
    export.add_argument("file", metavar="FILE.py", help=file_help)
    export.add_argument("--fmu", required=True, metavar="model.fmu", help="FMU file to write")
    export.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="parameter start value"
    )
    export.add_argument(
        "--start-time", type=float, default=0.0, help="the default experiment's start (0)"
    )
    export.set_defaults(run=cmd_export)

    check = sub.add_parser("check", help="report balance, states, index and blocks")
    check.add_argument("file", metavar="FILE.py", help=file_help)
    check.add_argument(
        "--feasibility",
        action="store_true",
        help="check each component's constitutive equations (Proposition 3.1), the BLT "
        "blocks along a simulated trajectory and dissipativity",
    )
    check.add_argument(
        "--units",
        action="store_true",
        help="check that each component's equations, start values and connections agree "
        "with the declared units",
    )
    check.add_argument(
        "--t-end", type=float, default=None, help="trajectory length (default: the model's)"
    )
    check.add_argument(
        "--dt", type=float, default=None, help="trajectory output step (default: the model's)"
    )
    check.set_defaults(run=cmd_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 model or input error, 2 usage)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse has already printed
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = args.run(args)
        except ModelError as exc:
            code, error = 1, f"error ({type(exc).__name__}): {exc}"
        except CommandError as exc:
            code, error = 1, f"error: {exc}"
    for w in caught:  # the framework's own warnings, not library noise
        if issubclass(w.category, UserWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    if error is not None:
        print(error, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
