"""``compile(system)``: the structural pipeline, and the inspectable :class:`Model` it returns.

flatten -> alias elimination -> balance / singularity check -> Pantelides + dummy
derivatives -> BLT (Tarjan) -> symbolic solution of linear blocks -> semi-explicit DAE.
"""

from __future__ import annotations

import gc
import time as _time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import casadi as cs
import numpy as np

from .errors import EquationError, unknown_name
from .flatten import FlatDAE, flatten
from .structure.alias import Reduced, Start, eliminate_aliases
from .structure.blt import Block, sort_blt
from .structure.causalize import SemiExplicit, causalize
from .structure.diagnose import describe_unknown
from .structure.graph import incidence
from .structure.index import Col, IndexReduced, reduce_index
from .symbols import Quantity, check_value, time
from .system import System


@dataclass
class Model:
    """A compiled model: states, algebraic unknowns, BLT blocks, and CasADi expressions."""

    flat: FlatDAE
    reduced: Reduced
    ir: IndexReduced
    blocks: list[Block]
    dae: SemiExplicit
    names: list[str]  # every variable and derivative reachable in a result
    outputs: cs.SX  # their values in terms of (x, z, p, t)
    breakpoints: cs.SX = field(default_factory=lambda: cs.SX(0, 1))  # in terms of p
    timings: dict[str, float] = field(default_factory=dict)

    # -- what a user inspects -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.flat.name

    @property
    def states(self) -> list[str]:
        """Continuous states, then discrete modes."""
        modes = [q.name for q in self.flat.discretes]
        return [self.ir.chains[vi][o].name for vi, o in self.ir.states] + modes

    @property
    def algebraic(self) -> list[str]:
        return [self.ir.chains[vi][o].name for vi, o in self.ir.algebraic]

    @property
    def index(self) -> int:
        """Differentiation index of the model before index reduction."""
        return self.ir.index

    @property
    def dummy_derivatives(self) -> list[str]:
        return sorted(self.ir.chains[vi][o].name for vi, o in self.ir.dummies)

    @property
    def parameters(self) -> dict[str, float]:
        """Parameter names and their values in the model (names computed once: a name
        walks the component hierarchy, which costs at thousands of parameters)."""
        names = self.__dict__.get("_parameter_names")
        if names is None:
            names = self._parameter_names = [p.name for p in self.flat.parameters]
        return {n: p.value for n, p in zip(names, self.flat.parameters)}

    @property
    def p(self) -> cs.SX:
        return cs.vertcat(*[p.sym for p in self.flat.parameters])

    @property
    def t(self) -> cs.SX:
        return time

    def start(self, col: Col) -> Start | None:
        return self.reduced.starts.get(self.ir.chains[col[0]][col[1]]) if col[1] == 0 else None

    def parameter_vector(self, params: dict[str, float] | None = None) -> list[float]:
        """Parameter values in model order, with ``params`` overriding by name."""
        values = self.parameters
        for key, val in (params or {}).items():
            if key not in values:
                raise unknown_name("parameter", key, values)
            owner, _, local = key.rpartition(".")
            values[key] = check_value(owner, local, val)
        return list(values.values())

    def breakpoint_times(self, p: Sequence[float], t0: float, t1: float) -> tuple[float, ...]:
        """Sorted times in ``(t0, t1)`` where the model's inputs are discontinuous (a
        comparison of ``time`` with an expression of the parameters, as in a step), for
        parameter values ``p``."""
        fun = getattr(self, "_breakpoint_function", None)
        if fun is None:
            fun = cs.Function("breakpoints", [self.p], [self.breakpoints])
            self._breakpoint_function = fun
        if not self.breakpoints.numel():
            return ()
        times = np.asarray(fun(p)).ravel()
        return tuple(sorted({float(t) for t in times if t0 < t < t1}))

    def blt(self) -> str:
        """The BLT table: each block with its equations and the unknowns it solves."""
        lines = [
            f"BLT of {self.name}: {len(self.blocks)} blocks, {len(self.ir.states)} states, "
            f"index {self.index}"
        ]
        if self.ir.states:
            lines.append("states: " + ", ".join(self.states))
        if self.ir.dummies:
            lines.append("dummy derivatives: " + ", ".join(self.dummy_derivatives))
        kinds = {
            "explicit": "solved explicitly",
            "linear": "linear loop, solved symbolically",
            "newton": "solved by Newton / IDAS",
        }
        for k, b in enumerate(self.blocks, 1):
            unknowns = ", ".join(self._describe(c) for c in b.unknowns)
            size = len(b.equations)
            lines.append(
                f"block {k} ({size} equation{'s' * (size > 1)}, {kinds[b.kind]}): solves {unknowns}"
            )
            lines += [f"    {self.ir.equations[r].origin}" for r in b.equations]
        return "\n".join(lines)

    def _describe(self, col: Col) -> str:
        q = self.ir.chains[col[0]][col[1]]
        return describe_unknown(self.reduced, q) if col[1] == 0 else q.name

    def __str__(self) -> str:
        return (
            f"Model {self.name}: {len(self.flat.variables)} variables, "
            f"{len(self.reduced.eliminated)} aliases eliminated, {len(self.ir.states)} states, "
            f"{len(self.ir.algebraic)} algebraic unknowns ({self.dae.z.numel()} solved by Newton),"
            f" index {self.index}, {len(self.blocks)} BLT blocks"
        )

    def check_name(self, name: str) -> int:
        """Position of ``name`` in :attr:`names`, or an error listing close matches."""
        idx = self._name_index.get(name)
        if idx is None:
            raise unknown_name("variable", name, self.names)
        return idx

    def __post_init__(self) -> None:
        self._name_index = {n: k for k, n in enumerate(self.names)}


def compile(system: System) -> Model:  # noqa: A001 - the public name fixed by the design
    """Run the structural pipeline on ``system``; see the module docstring.

    Python's cyclic garbage collector is paused meanwhile: the stages allocate millions of
    small objects that form no cycles, and its repeated full scans made large models
    (10,000 stages of an RC ladder) 15 % slower.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _compile(system)
    finally:
        if enabled:
            gc.enable()


def _compile(system: System) -> Model:
    timings = {}
    tic = _time.perf_counter()
    flat = flatten(system)
    timings["flatten"] = _time.perf_counter() - tic
    if flat.unconnected:
        names = ", ".join(c.name for c in flat.unconnected[:10])
        more = "" if len(flat.unconnected) <= 10 else f" and {len(flat.unconnected) - 10} more"
        warnings.warn(
            f"{system.name}: unconnected connectors {names}{more} get zero flow",
            stacklevel=3,
        )
    tic = _time.perf_counter()
    red = eliminate_aliases(flat, {p.name: p.value for p in flat.parameters})
    timings["aliases"] = _time.perf_counter() - tic
    tic = _time.perf_counter()
    ir = reduce_index(red)
    timings["index"] = _time.perf_counter() - tic
    tic = _time.perf_counter()
    blocks = sort_blt(ir)
    timings["blt"] = _time.perf_counter() - tic
    tic = _time.perf_counter()
    dae = causalize(ir, blocks)
    names, outputs = _outputs(flat, red, ir, dae)
    if flat.discretes:
        dae = _with_events(red, ir, dae, names, outputs)
    timings["causalize"] = _time.perf_counter() - tic
    breakpoints = _breakpoints(red)
    return Model(flat, red, ir, blocks, dae, names, outputs, breakpoints, timings)


def _with_events(
    red: Reduced, ir: IndexReduced, dae: SemiExplicit, names: list[str], outputs: cs.SX
) -> SemiExplicit:
    """Append the discrete modes to the states (zero rate), with the crossing functions and
    one round of updates of the whole state (re-initialized states, new modes) in terms of
    (x, z, p, t). A re-initialized variable is mapped through alias elimination onto its
    representative, which must be a state."""
    flat = red.flat
    rules: dict[Quantity, cs.SX] = {}
    for ev in flat.events:
        for q, rule in ev.updates.items():
            sign, root, const = red.eliminated.get(q, (1.0, q, 0.0))
            if root is None:
                raise EquationError(f"an event re-initializes {q.name}, which is a constant")
            if root in rules:
                raise EquationError(f"two events update {q.name}; merge them")
            rules[root] = (rule - const) / sign
    states = [ir.chains[vi][o] for vi, o in ir.states]
    for q in rules:
        if q.kind == "variable" and q not in states:
            raise EquationError(
                f"an event re-initializes {q.name}, but index reduction made it algebraic; "
                f"re-initialize one of the states: {', '.join(s.name for s in states)}"
            )
    crossings = [c for ev in flat.events for c in ev.crossings]
    updates = [rules.get(q, q.sym) for q in states + flat.discretes]
    position = {n: k for k, n in enumerate(names)}
    known = [q for q in flat.variables] + [q for ch in ir.chains for q in ch[1:]]
    old = cs.vertcat(*[q.sym for q in known])
    new = cs.vertcat(*[outputs[position[q.name]] for q in known])
    zero, update = cs.substitute([cs.vertcat(*crossings), cs.vertcat(*updates)], [old], [new])
    modes = cs.vertcat(*[q.sym for q in flat.discretes])
    return SemiExplicit(
        cs.vertcat(dae.x, modes),
        dae.z,
        cs.vertcat(dae.ode, cs.DM.zeros(modes.numel())),
        dae.alg,
        dae.values,
        dae.alg_blocks,
        modes.numel(),
        zero,
        update,
    )


def _breakpoints(red: Reduced) -> cs.SX:
    """Expressions ``b(p)`` of comparisons ``time <= b`` (or ``<``, either side) in the
    equations that depend on time: the times where inputs jump or kink."""
    if not red.equations:
        return cs.SX(0, 1)
    res = [e.residual for e in red.equations]
    rows = np.nonzero(np.diff(incidence(res, [time]).indptr))[0]
    found: list[cs.SX] = []
    for r in rows:
        stack, budget = [res[r]], 10_000
        while stack and budget:
            e = stack.pop()
            budget -= 1
            if e.is_symbolic() or e.is_constant():
                continue
            if e.op() in (cs.OP_LE, cs.OP_LT):
                a, b = e.dep(0), e.dep(1)
                for side, other in ((a, b), (b, a)):
                    if (
                        side.is_symbolic()
                        and side.name() == "time"
                        and not cs.depends_on(other, time)
                    ):
                        found.append(other)
            stack += [e.dep(k) for k in range(e.n_dep())]
    return cs.vertcat(*found) if found else cs.SX(0, 1)


def _outputs(flat: FlatDAE, red: Reduced, ir: IndexReduced, dae: SemiExplicit):
    """Names and expressions in (x, z, p, t) of every variable and derivative.

    An eliminated alias is ``sign * representative + constant``; the vector of all outputs is
    assembled with three vector operations rather than one CasADi call per name.
    """
    names: list[str] = []
    base: list[cs.SX] = []
    signs: list[float] = []
    offsets: list[float] = []
    seen: set[int] = set()

    def add(name: str, q: Quantity) -> None:
        sign, root, const = red.eliminated.get(q, (1.0, q, 0.0))
        names.append(name)
        base.append(root.sym if root is not None else cs.SX(0))
        signs.append(sign)
        offsets.append(const)

    for q in flat.variables:
        if q.uid not in seen:
            seen.add(q.uid)
            add(q.name, q)
    for name, q in flat.names.items():  # exposed connectors of hierarchical components
        if q.kind == "variable" and name != q.name:
            add(name, q)
    for chain in ir.chains:
        for q in chain[1:]:
            add(q.name, q)
    for q in flat.discretes:
        add(q.name, q)
    out = cs.vertcat(*base) * cs.DM(signs) + cs.DM(offsets)
    alg = cs.vertcat(*[ir.sym(c) for c in ir.algebraic])
    if alg.numel():
        out = cs.substitute(out, alg, dae.values)
    return names, out
