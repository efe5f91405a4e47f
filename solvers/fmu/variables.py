"""The variables an exported model shows: every name a :class:`~solvers.Result` has, read from
value slots that aliases share.

A slot is one distinct value: names whose values are the same CasADi expression node (a
capacitor's ``C1.v`` and ``C1.p.v`` when ``C1.n`` is grounded) read one slot, which is
how FMI 2.0 declares aliases (one value reference). A name whose value is minus another's
gets its own slot (FMI 2.0 has no negated aliases). Each continuous state of the model
(:attr:`~acausal.Model.x_names`) is a slot whose value is the state itself, and its
derivative is a slot whose value is the rate the model computes; where the model has no
name for that derivative, ``der(<state>)`` is added.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as cs

from acausal import Model


@dataclass(frozen=True)
class Variables:
    """``names[k]`` reads slot ``slots[k]``; ``values[s]`` is slot ``s``'s value in terms of
    the model's ``(x, z, p, t)``; ``states[i]`` and ``derivatives[i]``: the positions in
    ``names`` of state ``i`` and of its derivative."""

    names: tuple[str, ...]
    slots: tuple[int, ...]
    values: cs.SX
    states: tuple[int, ...]
    derivatives: tuple[int, ...]

    @property
    def n_slots(self) -> int:
        return self.values.numel()


def variables(model: Model) -> Variables:
    """The named variables of ``model`` and their slots (see the module docstring)."""
    dae = model.dae
    n_states = dae.x.numel() - dae.modes
    names = list(model.names)
    exprs = list(cs.vertsplit(model.outputs)) if names else []
    where = {n: k for k, n in enumerate(names)}
    states, derivatives = [], []
    for i in range(n_states):
        state = model.x_names[i]
        for name, value in ((state, dae.x[i]), (f"der({state})", dae.ode[i])):
            if name not in where:
                where[name] = len(names)
                names.append(name)
                exprs.append(value)
        states.append(where[state])
        derivatives.append(where[f"der({state})"])
    first: dict[tuple[str, float], int] = {}
    slots, values = [], []
    for e in exprs:
        key = ("value", float(e)) if e.is_constant() else ("node", e.element_hash())
        if key not in first:
            first[key] = len(values)
            values.append(e)
        slots.append(first[key])
    stacked = cs.vertcat(*values) if values else cs.SX(0, 1)
    return Variables(tuple(names), tuple(slots), stacked, tuple(states), tuple(derivatives))
