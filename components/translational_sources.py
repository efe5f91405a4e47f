"""Translational sources (Modelica.Mechanics.Translational.Sources names), imported into
:mod:`components.translational`.

A source acts on ``flange`` against a housing. With ``use_support=False`` (the default, as
in Modelica) the housing is fixed at ``s_support = 0``; with ``use_support=True`` it is
the connector ``support``, which takes the reaction ``support.f = -flange.f``.
"""

from __future__ import annotations

import casadi as cs

import acausal as ac


def _housing(comp: ac.Component, flange: ac.Connector, use_support: bool) -> cs.SX | float:
    """The housing's position ``s_support`` of a source acting on ``flange``: 0 (fixed), or
    with ``use_support`` that of the connector ``support`` it declares on ``comp``, which
    takes the reaction ``support.f = -flange.f``."""
    if not use_support:
        return 0.0
    comp.support = comp.connector("support", ac.Flange)
    comp.equations(comp.support.f == -flange.f)
    return comp.support.s


class PartialForce(ac.Component):
    """Force ``f`` acting on ``flange`` in the positive direction: ``flange.f = -f``."""

    def __init__(self, name: str, use_support: bool = False) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        _housing(self, self.flange, use_support)
        self.f = self.variable("f", unit="N")
        self.equations(self.flange.f == -self.f)


class Force(PartialForce):
    """Force ``f`` (a signal: number, expression of ``ac.time`` or samples ``(t, y)``)."""

    def __init__(self, name: str, f: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.equations(self.f == ac.signal(f, f"{self.full_name}.f"))


class ConstantForce(PartialForce):
    """``f = f_constant``."""

    def __init__(self, name: str, f_constant: float = 1.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        f_constant = self.parameter("f_constant", f_constant, "N")
        self.equations(self.f == f_constant)


class ForceStep(PartialForce):
    """``f = offset_force + (step_force if t >= start_time else 0)``."""

    def __init__(
        self,
        name: str,
        step_force: float = 1.0,
        offset_force: float = 0.0,
        start_time: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, use_support)
        step_force = self.parameter("step_force", step_force, "N")
        start_time = self.parameter("start_time", start_time, "s")
        offset_force = self.parameter("offset_force", offset_force, "N")
        self.equations(self.f == offset_force + ac.step(step_force, start_time))


class SineForce(PartialForce):
    """``f = offset + amplitude sin(2 pi freq t + phase)`` (Modelica's Sine block names, but
    the frequency parameter is ``freq``, where ``f`` already names the force; the keyword
    stays ``f``)."""

    def __init__(
        self,
        name: str,
        amplitude: float = 1.0,
        f: float = 1.0,
        phase: float = 0.0,
        offset: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, use_support)
        amplitude = self.parameter("amplitude", amplitude, "N")
        freq = self.parameter("freq", f, "Hz")
        phase = self.parameter("phase", phase, "rad")
        offset = self.parameter("offset", offset, "N")
        self.equations(self.f == offset + ac.sine(amplitude, freq, phase))


class Position(ac.Component):
    """Prescribed position ``s = flange.s - s_support`` of ``flange`` relative to the
    housing, ``s = s_ref(t)``.

    The signal is differentiated symbolically by index reduction, so an expression of
    ``ac.time`` should be smooth; samples ``(t, y)`` become a C2 cubic spline
    (:func:`acausal.spline`). Driving a mass this way gives index 3.
    """

    def __init__(self, name: str, s: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        s_support = _housing(self, self.flange, use_support)
        self.s = self.variable("s", unit="m")
        self.equations(
            self.s == self.flange.s - s_support,
            self.s == ac.signal(s, f"{self.full_name}.s", smooth=True),
        )


class PartialSpeed(ac.Component):
    """Prescribed speed ``v = der(s)`` of ``flange``, ``s = flange.s - s_support``
    its position relative to the housing; ``s0`` fixes the initial position (else the rest of
    the system determines it)."""

    def __init__(self, name: str, s0: float | None = None, use_support: bool = False) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        s_support = _housing(self, self.flange, use_support)
        s_start = self.initial("s0", s0, "m")
        self.s = self.variable("s", start=s_start, fixed=s0 is not None, unit="m")
        self.v = self.variable("v", unit="m/s")
        self.equations(
            self.s == self.flange.s - s_support,
            self.v == ac.der(self.s),
        )


class Speed(PartialSpeed):
    """Prescribed speed ``v`` (a signal: number, expression of ``ac.time`` or samples)."""

    def __init__(
        self, name: str, v: object = 0.0, s0: float | None = None, use_support: bool = False
    ) -> None:
        super().__init__(name, s0, use_support)
        self.equations(self.v == ac.signal(v, f"{self.full_name}.v"))


class ConstantSpeed(PartialSpeed):
    """``v = v_fixed``."""

    def __init__(
        self,
        name: str,
        v_fixed: float = 1.0,
        s0: float | None = None,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, s0, use_support)
        v_fixed = self.parameter("v_fixed", v_fixed, "m/s")
        self.equations(self.v == v_fixed)
