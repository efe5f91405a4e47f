"""The C code of an exported model: CasADi functions generated into ``fmu_model.c``, the
sizes and start values in ``fmu_config.h``, and beside them the hand-written runtime: the
instance's evaluation, start and events (``instance.c``) and the FMI 2.0 interface
(``fmi2.c``).

* ``fmu_init(p, t0) -> (x0, z0, r)``: the simulator's initialization
  (:func:`solvers.initialize.build_initializer`) at start time ``t0``, its Newton iterations
  by CasADi's code-generable ``fast_newton``; ``r = max_k |row_k|`` of the initialization
  rows at the result (0 for none), which the FMU checks.
* ``fmu_solve(x, zg, p, t) -> (z, r)``: ``z`` solving ``0 = g(x, z, p, t)`` by Newton from
  the guess ``zg`` (the last solution), ``r = max |g|`` there.
* ``fmu_point(x, z, p, t) -> (xdot, b, c, m)``: the rates ``f(x, z, p, t)``, the
  breakpoints ``b(p)``, the crossing functions ``c`` and one round of the state's updates
  at an event ``m`` (modes and re-initialized states);
* ``fmu_values(x, z, p, t) -> y``: the value slots (:mod:`.variables`), when read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import casadi as cs
import numpy as np

from acausal import Model
from acausal.errors import ModelError

from ..functions import algebraic, newton_solver
from ..initialize import build_initializer, z_start_values
from .step import step_function
from .variables import Variables

RUNTIME = ("fmi2.c", "instance.c", "cosim.c", "instance.h", "fmi2_types.h")  # beside this
SOURCES = ("fmi2.c", "instance.c", "cosim.c", "fmu_model.c")  # compiled
OPTIMIZED_SIZE = 300_000


class CompilerError(ModelError):
    """The system's C compiler is missing or rejected the generated code."""


def _largest(v: cs.SX | cs.MX) -> cs.SX | cs.MX:
    """``max_k |v_k|``, 0 for an empty ``v``."""
    return cs.mmax(cs.fabs(v)) if v.numel() else cs.densify(type(v)(1, 1))


def init_function(model: Model) -> cs.Function:
    """``fmu_init(p, t0) -> (x0, z0, r)`` (see the module docstring)."""
    init = build_initializer(model, 0.0, plugin="fast_newton")
    p, t0 = cs.MX.sym("p", model.p.numel()), cs.MX.sym("t0")
    x0, z0 = init.at_time(p, t0)
    r = _largest(init.rows_at()(x0, z0, p, t0))
    outs = [cs.densify(x0), cs.densify(z0), r]
    return cs.Function("fmu_init", [p, t0], outs, ["p", "t0"], ["x0", "z0", "r"])


def solve_function(model: Model) -> cs.Function:
    """``fmu_solve(x, zg, p, t) -> (z, r)`` (see the module docstring)."""
    dae = model.dae
    x, z = cs.SX(dae.x), cs.SX(dae.z)
    xm, zg = cs.MX.sym("x", x.numel()), cs.MX.sym("zg", z.numel())
    pm, tm = cs.MX.sym("p", model.p.numel()), cs.MX.sym("t")
    zm, r = zg, cs.densify(cs.MX(1, 1))
    if z.numel():
        g = algebraic(model)
        zm = newton_solver("fmu_z", g, "fast_newton")(zg, xm, pm, tm)
        r = _largest(g(zm, xm, pm, tm))
    return cs.Function("fmu_solve", [xm, zg, pm, tm], [zm, r], ["x", "zg", "p", "t"], ["z", "r"])


def point_function(model: Model) -> cs.Function:
    """``fmu_point(x, z, p, t) -> (xdot, b, c, m)`` (see the module docstring)."""
    dae = model.dae
    pieces = [dae.ode, model.breakpoints, dae.zero, dae.update]
    return _of_point(model, "fmu_point", pieces, ["xdot", "b", "c", "m"])


def values_function(model: Model, values: cs.SX) -> cs.Function:
    """``fmu_values(x, z, p, t) -> y``: the value slots, asked for apart from the rates (an
    integrator needs the rates many times between two reads of the values)."""
    return _of_point(model, "fmu_values", [values], ["y"])


def _of_point(model: Model, name: str, pieces: list, names: list[str]) -> cs.Function:
    # dense: the generated code writes only an output's nonzeros
    outs = [cs.densify(cs.SX(e)) for e in pieces]
    args = [cs.SX(model.dae.x), cs.SX(model.dae.z), model.p, model.t]
    return cs.Function(name, args, outs, ["x", "z", "p", "t"], names)


def _c_array(name: str, values: list[float] | np.ndarray, kind: str = "double") -> str:
    """A C array of ``kind`` (never empty: C has no arrays of length 0)."""
    cast = float if kind == "double" else int
    items = ", ".join(repr(cast(v)) for v in values) or "0"
    return f"static const {kind} {name}[] = {{{items}}};"


def config_header(model: Model, variables: Variables, guid: str, kind: str, t0: float) -> str:
    """``fmu_config.h``: sizes, identity, start values of the parameters and of Newton's
    unknowns (their start values at the default parameters), the mode each crossing
    function drives (-1: none) and the parameter holding each mode's start value."""
    dae = model.dae
    params = list(model.parameters)
    starts = [params.index(f"{q}_start") for q in model.modes]
    p = np.asarray(model.parameter_vector(), dtype=float)
    z_guess = z_start_values(model)(p).full().ravel() if dae.z.numel() else np.zeros(0)
    sizes = {
        "NX": dae.x.numel() - dae.modes,
        "NM": dae.modes,
        "NZ": dae.z.numel(),
        "NP": model.p.numel(),
        "NY": variables.n_slots,
        "NB": model.breakpoints.numel(),
        "NC": dae.zero.numel(),
    }
    lines = ["/* written by solvers.fmu.code for one exported model */"]
    lines += [f"#define FMU_{k} {v}" for k, v in sizes.items()]
    lines += [
        f"#define FMU_GUID {json.dumps(guid)}",
        f"#define FMU_MODEL_NAME {json.dumps(model.name)}",
        f"#define FMU_TYPE {0 if kind == 'model-exchange' else 1}",
        f"#define FMU_START_TIME {float(t0)!r}",
        _c_array("FMU_PARAMETER_STARTS", p),
        _c_array("FMU_Z_GUESS", z_guess),
        _c_array("FMU_RELATIONS", list(dae.relations), "int"),
        _c_array("FMU_MODE_STARTS", starts, "int"),
    ]
    return "\n".join(lines) + "\n"


def write_sources(model: Model, variables: Variables, folder: Path, kind: str) -> None:
    """The FMU's C files into ``folder``, but ``fmu_config.h`` (:func:`config_header`):
    the generated ones and the runtime's; the step function only for co-simulation (it is
    most of the code)."""
    gen = cs.CodeGenerator("fmu_model.c", {"with_header": True})
    gen.add(init_function(model))
    gen.add(solve_function(model))
    gen.add(point_function(model))
    gen.add(values_function(model, variables.values))
    if kind == "co-simulation":
        gen.add(step_function(model))
    gen.generate(f"{folder}{os.sep}")
    for name in RUNTIME:
        shutil.copyfile(Path(__file__).with_name(name), folder / name)


def compiler() -> str:
    """The C compiler: ``$CC``, else ``cc`` or ``gcc`` on the PATH."""
    for name in (os.environ.get("CC"), "cc", "gcc"):
        if name and shutil.which(name):
            return name
    raise CompilerError(
        "exporting an FMU needs a C compiler, and none was found ($CC, cc, gcc); install one "
        "(e.g. `apt install gcc`) or set CC"
    )


def build_library(folder: Path, target: Path) -> None:
    """Compile the sources in ``folder`` into the shared library ``target``: optimized
    (-O1) up to OPTIMIZED_SIZE bytes of generated code, beyond that not (-O0): the
    compiler's optimizer is superlinear in a function's length, in time and memory (an RC
    ladder of 1,000 stages, 2.4 MB: 75 s at -O1, 17 s at -O0; at 0.8 MB, -O1 ran out of
    memory on a loaded machine). -O1 makes the FMU 1.7x faster (the 100-stage ladder,
    co-simulation: 0.091 against 0.157 s; its export 2.9 against 1.1 s)."""
    size = (folder / "fmu_model.c").stat().st_size
    level = "-O1" if size <= OPTIMIZED_SIZE else "-O0"
    cmd = [compiler(), "-shared", "-fPIC", level, "-fvisibility=hidden", "-o", str(target)]
    cmd += [str(folder / s) for s in SOURCES] + ["-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    unsupported = re.findall(r"Code generation not supported for (\w+)", done.stderr)
    if unsupported:
        raise CompilerError(
            f"the model holds CasADi functions of kind {', '.join(sorted(set(unsupported)))}, "
            "which CasADi cannot write as C code; an FMU cannot hold them (replace them by "
            "expressions, or by functions CasADi can generate)"
        )
    if done.returncode:
        raise CompilerError(
            f"the C compiler failed on the exported model's code ({' '.join(cmd)}):\n"
            f"{done.stderr[-4000:]}"
        )
