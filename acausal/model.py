"""``compile(system)``: the structural pipeline, and the inspectable :class:`Model` it returns.

flatten -> alias elimination -> balance / singularity check -> Pantelides + dummy
derivatives -> BLT (Tarjan) -> symbolic solution of linear blocks -> semi-explicit DAE.
"""

from __future__ import annotations

import time as _time
import warnings
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from itertools import chain, repeat
from operator import itemgetter

import casadi as cs
import numpy as np
import scipy.sparse as sp

from .errors import EquationError, OptionError, unknown_name
from .flat import FlatDAE, display_name, displayed
from .flatten import flatten
from .gc_pause import paused_gc
from .pickling import PicklesWithCasadi
from .structure.alias import Reduced, eliminate_aliases
from .structure.blt import Block, sort_blt
from .structure.causalize import SemiExplicit, causalize, parameter_symbols
from .structure.diagnose import describe_unknown
from .structure.dummies import Choice
from .structure.graph import incidence
from .structure.index import Col, IndexReduced, reduce_index, state_counts
from .structure.naming import aliases_of_declared
from .structure.starts import FixedStart, InitialStarts, Start
from .symbols import check_value, column_entries, split_derivative, vstack
from .system import System
from .table import Table
from .units import derivative_unit


@dataclass(frozen=True, eq=False)
class Model(PicklesWithCasadi):
    """A compiled model: every stage's form, the semi-explicit DAE and its named outputs.

    A value: it holds the parameters' default values (copied from the components when
    compiled; :meth:`with_parameters` gives a model with others), reads nothing of the
    user's objects, compares equal to a model compiled from an equal system, and pickles
    (see :meth:`__reduce__`), so it can be sent to a worker process.
    """

    flat: FlatDAE
    reduced: Reduced
    ir: IndexReduced
    dae: SemiExplicit
    names: tuple[str, ...]  # every variable and derivative reachable in a result
    outputs: cs.SX  # their values in terms of (x, z, p, t)
    defaults: Table  # parameter name -> value
    breakpoints: cs.SX = field(default_factory=lambda: cs.SX(0, 1))  # in terms of p
    timings: Table = field(default_factory=Table)

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", parameter_symbols(self.flat, list(self.defaults)))

    @cached_property
    def _index_of(self) -> dict[str, int]:
        """Each name's place in :attr:`names` (made when a name is first looked up)."""
        return _positions(self.names, self.flat.variables, self.reduced.position)

    # -- what a user inspects -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.flat.name

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The BLT blocks in solution order, with their kinds."""
        return self.dae.blocks

    @cached_property
    def t(self) -> cs.SX:
        """The model's time symbol."""
        return self.flat.t

    @property
    def states(self) -> list[str]:
        """The continuous states (the discrete modes are :attr:`modes`), each named by the
        variable the user declared where a state is a derivative one equals: a revolute
        joint's ``w`` (``w == der(phi)``), not ``der(phi)`` (:mod:`.structure.naming`)."""
        return list(self._states)

    @cached_property
    def _states(self) -> tuple[str, ...]:
        """:attr:`states`, labelled once."""
        return tuple(map(self.ir.label, self.ir.states))

    def names_of(self, name: str) -> tuple[str, ...]:
        """``name``, then the other name of the same number where the state labels swapped
        two (:mod:`.structure.naming`): a state reported as ``joint.w`` is the column
        ``der(joint.phi)``, its rate ``der(joint.w)`` is ``der(der(joint.phi))``. The names
        measured data may hold it under."""
        labels = self.ir.labels
        other = labels.get(name) or next((k for k, v in labels.items() if v == name), None)
        return (name,) if other is None or other == name else (name, other)

    def measured_name(self, data: Mapping[str, object], name: str) -> str | None:
        """The key of ``data`` that holds variable ``name`` (:meth:`names_of`), or None."""
        return next((n for n in self.names_of(name) if n in data), None)

    @property
    def modes(self) -> list[str]:
        """The discrete modes (of friction, switches, relations), integrated at zero rate
        after the continuous states but not counted as states."""
        return list(self._modes)

    @cached_property
    def _modes(self) -> tuple[str, ...]:
        """:attr:`modes`, read once."""
        return tuple(self.flat.discretes)

    @property
    def n_states(self) -> int:
        """How many continuous states: ``len(states)``."""
        return len(self._states)

    @property
    def n_modes(self) -> int:
        """How many discrete modes: ``len(modes)``."""
        return len(self._modes)

    @property
    def x_names(self) -> list[str]:
        """The names of the entries of ``dae.x``: the continuous states, then the modes."""
        return self.states + self.modes

    @property
    def algebraic(self) -> list[str]:
        return [self.ir.label(c) for c in self.ir.algebraic]

    @property
    def index(self) -> int:
        """Differentiation index of the model before index reduction."""
        return self.ir.index

    @property
    def dummy_derivatives(self) -> list[str]:
        return sorted(self.ir.label(c) for c in self.ir.dummies)

    @cached_property
    def ranges(self) -> tuple[tuple[str, float, float, str], ...]:
        """Where the components say their equations hold (``Component.valid_ranges``):
        ``(name, low, high, what)``, the variable ``name`` meant to stay in ``[low, high]``,
        ``what`` naming the range (``"training range"``). Nothing enforces them: a failed
        simulation reports the variables outside theirs where it stopped."""
        return self.flat.ranges

    @cached_property
    def alternatives(self) -> tuple[tuple[Choice, ...], ...]:
        """The other dummy-derivative choices (each a :class:`Choice` per block, as
        :attr:`IndexReduced.choices`) a run may switch to where the model's own choice of
        states gets singular (dynamic state selection; :meth:`with_states` gives the model
        of the ``k``-th); empty where none may be needed."""
        return self.ir.alternatives

    @property
    def full(self) -> Model:
        """The full pipeline's model of this one's system, whose stage forms (``flat``,
        ``reduced``, ``ir``) and DAE are in one set of symbols: this model itself, or for
        a :class:`~acausal.stencil.StencilModel` the one compiled when first asked for,
        with the same states, parameters and names in the same orders (so a function of
        its forms takes this model's vectors)."""
        return self

    def parameter_symbol(self, name: str) -> cs.SX:
        """The symbol of parameter ``name`` in :attr:`p` (an error listing close names
        where it is none)."""
        if name not in self.defaults:
            raise unknown_name("parameter", name, self.defaults)
        return self.flat.sym(name)

    def with_states(self, k: int) -> Model:
        """This model with the ``k``-th alternative choice of states (``ir.alternatives``,
        for dynamic state selection): the same equations and parameters, other states."""
        return _finish(self.ir.with_choice(self.ir.alternatives[k]), self.defaults, {})

    @property
    def state_ties(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Where the state choice was a tie: (the kept coordinate, the equally good ones)."""
        return self.ir.state_ties

    @property
    def state_notes(self) -> tuple[str, ...]:
        """What the state selection said (a choice singular at the start values, say)."""
        return self.ir.notes

    @property
    def parameters(self) -> dict[str, float]:
        """Parameter names and their default values (a copy)."""
        return dict(self.defaults)

    def start(self, col: Col) -> Start | None:
        """The start value of the unknown column ``col`` (a variable's, ``(v, 0)``; None for
        a derivative or a variable without one), after alias elimination."""
        return self.reduced.starts.get(self.ir.name(col)) if col[1] == 0 else None

    @cached_property
    def initial_starts(self) -> InitialStarts:
        """Every start value the initialization reads (made once, when first asked for), as
        an :class:`~.structure.starts.InitialStarts`: with ``dae.x = (states, modes)``, the
        start of each state, of each mode and of each Newton unknown ``dae.z[k]``, in those
        orders (its guess, fixed or not; None: none); and the fixed starts ``y = y_start``
        (rows of the initialization problem) on states and on algebraic unknowns, each
        group in the order declared. A fixed start is on a state where its variable is the
        first name of the chain of a state's column ``(v, 0)``; one on a name that is none
        of alias elimination's unknowns (``reduced.unknowns``) is not among them."""
        ir = self.ir
        state_at = {ir.chains[v][0]: k for k, (v, o) in enumerate(ir.states) if o == 0}
        fixed = [(q, start) for q, start in self.reduced.starts.items() if start.fixed]
        on_states = tuple(
            FixedStart(ir.states[state_at[q]], state_at[q], start)
            for q, start in fixed
            if q in state_at
        )
        return InitialStarts(
            tuple(map(self.start, ir.states)),
            tuple(Start(self.flat.symbols[q].start, True, q) for q in self.flat.discretes),
            tuple(map(self.start, self.z_columns())),
            on_states,
            self._fixed_on_algebraic([(q, s) for q, s in fixed if q not in state_at]),
        )

    def _fixed_on_algebraic(self, fixed: list[tuple[str, Start]]) -> tuple[FixedStart, ...]:
        """Of the fixed starts ``(q, start)`` not on states, those on an unknown ``q``, each
        on its column ``(v, 0)`` (``v``: ``q``'s place among the unknowns) at its entry of
        ``(dae.x, dae.values)``: ``len(dae.x) + k`` for ``ir.algebraic[k]``, ``k`` for the
        state ``ir.states[k]``."""
        if not fixed:
            return ()
        unknowns = self.reduced.unknowns
        vindex = dict(zip(unknowns, range(len(unknowns))))
        at = {c: k for k, c in enumerate(self.ir.states)}
        nx = self.dae.x.numel()
        at.update((c, nx + k) for k, c in enumerate(self.ir.algebraic))
        cols = [((vindex[q], 0), start) for q, start in fixed if q in vindex]
        return tuple(FixedStart(col, at[col], start) for col, start in cols)

    def z_columns(self) -> list[Col]:
        """The unknown column of each Newton unknown ``dae.z[k]`` (whose value, among the
        values of all algebraic columns, is ``z_k`` itself: looked for among those that
        depend on ``z``)."""
        z = cs.SX(self.dae.z)
        if not z.numel():
            return []
        on_z = np.flatnonzero(np.diff(incidence(self.dae.values, z).indptr))
        candidates = [self.ir.algebraic[r] for r in on_z]
        by_symbol = {self.ir.sym(c).name(): c for c in candidates}
        return [by_symbol[zk.name()] for zk in cs.vertsplit(z)]

    @cached_property
    def units(self) -> Table:
        """The unit of every name a result has (:attr:`names`: variables, aliases,
        derivatives, modes) and of every parameter, as declared (``""`` where none was):
        ``{"C1.v": "V", "der(C1.v)": "V/s", "C1.C": "F", ...}``; the k-th derivative of a
        quantity in ``u`` is in ``u/s^k`` (:meth:`unit`)."""
        return Table({n: self.unit(n) for n in (*self.names, *self.defaults)})

    def unit(self, name: str) -> str:
        """The declared unit of a variable, alias, derivative or parameter of this model
        by name (``""`` where none was declared or the name is not a quantity's)."""
        base, order = split_derivative(name)
        symbol = self.flat.symbols.get(self.flat.aliases.get(base, base))
        return "" if symbol is None else derivative_unit(symbol.unit, order)

    def _with_unit(self, text: str, name: str) -> str:
        """An unknown's ``text`` (``C1.v``, ``R1.i (= C1.i)``) with ``name``'s unit after
        its first name (``C1.v [V]``, ``R1.i [A] (= C1.i)``) where one is declared."""
        unit = self.unit(name)
        head, sep, aliases = text.partition(" (= ")
        return f"{head} [{unit}]{sep}{aliases}" if unit else text

    def parameter_vector(self, params: Mapping[str, float] | None = None) -> list[float]:
        """Parameter values in model order, with ``params`` overriding by name."""
        if params is not None and not isinstance(params, Mapping):
            raise OptionError(
                f"params must be a mapping of parameter names to values, e.g. "
                f"{{'R1.R': 2.0}}; got {type(params).__name__}"
            )
        values = dict(self.defaults)
        for key, val in (params or {}).items():
            if key not in values:
                raise unknown_name("parameter", key, values)
            owner, _, local = key.rpartition(".")
            values[key] = check_value(owner, local, val)
        return list(values.values())

    def with_parameters(self, params: Mapping[str, float]) -> Model:
        """This model with other default parameter values (nothing recompiles)."""
        values = dict(zip(self.defaults, self.parameter_vector(params)))
        return replace(self, defaults=Table(values))

    def breakpoint_times(self, p: Sequence[float], t0: float, t1: float) -> tuple[float, ...]:
        """Sorted times in ``(t0, t1)`` where the model's inputs are discontinuous (a
        comparison of ``time`` with an expression of the parameters, as in a step), for
        parameter values ``p``."""
        if not self.breakpoints.numel():
            return ()
        fun = cs.Function("breakpoints", [self.p], [self.breakpoints])
        times = np.asarray(fun(p)).ravel()
        return tuple(sorted({float(t) for t in times if t0 < t < t1}))

    def blt(self) -> str:
        """The BLT table: each block with its equations and the unknowns it solves, each
        with its unit (``C1.v [V]``) where one is declared."""
        lines = [
            f"BLT of {self.name}: {len(self.blocks)} blocks, "
            f"{state_counts(self.n_states, self.n_modes)}, index {self.index}"
        ]
        if self.n_states:
            shown = [self._with_unit(n, n) for n in self.states]
            lines.append("continuous states: " + ", ".join(shown))
        if self.n_modes:
            lines.append("discrete modes: " + ", ".join(self.modes))
        if self.ir.dummies:
            lines.append("dummy derivatives: " + ", ".join(self.dummy_derivatives))
        kinds = {
            "explicit": "solved explicitly",
            "linear": "linear loop, solved symbolically",
            "torn": "linear loop, torn: Newton / IDAS on its tear unknowns",
            "torn-solved": "linear loop, torn: its tear unknowns solved symbolically",
            "newton": "solved by Newton / IDAS",
        }
        for k, b in enumerate(self.blocks, 1):
            shown = [self._with_unit(self.describe(c), self.ir.name(c)) for c in b.unknowns]
            unknowns = ", ".join(shown)
            size = len(b.equations)
            lines.append(
                f"block {k} ({size} equation{'s' * (size > 1)}, {kinds[b.kind]}): solves {unknowns}"
            )
            lines += [f"    {self.ir.equations[r].origin}" for r in b.equations]
        return "\n".join(lines)

    def display(self, expr: cs.SX | float) -> str:
        """An expression of this model's symbols as text, in dotted names."""
        return self.flat.display(expr)

    def symbol_name(self, sym: cs.SX) -> str:
        """The dotted name of one of this model's symbols (``C1.v``, ``der(C1.v)``)."""
        return display_name(sym.name(), self.flat.keys)

    def describe(self, col: Col) -> str:
        """An unknown column by the name reported (:meth:`IndexReduced.label`), with the
        aliases merged into it."""
        return describe_unknown(self.reduced, self.ir.label(col))

    def summary(self) -> str:
        return (
            f"Model {self.name}: {len(self.flat.variables)} variables, "
            f"{len(self.reduced.eliminated)} aliases eliminated, "
            f"{state_counts(self.n_states, self.n_modes)}, "
            f"{len(self.ir.algebraic)} algebraic unknowns ({self.dae.z.numel()} solved by Newton),"
            f" index {self.index}, {len(self.blocks)} BLT blocks"
        )

    def __str__(self) -> str:
        return self.summary() + "\n" + self.blt()

    def __repr__(self) -> str:
        return f"<{self.summary()}>"

    def dump(self) -> str:
        """Every stage's form, as a compiler's dump: flat, aliases, index reduction, BLT,
        the semi-explicit DAE and the parameter defaults."""
        parts = [self.flat.text(values=False), str(self.reduced), str(self.ir), self.blt()]
        parts.append(str(self.dae))
        outputs, breakpoints = displayed([self.outputs, self.breakpoints], self.flat.keys)
        parts.append("\n".join(f"{n} = {o}" for n, o in zip(self.names, cs.vertsplit(outputs))))
        parts.append(f"breakpoints = {breakpoints}")
        parts.append("\n".join(f"default {n} = {v:.17g}" for n, v in self.defaults.items()))
        return "\n\n".join(parts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model):
            return NotImplemented
        return self is other or self.dump() == other.dump()

    def check_name(self, name: str) -> int:
        """Position of ``name`` in :attr:`names`, or an error listing close matches."""
        idx = self._index_of.get(name) if isinstance(name, str) else None
        if idx is None:
            if not isinstance(name, str):
                raise OptionError(
                    f"variables are looked up by name (e.g. 'C1.v'), got {type(name).__name__} "
                    f"{name!r}"
                )
            raise unknown_name("variable", name, self.names)
        return idx

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._index_of

    def __getstate__(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)  # rebuilds the derived lookups


def _positions(
    names: Sequence[str], variables: Sequence[str], position: Mapping[str, int]
) -> dict[str, int]:
    """``dict(zip(names, range(len(names))))`` (each name's place; the last of a name given
    twice): where ``names`` begin with the ``variables``, their part copied from
    ``position`` (alias elimination's ``{variable: its place}``, the same dict; a copy
    costs a fourth of making it)."""
    n = len(variables)
    if len(position) != n or tuple(names[:n]) != tuple(variables):
        return dict(zip(names, range(len(names))))
    out = dict(position)
    out.update(zip(names[n:], range(n, len(names))))
    return out


def check_system(system: object, caller: str) -> None:
    """An error naming ``caller`` where ``system`` is no :class:`~acausal.System`."""
    if not isinstance(system, System):
        raise OptionError(f"{caller}() takes an ac.System, got {type(system).__name__}")


def compile_full(system: System) -> Model:
    """The full pipeline on ``system`` (flatten, then :func:`assemble`), warning of
    unconnected connectors: what :func:`acausal.compile` runs where the stencil compile
    (:mod:`acausal.stencil`) does not apply.

    Python's cyclic garbage collector is paused meanwhile (and restored): the stages
    allocate millions of small objects that form no cycles, and its repeated full scans
    made large models (10,000 stages of an RC ladder) 15 % slower."""
    check_system(system, "compile_full")
    with paused_gc():
        timings = {}
        tic = _time.perf_counter()
        flat = flatten(system)
        timings["flatten"] = _time.perf_counter() - tic
        if flat.unconnected:
            names = ", ".join(flat.unconnected[:10])
            more = "" if len(flat.unconnected) <= 10 else f" and {len(flat.unconnected) - 10} more"
            warnings.warn(
                f"{system.name}: unconnected connectors {names}{more} get zero flow",
                stacklevel=3,
            )
        return assemble(flat, timings)


def assemble(flat: FlatDAE, timings: dict[str, float] | None = None) -> Model:
    """The stages after flattening: aliases, index reduction, BLT, causalization, outputs."""
    timings = dict(timings or {})
    tic = _time.perf_counter()
    red = eliminate_aliases(flat)
    timings["aliases"] = _time.perf_counter() - tic
    tic = _time.perf_counter()
    ir = reduce_index(red)
    timings["index"] = _time.perf_counter() - tic
    return _finish(ir, Table(flat.parameter_values), timings)


def _finish(ir: IndexReduced, defaults: Table, timings: dict[str, float]) -> Model:
    """BLT, causalization and outputs of the index-reduced form ``ir``."""
    red = ir.reduced
    tic = _time.perf_counter()
    blocks = sort_blt(ir)
    timings["blt"] = _time.perf_counter() - tic
    tic = _time.perf_counter()
    dae = causalize(ir, blocks)
    names, outputs = _outputs(ir, dae)
    if red.flat.discretes or red.flat.events:
        dae = _with_events(ir, dae, names, outputs)
    timings["causalize"] = _time.perf_counter() - tic
    breakpoints = _breakpoints(red)
    return Model(
        red.flat, red, ir, dae, tuple(names), outputs, defaults, breakpoints, Table(timings)
    )


def _with_events(
    ir: IndexReduced, dae: SemiExplicit, names: list[str], outputs: cs.SX
) -> SemiExplicit:
    """Append the discrete modes to the states (zero rate), with the crossing functions and
    one round of updates of the whole state (re-initialized states, new modes) in terms of
    (x, z, p, t); a relation's mode keeps its value in the updates (the solver sets it from
    its crossing's side). A re-initialized variable is mapped through alias elimination onto its
    representative, which must be a state or name one (a speed ``w`` reported as the state
    ``der(phi)`` it equals: :meth:`IndexReduced.label`)."""
    red = ir.reduced
    flat = red.flat
    column = {ir.label(c): ir.name(c) for c in ir.states}  # a state by its reported name
    rules: dict[str, cs.SX] = {}
    for ev in flat.events:
        for q, rule in ev.updates:
            sign, root, const = red.eliminated.get(q, (1.0, q, 0.0))
            if root is None:
                raise EquationError(f"an event re-initializes {q}, which is a constant")
            root = column.get(root, root)
            if root in rules:
                raise EquationError(f"two events update {q}; merge them")
            rules[root] = (rule - const) / sign
    states = list(column.values())
    for q in rules:
        if q not in states and q not in flat.discretes:
            raise EquationError(
                f"an event re-initializes {q}, but index reduction made it algebraic; "
                f"re-initialize one of the states: {', '.join(column)}"
            )
    crossings = [c for ev in flat.events for c in ev.crossings]
    mode_of = {q: k for k, q in enumerate(flat.discretes)}
    relations = [mode_of.get(ev.relation, -1) for ev in flat.events for _ in ev.crossings]
    updates = [rules.get(q, ir.symbols[q].sym) for q in states + list(flat.discretes)]
    position = {n: k for k, n in enumerate(names)}
    known = list(flat.variables) + [q for ch in ir.chains for q in ch[1:]]
    old = ir.symbols.take(known)
    new = cs.vertcat(*[outputs[position[q]] for q in known])
    zero, update = cs.substitute([cs.vertcat(*crossings), cs.vertcat(*updates)], [old], [new])
    modes = cs.vertcat(*[flat.sym(q) for q in flat.discretes])
    return replace(
        dae,
        x=cs.vertcat(dae.x, modes),
        ode=cs.vertcat(dae.ode, cs.DM.zeros(modes.numel())),
        modes=modes.numel(),
        zero=zero,
        update=update,
        relations=tuple(relations),
    )


def _breakpoints(red: Reduced) -> cs.SX:
    """Expressions ``b(p)`` of comparisons ``time <= b`` (or ``<``, either side) in the
    equations that depend on time: the times where inputs jump or kink."""
    if not red.equations:
        return cs.SX(0, 1)
    t = red.flat.t
    rows = np.nonzero(np.diff(_time_incidence(red).indptr))[0]
    found: list[cs.SX] = []
    for r in rows:
        stack, budget = [red.residuals[int(r)]], 10_000
        while stack and budget:
            e = stack.pop()
            budget -= 1
            if e.is_symbolic() or e.is_constant():
                continue
            if e.op() in (cs.OP_LE, cs.OP_LT):
                a, b = e.dep(0), e.dep(1)
                for side, other in ((a, b), (b, a)):
                    if side.is_symbolic() and side.name() == "time" and not cs.depends_on(other, t):
                        found.append(other)
            stack += [e.dep(k) for k in range(e.n_dep())]
    return cs.vertcat(*found) if found else cs.SX(0, 1)


def _time_incidence(red: Reduced) -> sp.csr_matrix:
    """Which equations of ``red`` hold time, as a one-column incidence: the column alias
    elimination kept (``None`` is time's name there), else a sparsity pass."""
    if red.pattern is not None and None in red.pattern_position:
        return red.pattern[:, [red.pattern_position[None]]].tocsr()
    return incidence(red.residuals, [red.flat.t])


def _outputs(ir: IndexReduced, dae: SemiExplicit) -> tuple[list[str], cs.SX]:
    """Names and expressions in (x, z, p, t) of every variable and derivative.

    An eliminated alias is ``sign * representative + offset``; a representative is a
    column of the index-reduced form, whose value is ``dae.x`` (a state) or ``dae.values``
    (an algebraic column), or a discrete mode itself; an offset is a number or one of alias
    elimination's vector of expressions of parameters (a flange at ``s - L/2``). So the
    vector of all outputs is the columns' values picked (a zero for a constant), then the
    entries of sign -1 negated, the numeric and the symbolic offsets added, each one
    whole-vector CasADi call on the entries it changes, not a call or a scalar per name.
    """
    red = ir.reduced
    flat = red.flat
    names, column, signs, constants, symbolic = _output_columns(ir)
    values = vstack([dae.x, dae.values, flat.symbols.take(flat.discretes), cs.SX(0.0)])
    out = column_entries(values, np.where(column >= 0, column, values.numel() - 1).tolist())
    exprs = red.aliases.exprs
    for rows, change in (
        (signs != 1.0, lambda r: cs.DM(signs[r]) * column_entries(out, r)),
        (constants != 0.0, lambda r: column_entries(out, r) + cs.DM(constants[r])),
        (
            symbolic >= 0,
            lambda r: column_entries(out, r) + column_entries(exprs, symbolic[r].tolist()),
        ),
    ):
        if rows.any():
            at = np.flatnonzero(rows).tolist()
            out[at] = change(at)
    return names, out


def _output_columns(
    ir: IndexReduced,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every name a result has, each ``sign * column + offset``: the names, and as arrays
    their columns (numbered states, algebraic columns, modes; -1: none, a constant), signs,
    numeric offsets and the places of the offsets that are expressions in alias
    elimination's vector of them (-1: a number)."""
    red = ir.reduced
    flat = red.flat
    order = ir.column_order  # the columns: the states, then the algebraic ones
    cols = np.stack(ir.pattern_columns, axis=1)[order]  # (v, o) of each
    where = np.empty(len(cols), dtype=np.int64)  # each column of ir.pattern among cols
    where[order] = np.arange(len(cols))
    # the variables, then exposed connectors' names of hierarchical components (as their
    # variables), the derivatives of the chains, of eliminated variables and of the
    # variables declared equal to a derivative (.structure.naming), the discrete modes
    roots, signs, of_root, constants, symbolic = _variable_outputs(red, cols)
    derivs = list(chain.from_iterable(map(itemgetter(slice(1, None)), ir.chains)))
    of_derivs = where[ir.pattern_columns[1] > 0]  # (numbered chain by chain, as derivs)
    known = {*flat.aliases, *derivs}  # (of the names so far: a variable's is no derivative's)
    eliminated, of_eliminated, at_eliminated = _eliminated_derivatives(ir, roots, where, known)
    declared, of_declared = _declared_aliases(ir, derivs, of_derivs, known)
    names = [*flat.variables, *flat.aliases, *derivs, *eliminated, *declared, *flat.discretes]
    at = np.fromiter(map(red.position.__getitem__, flat.aliases.values()), np.int64)
    modes = np.arange(len(cols), len(cols) + len(flat.discretes))  # (they follow the columns)
    tail = len(derivs) + len(eliminated) + len(declared) + len(modes)
    ones = np.ones(len(declared) + len(modes))
    return (
        names,
        np.concatenate([of_root, of_root[at], of_derivs, of_eliminated, of_declared, modes]),
        np.concatenate([signs, signs[at], np.ones(len(derivs)), signs[at_eliminated], ones]),
        np.concatenate([constants, constants[at], np.zeros(tail)]),
        np.concatenate([symbolic, symbolic[at], np.full(tail, -1)]),
    )


def _eliminated_derivatives(
    ir: IndexReduced, roots: np.ndarray, where: np.ndarray, known: Container[str]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The derivatives ``der^o(q)`` in ``ir``'s flat form of eliminated variables ``q`` (of
    position ``k``), but those ``known``, that are ``+-der^o(root)`` of a column of ``ir``
    (``root = roots[k]``, its representative) or zero (a constant's: a parameter has no
    offset): their names, the columns (numbered by ``where``; -1: zero) and ``k``."""
    red = ir.reduced
    symbols = red.flat.symbols
    (rows,) = symbols.rows_where("kind", ["derivative"])  # (by the blocks' fields)
    names, bases, order = symbols.columns(("name", "base", "order"), rows=rows)
    k = np.fromiter(map(red.position.get, bases, repeat(-1)), np.int64, len(rows))
    on = np.flatnonzero(k >= 0)  # (-1: a base that is no variable)
    on = on[roots[k[on]] != k[on]]
    names, order = names[on].tolist(), order[on].astype(np.int64)
    k, fresh = k[on], ~np.fromiter(map(known.__contains__, names), bool, len(names))
    root = roots[k]
    # the representative's unknown (the variables not eliminated, in order), if its chain
    # reaches the order
    v = np.searchsorted(np.flatnonzero(roots == np.arange(len(roots))), root)
    live = root >= 0
    live[live] = order[live] < np.diff(ir.starts)[v[live]]
    keep = np.flatnonzero(fresh & (live | (root < 0)))
    k, v, order, live = k[keep], v[keep], order[keep], live[keep]
    column = np.full(len(keep), -1)
    column[live] = where[ir.starts[v[live]] + order[live]]
    return list(map(names.__getitem__, keep.tolist())), column, k


def _declared_aliases(
    ir: IndexReduced, derivs: list[str], of_derivs: np.ndarray, known: set[str]
) -> tuple[list[str], np.ndarray]:
    """The names ``der^k(w)`` of the columns of a derivative a variable ``w`` is declared
    equal to (:func:`.structure.naming.aliases_of_declared`), but those ``known`` (which
    they join), and their columns (``of_derivs``: those of the chains' derivatives
    ``derivs``). Only the declarations of derivatives below the top of their chain have
    any, and only theirs are read."""
    v, o = ir.pattern_columns
    below = ir.declared_among(o < np.diff(ir.starts)[v] - 1)
    found = aliases_of_declared(below, ir.chains)  # der(w) = der(der(x))
    column = dict(zip(derivs, of_derivs.tolist())) if found else {}
    names, columns = [], []
    for name, target in found:
        if name not in known:
            known.add(name)
            names.append(name)
            columns.append(column[target])
    return names, np.array(columns, dtype=np.int64)


def _variable_outputs(
    red: Reduced, cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each variable of ``red.flat`` as ``sign * root + offset`` (``root`` its
    representative's position, itself if not eliminated, -1 for a constant), as arrays:
    roots, signs, the roots' columns (their rows (v, 0) in ``cols``; -1: none), numeric
    offsets and places of symbolic ones (:class:`.alias.Aliases`)."""
    aliases = red.aliases
    n = len(red.flat.variables)
    roots = np.arange(n)
    roots[aliases.at] = aliases.roots
    signs, constants, symbolic = np.ones(n), np.zeros(n), np.full(n, -1)
    signs[aliases.at] = aliases.signs
    constants[aliases.at] = aliases.constants
    symbolic[aliases.at] = aliases.symbolic
    # the columns (v, 0) of the unknowns, the variables not eliminated (in order)
    unknowns = np.flatnonzero(roots == np.arange(n))
    first = np.flatnonzero(cols[:, 1] == 0)
    column = np.full(n + 1, -1)  # (a constant's root -1: the last, no column)
    column[unknowns[cols[first, 0]]] = first
    return roots, signs, column[roots], constants, symbolic
