"""1-D translational mechanics (Modelica.Mechanics.Translational names and sign conventions).

Connector :data:`ac.Flange`: position ``s`` (potential) and force ``f`` (flow, positive when
it acts on the component through the flange). Two-flange components have ``flange_a`` and
``flange_b``; one-flange components (sources, :class:`Fixed`) have ``flange``.

Sources act between ``flange`` and a housing. With ``use_support=False`` (the default, as
in Modelica) the housing is fixed at ``s = 0``; with ``use_support=True`` it is the extra
connector ``support``, which takes the reaction force.
"""

from __future__ import annotations

import casadi as cs

import acausal as ac

from . import mechanics1d as mech


class _OneFlange(ac.Component):
    """``flange`` and, with ``use_support``, a ``support`` taking ``-flange.f``."""

    def __init__(self, name: str, use_support: bool) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        self._s_support: cs.SX | float = 0.0
        if use_support:
            self.support = self.connector("support", ac.Flange)
            self._s_support = self.support.s
            self.equations(self.support.f == -self.flange.f)


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
        m, L = self.parameter("m", m), self.parameter("L", L)
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


class Fixed(ac.Component):
    """A flange fixed at ``s0``."""

    def __init__(self, name: str, s0: float = 0.0) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        self.equations(self.flange.s == self.parameter("s0", s0))


class PartialForce(_OneFlange):
    """Force ``f`` acting on ``flange`` in the positive direction: ``flange.f = -f``."""

    def __init__(self, name: str, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.f = self.variable("f")
        self.equations(self.flange.f == -self.f)


class Force(PartialForce):
    """Force ``f`` (a signal) acting on ``flange``: a number, an expression of ``ac.time``,
    or samples ``(t, y)``."""

    def __init__(self, name: str, f: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.equations(self.f == ac.signal(f, f"{self.full_name}.f"))


class ConstantForce(PartialForce):
    """``f = f_constant``."""

    def __init__(self, name: str, f_constant: float = 1.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.equations(self.f == self.parameter("f_constant", f_constant))


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
        height = self.parameter("step_force", step_force)
        t0 = self.parameter("start_time", start_time)
        offset = self.parameter("offset_force", offset_force)
        self.equations(self.f == offset + ac.step(height, t0))


StepForce = ForceStep


class SineForce(PartialForce):
    """``f = offset + amplitude sin(2 pi freq t + phase)``.

    The keyword ``f`` is the frequency in Hz as for the other sine sources, but since
    ``f`` names the force, the frequency parameter is called ``freq`` (``"F1.freq"``).
    """

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
        sig = ac.sine(
            self.parameter("amplitude", amplitude),
            self.parameter("freq", f),
            self.parameter("phase", phase),
        )
        self.equations(self.f == self.parameter("offset", offset) + sig)


class Position(_OneFlange):
    """Prescribed position of ``flange`` relative to the housing: ``s = s_ref(t)``.

    The signal is differentiated symbolically by index reduction, so an expression of
    ``ac.time`` should be smooth; samples ``(t, y)`` are interpolated linearly (their
    acceleration is zero between samples). Driving a mass this way gives index 3.
    """

    def __init__(self, name: str, s: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.s = self.variable("s")
        self.equations(
            self.s == self.flange.s - self._s_support,
            self.s == ac.signal(s, f"{self.full_name}.s"),
        )


class PartialSpeed(_OneFlange):
    """Prescribed speed ``v = der(s)`` of ``flange`` relative to the housing.

    ``s0`` fixes the initial position ``s`` (else it comes from the rest of the system).
    """

    def __init__(self, name: str, s0: float | None = None, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.s = self.variable("s", start=self.initial("s0", s0), fixed=s0 is not None)
        self.v = self.variable("v")
        self.equations(self.s == self.flange.s - self._s_support, self.v == ac.der(self.s))


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
        self.equations(self.v == self.parameter("v_fixed", v_fixed))
