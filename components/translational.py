"""1-D translational mechanics (Modelica.Mechanics.Translational names and sign conventions).

Connector :data:`ac.Flange`: position ``s`` (potential) and force ``f`` (flow, positive when
it acts on the component through the flange). Two-flange components have ``flange_a`` and
``flange_b``; one-flange components (sources, :class:`Fixed`) have ``flange``.

Sources act between ``flange`` and a housing. With ``use_support=False`` (the default, as
in Modelica) the housing is fixed at ``s = 0``; with ``use_support=True`` it is the extra
connector ``support``, which takes the reaction force.
"""

from __future__ import annotations

import acausal as ac

from . import mechanics1d as mech
from .storage import warn_if_negative


class Mass(ac.Component):
    """Sliding mass of length ``L``: ``m der(v) = flange_a.f + flange_b.f``.

    The flanges sit at ``s -/+ L/2``; ``s0`` and ``v0`` fix the initial centre position
    and velocity.
    """

    def __init__(
        self,
        name: str,
        m: float = 1.0,
        L: float = 0.0,
        s0: float | None = None,
        v0: float | None = None,
    ) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        m = self.parameter("m", warn_if_negative(self, "m", m, "mass"))
        L = self.parameter("L", L)
        self.s = self.variable("s", start=self.initial("s0", s0), fixed=s0 is not None)
        self.v = self.variable("v", start=self.initial("v0", v0), fixed=v0 is not None)
        self.a = self.variable("a")
        self.equations(
            self.flange_a.s == self.s - L / 2,
            self.flange_b.s == self.s + L / 2,
            self.v == ac.der(self.s),
            self.a == ac.der(self.v),
            m * self.a == self.flange_a.f + self.flange_b.f,
        )


class PartialCompliant(mech.Compliant):
    """Massless two-flange element: ``s_rel = flange_b.s - flange_a.s``,
    ``flange_b.f = f``, ``flange_a.f = -f``."""

    axis = mech.TRANSLATIONAL


class Spring(mech.LinearSpring):
    """Linear spring: ``f = c (s_rel - s_rel0)``."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, c: float = 1.0, s_rel0: float = 0.0) -> None:
        super().__init__(name, c, s_rel0)


class Damper(mech.LinearDamper):
    """Linear damper: ``f = d v_rel``, ``v_rel = der(s_rel)``."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, d: float = 1.0) -> None:
        super().__init__(name, d)


class SpringDamper(mech.LinearSpringDamper):
    """Spring and damper in parallel: ``f = c (s_rel - s_rel0) + d v_rel``."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, c: float = 1.0, d: float = 1.0, s_rel0: float = 0.0) -> None:
        super().__init__(name, c, d, s_rel0)


class Fixed(mech.Fixed):
    """A flange held at position ``s0``."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, s0: float = 0.0) -> None:
        super().__init__(name, s0)


class PartialForce(mech.Effort):
    """Force ``f`` acting on ``flange`` in the positive direction: ``flange.f = -f``."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, use_support: bool = False) -> None:
        super().__init__(name, use_support)


class Force(mech.SignalEffort):
    """Force ``f`` (a signal: number, expression of ``ac.time`` or samples ``(t, y)``)."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, f: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, f, use_support)


class ConstantForce(mech.ConstantEffort):
    """``f = f_constant``."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, f_constant: float = 1.0, use_support: bool = False) -> None:
        super().__init__(name, f_constant, use_support)


class ForceStep(mech.StepEffort):
    """``f = offset_force + (step_force if t >= start_time else 0)``."""

    axis = mech.TRANSLATIONAL

    def __init__(
        self,
        name: str,
        step_force: float = 1.0,
        offset_force: float = 0.0,
        start_time: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, step_force, offset_force, start_time, use_support)


StepForce = ForceStep


class SineForce(mech.SineEffort):
    """``f = offset + amplitude sin(2 pi f t + phase)`` (Modelica's Sine block names)."""

    axis = mech.TRANSLATIONAL

    def __init__(
        self,
        name: str,
        amplitude: float = 1.0,
        f: float = 1.0,
        phase: float = 0.0,
        offset: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, amplitude, f, phase, offset, use_support)


class Position(mech.Position):
    """Prescribed position ``s`` of ``flange`` relative to the housing (a signal)."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, s: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, s, use_support)


class PartialSpeed(mech.Motion):
    """Prescribed speed ``v = der(s)`` of ``flange``; ``s0`` fixes the initial position."""

    axis = mech.TRANSLATIONAL

    def __init__(self, name: str, s0: float | None = None, use_support: bool = False) -> None:
        super().__init__(name, s0, use_support)


class Speed(mech.SignalSpeed):
    """Prescribed speed ``v`` (a signal: number, expression of ``ac.time`` or samples)."""

    axis = mech.TRANSLATIONAL

    def __init__(
        self, name: str, v: object = 0.0, s0: float | None = None, use_support: bool = False
    ) -> None:
        super().__init__(name, v, s0, use_support)


class ConstantSpeed(mech.ConstantSpeed):
    """``v = v_fixed``."""

    axis = mech.TRANSLATIONAL

    def __init__(
        self,
        name: str,
        v_fixed: float = 1.0,
        s0: float | None = None,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, v_fixed, s0, use_support)


class CoulombFriction(mech.CoulombFriction):
    """Dry friction between ``flange_a`` and ``flange_b`` (see
    :class:`components.mechanics1d.CoulombFriction`): kinetic force ``f_coulomb``, static
    limit ``f_static``; ``smooth=True`` gives ``f = f_coulomb tanh(v_rel / v_smooth)``."""

    axis = mech.TRANSLATIONAL

    def __init__(
        self,
        name: str,
        f_coulomb: float = 1.0,
        f_static: float | None = None,
        smooth: bool = False,
        v_smooth: float = 1e-3,
    ) -> None:
        static = f_coulomb if f_static is None else f_static
        super().__init__(name, f_coulomb, static, smooth, v_smooth)


class MassWithStop(ac.Component):
    """Sliding mass (as :class:`Mass`) between hard stops: its centre ``s`` stays within
    ``[smin, smax]``.

    The discrete ``mode`` is 0 while free, +1 / -1 while resting on the upper / lower stop.
    A path parameter ``sa`` keeps one structure: free, ``a = sa`` and no stop force; at a
    stop, ``a = 0`` and the stop's force ``f_stop = sa``. Reaching a stop is an inelastic
    impact (``v`` re-initialized to 0); the mass leaves the stop when the stop would have
    to pull it back.
    """

    def __init__(
        self,
        name: str,
        m: float = 1.0,
        L: float = 0.0,
        smin: float = -1.0,
        smax: float = 1.0,
        s0: float | None = None,
        v0: float | None = None,
    ) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        m = self.parameter("m", warn_if_negative(self, "m", m, "mass"))
        L = self.parameter("L", L)
        lo, hi = self.parameter("smin", smin), self.parameter("smax", smax)
        self.s = self.variable("s", start=self.initial("s0", s0), fixed=s0 is not None)
        self.v = self.variable("v", start=self.initial("v0", v0), fixed=v0 is not None)
        self.a, self.sa, self.f_stop = (self.variable(n) for n in ("a", "sa", "f_stop"))
        self.mode = self.discrete("mode", 0.0)
        free = ac.fabs(self.mode) < 0.5
        self.equations(
            self.flange_a.s == self.s - L / 2,
            self.flange_b.s == self.s + L / 2,
            self.v == ac.der(self.s),
            self.a == ac.der(self.v),
            self.a == ac.if_else(free, self.sa, 0.0),
            self.f_stop == ac.if_else(free, 0.0, self.sa),
            m * self.a == self.flange_a.f + self.flange_b.f + self.f_stop,
        )
        hit_max = (self.s >= hi) * (self.v > 0)
        hit_min = (self.s <= lo) * (self.v < 0)
        resting = ac.if_else(
            self.mode > 0.5, ac.if_else(self.sa > 0, 0.0, 1.0), ac.if_else(self.sa < 0, 0.0, -1.0)
        )
        self.event(
            [ac.if_else(free, ac.fmin(hi - self.s, self.s - lo), -self.mode * self.sa)],
            {
                self.mode: ac.if_else(free, hit_max - hit_min, resting),
                self.v: ac.if_else(free * (hit_max + hit_min), 0.0, self.v),
            },
        )
