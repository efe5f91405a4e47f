"""1-D rotational mechanics (Modelica.Mechanics.Rotational names and sign conventions).

Connector :data:`ac.RotFlange`: angle ``phi`` (potential) and torque ``tau`` (flow, positive
when it acts on the component through the flange). Two-flange components have ``flange_a``
and ``flange_b``; one-flange components (sources, :class:`Fixed`) have ``flange``.

Sources and the ideal gear act against a housing. With ``use_support=False`` (the default,
as in Modelica) the housing is fixed at ``phi = 0``; with ``use_support=True`` it is the
extra connector ``support``, which takes the reaction torque.
"""

from __future__ import annotations

import casadi as cs

import acausal as ac

from . import mechanics1d as mech


class Inertia(ac.Component):
    """Rigid inertia: ``J der(w) = flange_a.tau + flange_b.tau``; both flanges at ``phi``.

    ``phi0`` and ``w0`` fix the initial angle and speed.
    """

    def __init__(
        self, name: str, J: float = 1.0, phi0: float | None = None, w0: float | None = None
    ) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        J = self.parameter("J", J)
        self.phi = self.variable("phi", start=self.initial("phi0", phi0), fixed=phi0 is not None)
        self.w = self.variable("w", start=self.initial("w0", w0), fixed=w0 is not None)
        self.a = self.variable("a")
        self.equations(
            self.flange_a.phi == self.phi,
            self.flange_b.phi == self.phi,
            self.w == ac.der(self.phi),
            self.a == ac.der(self.w),
            J * self.a == self.flange_a.tau + self.flange_b.tau,
        )


class PartialCompliant(mech.Compliant):
    """Massless two-flange element: ``phi_rel = flange_b.phi - flange_a.phi``,
    ``flange_b.tau = tau``, ``flange_a.tau = -tau``."""

    axis = mech.ROTATIONAL


class Spring(mech.LinearSpring):
    """Linear torsion spring: ``tau = c (phi_rel - phi_rel0)``."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, c: float = 1.0, phi_rel0: float = 0.0) -> None:
        super().__init__(name, c, phi_rel0)


class Damper(mech.LinearDamper):
    """Linear damper: ``tau = d w_rel``, ``w_rel = der(phi_rel)``."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, d: float = 1.0) -> None:
        super().__init__(name, d)


class SpringDamper(mech.LinearSpringDamper):
    """Spring and damper in parallel: ``tau = c (phi_rel - phi_rel0) + d w_rel``."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, c: float = 1.0, d: float = 1.0, phi_rel0: float = 0.0) -> None:
        super().__init__(name, c, d, phi_rel0)


class IdealGear(ac.Component):
    """Ideal gear: ``phi_a = ratio phi_b`` (angles relative to the housing),
    ``0 = ratio flange_a.tau + flange_b.tau``.

    With ``use_support=True`` the housing is the connector ``support`` and takes
    ``support.tau = -flange_a.tau - flange_b.tau``.
    """

    def __init__(self, name: str, ratio: float = 1.0, use_support: bool = False) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        phi_support: cs.SX | float = 0.0
        if use_support:
            self.support = self.connector("support", ac.RotFlange)
            phi_support = self.support.phi
        ratio = self.parameter("ratio", ratio)
        self.phi_a, self.phi_b = self.variable("phi_a"), self.variable("phi_b")
        self.equations(
            self.phi_a == self.flange_a.phi - phi_support,
            self.phi_b == self.flange_b.phi - phi_support,
            self.phi_a == ratio * self.phi_b,
            0 == ratio * self.flange_a.tau + self.flange_b.tau,
        )
        if use_support:
            self.equations(self.support.tau == -self.flange_a.tau - self.flange_b.tau)


class Fixed(ac.Component):
    """A flange fixed at angle ``phi0``."""

    def __init__(self, name: str, phi0: float = 0.0) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        self.equations(self.flange.phi == self.parameter("phi0", phi0))


class _OneFlange(ac.Component):
    """``flange`` and, with ``use_support``, a ``support`` taking ``-flange.tau``."""

    def __init__(self, name: str, use_support: bool) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        self._phi_support: cs.SX | float = 0.0
        if use_support:
            self.support = self.connector("support", ac.RotFlange)
            self._phi_support = self.support.phi
            self.equations(self.support.tau == -self.flange.tau)


class PartialTorque(_OneFlange):
    """Torque ``tau`` acting on ``flange`` in the positive direction: ``flange.tau = -tau``."""

    def __init__(self, name: str, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.tau = self.variable("tau")
        self.equations(self.flange.tau == -self.tau)


class Torque(PartialTorque):
    """Torque ``tau`` (a signal: number, expression of ``ac.time`` or samples ``(t, y)``)."""

    def __init__(self, name: str, tau: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.equations(self.tau == ac.signal(tau, f"{self.full_name}.tau"))


class ConstantTorque(PartialTorque):
    """``tau = tau_constant``."""

    def __init__(self, name: str, tau_constant: float = 1.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.equations(self.tau == self.parameter("tau_constant", tau_constant))


class TorqueStep(PartialTorque):
    """``tau = offset_torque + (step_torque if t >= start_time else 0)``."""

    def __init__(
        self,
        name: str,
        step_torque: float = 1.0,
        offset_torque: float = 0.0,
        start_time: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, use_support)
        height = self.parameter("step_torque", step_torque)
        t0 = self.parameter("start_time", start_time)
        offset = self.parameter("offset_torque", offset_torque)
        self.equations(self.tau == offset + ac.step(height, t0))


StepTorque = TorqueStep


class SineTorque(PartialTorque):
    """``tau = offset + amplitude sin(2 pi f t + phase)`` (Modelica's Sine block names)."""

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
            self.parameter("f", f),
            self.parameter("phase", phase),
        )
        self.equations(self.tau == self.parameter("offset", offset) + sig)


class Position(_OneFlange):
    """Prescribed angle of ``flange`` relative to the housing: ``phi = phi_ref(t)``.

    The signal is differentiated symbolically by index reduction; driving an inertia this
    way gives index 3.
    """

    def __init__(self, name: str, phi: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.phi = self.variable("phi")
        self.equations(
            self.phi == self.flange.phi - self._phi_support,
            self.phi == ac.signal(phi, f"{self.full_name}.phi"),
        )


class PartialSpeed(_OneFlange):
    """Prescribed speed ``w = der(phi)`` of ``flange`` relative to the housing.

    ``phi0`` fixes the initial angle ``phi`` (else it comes from the rest of the system).
    """

    def __init__(self, name: str, phi0: float | None = None, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.phi = self.variable("phi", start=self.initial("phi0", phi0), fixed=phi0 is not None)
        self.w = self.variable("w")
        self.equations(self.phi == self.flange.phi - self._phi_support, self.w == ac.der(self.phi))


class Speed(PartialSpeed):
    """Prescribed speed ``w`` (a signal: number, expression of ``ac.time`` or samples)."""

    def __init__(
        self, name: str, w: object = 0.0, phi0: float | None = None, use_support: bool = False
    ) -> None:
        super().__init__(name, phi0, use_support)
        self.equations(self.w == ac.signal(w, f"{self.full_name}.w"))


class ConstantSpeed(PartialSpeed):
    """``w = w_fixed``."""

    def __init__(
        self,
        name: str,
        w_fixed: float = 1.0,
        phi0: float | None = None,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, phi0, use_support)
        self.equations(self.w == self.parameter("w_fixed", w_fixed))
