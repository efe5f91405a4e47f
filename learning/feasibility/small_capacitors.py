"""The paper's small-capacitor device: a capacitor ``C_eps`` from each connector of a
nonlinear component to the reference.

With its connector potentials made states, a Type 1 component's law ``g(f, x) = 0`` is
solved on its own for the flow ``f`` given ``x``: the block is scalar and
``dg/df != 0`` (Proposition 3.1's necessary condition) becomes sufficient for an index-1
model, whatever the rest of the circuit. The capacitor is the generic element
``flow = C der(potential)``: a capacitor to ground on a pin, a heat capacity on a heat port,
a small damper to the fixed frame on a flange. A node gets none where its potential is
already a state, is fixed by a ground or a source (the original model tells); a node
shared by several chosen components gets one.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence

import casadi as cs
import numpy as np

import acausal as ac
from acausal.errors import OptionError

from ..laws import Unknown
from .constitutive import constitutive


class SmallCapacitor(ac.Component):
    """``flow = C der(potential)`` at one connector (``p`` for a pin, else ``port``), the
    potential's start value ``start`` (a guess, not fixed: the initialization keeps the
    original model's consistent value when it can)."""

    def __init__(self, name: str, ctype: ac.ConnectorType, C: float = 1e-6, start: float = 0.0):
        super().__init__(name)
        self.port = self.connector("p" if ctype is ac.Pin else "port", ctype)
        pot, flow = ctype.potentials[0], ctype.flows[0]
        C = self.parameter("C", C)
        x = self.variable(pot, start=float(start), state_priority=1)
        self.equations(x == getattr(self.port, pot), getattr(self.port, flow) == C * ac.der(x))


def nonlinear_components(system: ac.System) -> list[ac.Component]:
    """Unknowns, and two-connector components whose law is not affine in its variables."""
    out = []
    for comp in system.all_components():
        con = constitutive(comp)
        if con is None or con.kind != "law":
            continue
        syms = [con.symbols[label] for label in con.symbols]
        nonlinear = any(
            cs.depends_on(cs.jacobian(r.g, cs.vertcat(*syms)), cs.vertcat(*syms))
            for r in con.relations
        )
        if nonlinear or isinstance(comp, Unknown):
            out.append(comp)
    return out


def _grounded(cset: list[ac.Connector]) -> bool:
    """Does a one-connector component (a Ground, a Fixed) fix this node's potential?"""
    for c in cset:
        owner = c.owner
        own = owner.own_connectors
        if len(own) != 1 or not owner.declared_equations:
            continue
        pot = c.quantities[c.ctype.potentials[0]].sym.name()
        if all(
            cs.symvar(e.residual) and all(s.name() == pot for s in cs.symvar(e.residual))
            for e in owner.declared_equations
        ):
            return True
    return False


class _Original:
    """The original model's consistent initial point, and which node potentials already
    are states or are fixed by sources (no capacitor needed there)."""

    def __init__(self, system: ac.System, t0: float) -> None:
        self.values: dict[str, float] = {}
        self.model = None
        try:
            from solvers import initial_values

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                self.model = ac.compile(system)
            self.values = initial_values(self.model, t0)
        except Exception:  # not compilable or no consistent point: start at 0, check all
            pass

    def redundant(self, name: str) -> str | None:
        """Why a capacitor at potential ``name`` changes nothing, or None."""
        model = self.model
        if model is None or name not in model:
            return None
        expr = model.outputs[model.check_name(name)]
        states = {s.name() for s in cs.symvar(model.dae.x)}
        free = [s for s in cs.symvar(expr) if s.name() != "time"]
        if expr.is_symbolic() and expr.name() in states:
            return "already a state"
        if all(model.symbol_name(s) in model.defaults for s in free):
            return "fixed by a source"
        return None


def insert_small_capacitors(
    system: ac.System,
    components: Sequence[str | ac.Component] | Mapping[str, float] | None = None,
    C: float = 1e-6,
    t_start: float = 0.0,
) -> tuple[ac.System, list[str]]:
    """The system with small capacitors added, and a line per capacitor saying where."""
    by_name = {c.full_name: c for c in system.all_components()}
    if components is None:
        chosen = {c.full_name: C for c in nonlinear_components(system)}
    elif isinstance(components, Mapping):
        chosen = {str(k): float(v) for k, v in components.items()}
    else:
        chosen = {c if isinstance(c, str) else c.full_name: C for c in components}
    for name, cap in chosen.items():
        if name not in by_name:
            raise OptionError(
                f"small capacitors: {name!r} is not a component of {system.name}; "
                f"components: {', '.join(sorted(by_name))}"
            )
        if not (np.isfinite(cap) and cap > 0):
            raise OptionError(f"small capacitors: C = {cap!r} for {name} must be positive")
    original = _Original(system, t_start)
    new = copy.deepcopy(system)  # the user's system and components stay as they are
    new.name = f"{system.name}_eps"
    by_name = {c.full_name: c for c in new.all_components()}
    sets = new.connection_sets()
    set_of = {c: k for k, cset in enumerate(sets) for c in cset}
    done: set[int] = set()
    added = []
    for name, cap in chosen.items():
        comp = by_name[name]
        own = list(comp.own_connectors.values())
        for conn in own:
            if len(conn.ctype.flows) != 1:
                continue
            k = set_of[conn]
            pot = conn.ctype.potentials[0]
            node = f"{conn.name}.{pot}"
            if k in done or _grounded(sets[k]) or original.redundant(node):
                continue
            done.add(k)
            label = "C_eps_" + conn.name.replace(".", "_")
            eps = SmallCapacitor(label, conn.ctype, cap, original.values.get(node, 0.0))
            new.connect(conn, eps.port)
            added.append(f"{label} (C = {cap:g}) at {conn.name}")
    return new, added


def with_small_capacitors(
    system: ac.System,
    components: Sequence[str | ac.Component] | Mapping[str, float] | None = None,
    C: float = 1e-6,
) -> ac.System:
    """A new system (a copy: the original and its components are unchanged) with a small
    capacitor ``C`` at each connector of ``components`` (names, components, or a mapping
    name -> C; default: every nonlinear two-connector component and every Unknown).

    >>> eps = ln.with_small_capacitors(circuit, ["Rx"], C=1e-6)   # doctest: +SKIP
    """
    return insert_small_capacitors(system, components, C)[0]
