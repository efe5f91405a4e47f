"""Dry friction with Modelica's modes: the logic every friction element shares.

A friction element (translational or rotational) has a relative speed ``v`` (``w``), a
path parameter ``sa`` and a discrete ``mode``, as in Modelica's ``PartialFriction``:

=========  =====  ============================================================
mode       value  the element's two path equations give
=========  =====  ============================================================
forward     +1    ``a = sa``, ``f = +f_slide(+v)``
stuck        0    ``a = 0``, ``f = sa`` (whatever holds the two sides together)
backward    -1    ``a = sa``, ``f = -f_slide(-v)``
free         2    ``a = sa``, ``f = 0`` (no normal force: the element is open)
unknown      3    only before the start, treated as stuck; the rules pick a mode
=========  =====  ============================================================

so every element writes ``a == if_else(locked, 0, sa)`` and ``f == if_else(locked, sa,
sliding)`` with the ``locked`` and ``sliding = direction * f_slide(|v|)`` that
:func:`modes` returns; ``f_slide(v)`` (``v >= 0``) is the element's sliding characteristic,
its ``law``: a constant, :func:`stribeck`, :func:`tabulated`, a clutch's ``mu(v) cgeo fn``.

The mode is a Modelica mode equation ``mode = rule(pre(mode), v, sa, normal)``, applied
at events until nothing changes (event iteration):

- stuck: free if ``normal <= 0``; else breaks away forward when ``sa > upper`` and backward
  when ``sa < lower`` (the peak static friction), else stays stuck;
- forward: free if ``normal < 0``; stays forward while ``v > 0`` *or* ``sa > 0`` - the start
  phase of a break-away (Modelica's ``startForward``), sliding while still accelerating
  away from zero speed, when ``v`` is within rounding of zero; else stuck, and the stuck
  rule decides in the same event iteration whether it holds or slides back;
- backward: the mirror image;
- free: when ``normal > 0``, forward if ``v > 0``, backward if ``v < 0``, else stuck;
- unknown (the start): forward if ``v > 0``, backward if ``v < 0``, else free if
  ``normal <= 0``, else stuck. An element that moves at the start slides even at zero
  normal force (the same motion, zero friction), and a sliding one turns free only when
  the normal force goes below zero.

A direction whose break-away limit is infinite (``upper = inf``: a one-way clutch's
``lower``, a mass resting on its hard stop) never slides. Three crossing functions
locate the events: ``direction * v`` (a stop; and the end of the start phase, an event
that changes nothing), the distance of ``sa`` to the nearer break-away limit while stuck,
and the normal force. The rules test values only where a crossing has just moved them
beyond the engine's noise band, or where (``sa > 0`` in the start phase) they are far
from zero, so rounding right after a switch does not switch back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import casadi as cs
import numpy as np

import acausal as ac

FORWARD, STUCK, BACKWARD, FREE, UNKNOWN = 1.0, 0.0, -1.0, 2.0, 3.0
Law = Callable[[cs.SX], cs.SX]  # a sliding characteristic: force (or torque) of speed >= 0


class Modes(NamedTuple):
    """What an element's equations read: its ``mode``, ``locked`` (1 while stuck, 0 else),
    the sliding ``direction`` (+1 forward, -1 backward, 0 stuck or free) and the
    ``sliding`` force ``direction * law(max(direction * v, 0))`` (0 while free)."""

    mode: cs.SX
    locked: cs.SX
    direction: cs.SX
    sliding: cs.SX


def _is(mode: cs.SX, value: float) -> cs.SX:
    """``mode == value``, tolerant: IDAS carries the modes as states with zero rate, and
    they drift by rounding (1e-27) inside a step."""
    return ac.fabs(mode - value) < 0.5


def _first(cases: Sequence[tuple[cs.SX, float | cs.SX]], otherwise: float | cs.SX) -> cs.SX:
    """The value of the first case whose condition holds, else ``otherwise``."""
    out = cs.SX(otherwise)
    for cond, value in reversed(cases):
        out = ac.if_else(cond, value, out)
    return out


def modes(
    comp: ac.Component,
    v: cs.SX,
    sa: cs.SX,
    law: Law,
    upper: cs.SX | float,
    lower: cs.SX | float | None = None,
    normal: cs.SX | float | None = None,
) -> Modes:
    """Declare the discrete ``mode`` of friction element ``comp`` (start: unknown) and the
    event that updates it (see the module docstring).

    ``v``: the relative speed between the rubbing surfaces; ``sa``: the path parameter
    (the holding force while stuck, the relative acceleration otherwise); ``law``: the
    sliding force as a function of the speed (``v >= 0``); ``upper`` /
    ``lower``: the break-away limits of ``sa`` while stuck (``lower = -upper`` unless given;
    ``inf`` / ``-inf``: never slides that way); ``normal``: the normal force of an element
    that can be free (a clutch, a brake), None for one that is always pressed.
    """
    lower = -upper if lower is None else lower
    mode = comp.discrete("mode", UNKNOWN)
    can_fwd, can_bwd = upper < cs.inf, lower > -cs.inf
    if normal is None:
        slack = released = cs.SX(0)
        engaged = cs.SX(1)
    else:
        slack, released, engaged = normal <= 0, normal < 0, normal > 0
    either, both = cs.logic_or, cs.logic_and
    landing = _first([(both(v > 0, can_fwd), FORWARD), (both(v < 0, can_bwd), BACKWARD)], STUCK)
    forward = _first([(released, FREE), (both(can_fwd, either(v > 0, sa > 0)), FORWARD)], STUCK)
    backward = _first([(released, FREE), (both(can_bwd, either(v < 0, sa < 0)), BACKWARD)], STUCK)
    stuck = _first([(slack, FREE), (sa > upper, FORWARD), (sa < lower, BACKWARD)], STUCK)
    rule = _first(
        [
            (_is(mode, FORWARD), forward),
            (_is(mode, BACKWARD), backward),
            (_is(mode, FREE), ac.if_else(engaged, landing, FREE)),
            (_is(mode, UNKNOWN), ac.if_else(both(landing == STUCK, slack), FREE, landing)),
        ],
        stuck,
    )
    crossings = [
        _first([(_is(mode, FORWARD), v), (_is(mode, BACKWARD), -v)], 0.0),
        ac.if_else(_is(mode, STUCK), ac.fmin(upper - sa, sa - lower), 0.0),
    ]
    if normal is not None:
        crossings.append(cs.SX(normal))
    comp.event(crossings, {mode: rule})
    locked = cs.logic_or(_is(mode, STUCK), _is(mode, UNKNOWN))
    direction = _is(mode, FORWARD) - _is(mode, BACKWARD)
    # the law at the speed in the sliding direction, 0 beyond a stop: IDAS may integrate
    # past a stop before the event is located, and exp(-fexp v) must not blow up there
    return Modes(mode, locked, direction, direction * law(ac.fmax(direction * v, 0.0)))


def path_parameter(comp: ac.Component) -> cs.SX:
    """Declare the path parameter ``sa`` of friction element or hard stop ``comp``: the
    relative acceleration while it moves, the holding force (torque) while it is stuck.
    Its unit depends on the mode, so it declares none (Modelica declares ``"1"`` and
    multiplies by unit constants, which have no counterpart here): ``ac.check_units``
    leaves it unchecked and checks the equations around it."""
    return comp.variable("sa")


def stribeck(
    coulomb: cs.SX | float,
    prop: cs.SX | float = 0.0,
    peak: cs.SX | float = 0.0,
    fexp: cs.SX | float = 0.0,
) -> Law:
    """Coulomb + viscous + Stribeck: ``v -> coulomb + prop v + peak exp(-fexp v)`` (``peak``:
    the Stribeck force, what the force at rest has beyond ``coulomb``)."""

    def law(v: cs.SX) -> cs.SX:
        return coulomb + prop * v + peak * ac.exp(-fexp * v)

    return law


def tabulated(table: object, where: str) -> Law:
    """The sliding characteristic through samples ``[(v_0, f_0), (v_1, f_1), ...]``
    (``0 <= v_0 < v_1 < ...``): linear between them, extrapolated through the two at each
    end (Modelica's ``LastTwoPoints``); one sample is a constant. ``where`` names the
    parameter in errors."""
    rows = np.asarray(table, dtype=float)
    if rows.ndim == 1:
        rows = rows.reshape(1, -1)
    if rows.ndim != 2 or rows.shape[1] != 2 or rows.shape[0] == 0:
        raise ac.ParameterError(f"{where}: give samples as rows (v, value), got {table!r}")
    vs, fs = rows[:, 0], rows[:, 1]
    if not np.all(np.isfinite(rows)) or vs[0] < 0 or np.any(np.diff(vs) <= 0):
        raise ac.ParameterError(
            f"{where}: the speeds must be finite, >= 0 and strictly increasing, got {list(vs)}"
        )
    slopes = np.diff(fs) / np.diff(vs)
    kinks = np.diff(slopes, prepend=0.0)  # slope changes at v_0, v_1, ...

    def law(v: cs.SX) -> cs.SX:
        out = cs.SX(fs[0])
        for k, kink in enumerate(kinks):
            out += kink * (v - vs[k] if k == 0 else ac.fmax(v - vs[k], 0.0))
        return out

    return law


def coefficients(comp: ac.Component, mu_k: object, mu_s: float | None) -> tuple[Law, cs.SX]:
    """The sliding friction coefficient of a clutch or brake as a function of the speed
    (``mu_k``: the parameter ``mu_k``, or samples ``[(v, mu), ...]`` of it) and the static
    one (the parameter ``mu_s``, by default the sliding one at rest)."""
    if isinstance(mu_k, (int, float)):
        kinetic = comp.parameter("mu_k", mu_k, "1", min=0)

        def law(v: cs.SX) -> cs.SX:
            return kinetic

    else:
        law = tabulated(mu_k, f"{comp.full_name}.mu_k")
    at_rest = law(cs.SX(0.0))
    if mu_s is None and at_rest.is_constant():
        mu_s = float(cs.evalf(at_rest))
    return law, comp.parameter("mu_s", at_rest if mu_s is None else mu_s, "1", min=0)
