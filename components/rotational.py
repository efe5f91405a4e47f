"""1-D rotational mechanics (Modelica.Mechanics.Rotational names and sign conventions).

Connector :data:`ac.RotFlange`: angle ``phi`` (potential) and torque ``tau`` (flow, positive
when it acts on the component through the flange). Two-flange components have ``flange_a``
and ``flange_b``; one-flange components (sources, :class:`Fixed`) have ``flange``.

Sources and the ideal gear act against a housing. With ``use_support=False`` (the default,
as in Modelica) the housing is fixed at ``phi = 0``; with ``use_support=True`` it is the
extra connector ``support``, which takes the reaction torque.

The friction elements (:class:`CoulombFriction`, :class:`Clutch`, :class:`OneWayClutch`,
:class:`BearingFriction`) are written in :mod:`components.rotational_friction` and imported
here; their modes are :mod:`components.friction`'s. :class:`Brake` is a clutch against the
housing.

Sensors (:class:`AngleSensor`, :class:`SpeedSensor`, :class:`AccSensor`,
:class:`RelAngleSensor`, :class:`RelSpeedSensor`, :class:`TorqueSensor`, written once for
both 1-D domains in :mod:`components.sensors1d`) give their reading as a variable
(``res["ws.w"]``), not a signal connector.
"""

from __future__ import annotations

import casadi as cs

import acausal as ac

from . import mechanics1d as mech
from . import sensors1d as sensors
from .rotational_friction import BearingFriction as BearingFriction
from .rotational_friction import Clutch as Clutch
from .rotational_friction import CoulombFriction as CoulombFriction
from .rotational_friction import OneWayClutch as OneWayClutch
from .rotational_friction import PartialFrictionBetweenFlanges as PartialFrictionBetweenFlanges


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
        J = self.parameter("J", J, "kg*m^2", min=0)
        phi_start, w_start = self.initial("phi0", phi0, "rad"), self.initial("w0", w0, "rad/s")
        self.phi = self.variable("phi", start=phi_start, fixed=phi0 is not None, unit="rad")
        self.w = self.variable("w", start=w_start, fixed=w0 is not None, unit="rad/s")
        self.a = self.variable("a", unit="rad/s^2")
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
        ratio = self.parameter("ratio", ratio, "1")
        self.phi_a = self.variable("phi_a", unit="rad")
        self.phi_b = self.variable("phi_b", unit="rad")
        self.equations(
            self.phi_a == self.flange_a.phi - phi_support,
            self.phi_b == self.flange_b.phi - phi_support,
            self.phi_a == ratio * self.phi_b,
            0 == ratio * self.flange_a.tau + self.flange_b.tau,
        )
        if use_support:
            self.equations(self.support.tau == -self.flange_a.tau - self.flange_b.tau)


class Fixed(mech.Fixed):
    """A flange held at angle ``phi0``."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, phi0: float = 0.0) -> None:
        super().__init__(name, phi0)


class PartialTorque(mech.Effort):
    """Torque ``tau`` acting on ``flange`` in the positive direction: ``flange.tau = -tau``."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, use_support: bool = False) -> None:
        super().__init__(name, use_support)


class Torque(mech.SignalEffort):
    """Torque ``tau`` (a signal: number, expression of ``ac.time`` or samples ``(t, y)``)."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, tau: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, tau, use_support)


class ConstantTorque(mech.ConstantEffort):
    """``tau = tau_constant``."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, tau_constant: float = 1.0, use_support: bool = False) -> None:
        super().__init__(name, tau_constant, use_support)


class TorqueStep(mech.StepEffort):
    """``tau = offset_torque + (step_torque if t >= start_time else 0)``."""

    axis = mech.ROTATIONAL

    def __init__(
        self,
        name: str,
        step_torque: float = 1.0,
        offset_torque: float = 0.0,
        start_time: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, step_torque, offset_torque, start_time, use_support)


class SineTorque(mech.SineEffort):
    """``tau = offset + amplitude sin(2 pi f t + phase)`` (Modelica's Sine block names)."""

    axis = mech.ROTATIONAL

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
    """Prescribed angle ``phi`` of ``flange`` relative to the housing (a signal)."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, phi: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, phi, use_support)


class PartialSpeed(mech.Motion):
    """Prescribed speed ``w = der(phi)`` of ``flange``; ``phi0`` fixes the initial angle."""

    axis = mech.ROTATIONAL

    def __init__(self, name: str, phi0: float | None = None, use_support: bool = False) -> None:
        super().__init__(name, phi0, use_support)


class Speed(mech.SignalSpeed):
    """Prescribed speed ``w`` (a signal: number, expression of ``ac.time`` or samples)."""

    axis = mech.ROTATIONAL

    def __init__(
        self, name: str, w: object = 0.0, phi0: float | None = None, use_support: bool = False
    ) -> None:
        super().__init__(name, w, phi0, use_support)


class ConstantSpeed(mech.ConstantSpeed):
    """``w = w_fixed``."""

    axis = mech.ROTATIONAL

    def __init__(
        self,
        name: str,
        w_fixed: float = 1.0,
        phi0: float | None = None,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, w_fixed, phi0, use_support)


class AngleSensor(sensors.PositionSensor):
    """Absolute angle ``phi = flange.phi``; takes no torque (``flange.tau = 0``)."""

    axis = mech.ROTATIONAL


class SpeedSensor(sensors.SpeedSensor):
    """Absolute angular speed ``w = der(flange.phi)``; takes no torque."""

    axis = mech.ROTATIONAL


class AccSensor(sensors.AccSensor):
    """Absolute angular acceleration ``a = der(w)``, ``w = der(flange.phi)``; takes no
    torque."""

    axis = mech.ROTATIONAL


class RelAngleSensor(sensors.RelPositionSensor):
    """Relative angle ``phi_rel = flange_b.phi - flange_a.phi``; takes no torque."""

    axis = mech.ROTATIONAL


class RelSpeedSensor(sensors.RelSpeedSensor):
    """Relative angular speed ``w_rel = der(phi_rel)``, ``phi_rel = flange_b.phi -
    flange_a.phi``; takes no torque."""

    axis = mech.ROTATIONAL


class TorqueSensor(sensors.FlowSensor):
    """The torque ``tau = flange_a.tau`` transmitted from ``flange_a`` to ``flange_b``, a
    rigid link: ``flange_a.phi = flange_b.phi``, ``flange_a.tau + flange_b.tau = 0``."""

    axis = mech.ROTATIONAL


class Brake(ac.Component):
    """Brake: a :class:`Clutch` ``friction`` (its modes and torque are ``friction.*``)
    between the housing and ``flange_a`` = ``flange_b``, one shaft, pressed by the normal
    force ``fn``; the other keywords (``mu_k``, ``mu_s``, ``cgeo``) are the clutch's.
    Sliding, ``tau = mu_k cgeo fn`` against the shaft's speed ``friction.w_rel``; stuck, up
    to ``mu_s cgeo fn``; free while ``fn <= 0``. The housing is fixed, or the connector
    ``support`` with ``use_support=True``."""

    def __init__(
        self, name: str, fn: object = 0.0, use_support: bool = False, **clutch: object
    ) -> None:
        super().__init__(name)
        self.friction = Clutch("friction", fn=fn, **clutch)
        if use_support:
            self.support = self.expose("support", self.friction.flange_a)
        else:
            self.housing = Fixed("housing")
            self.connect(self.housing.flange, self.friction.flange_a)
        self.flange_a = self.expose("flange_a", self.friction.flange_b)
        self.flange_b = self.expose("flange_b", self.friction.flange_b)
