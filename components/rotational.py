"""1-D rotational mechanics (Modelica.Mechanics.Rotational names and sign conventions).

Connector :data:`ac.RotFlange`: angle ``phi`` (potential) and torque ``tau`` (flow, positive
when it acts on the component through the flange). Two-flange components have ``flange_a``
and ``flange_b``; one-flange components (sources, :class:`Fixed`) have ``flange``.

Here: :class:`Inertia`, the compliant elements (:class:`Spring`, :class:`Damper`,
:class:`SpringDamper`, each a :class:`PartialCompliant` stating its own torque law),
:class:`IdealGear`, :class:`Fixed` and :class:`Brake`. Imported from the modules beside
it, as Modelica's packages: the sources (:class:`Torque`, :class:`ConstantTorque`,
:class:`TorqueStep`, :class:`SineTorque`, :class:`Position`, :class:`Speed`,
:class:`ConstantSpeed`) from :mod:`components.rotational_sources`, the sensors
(:class:`AngleSensor`, :class:`SpeedSensor`, :class:`AccSensor`, :class:`RelAngleSensor`,
:class:`RelSpeedSensor`, :class:`TorqueSensor`; the reading is a variable, ``res["ws.w"]``,
not a signal connector) from :mod:`components.rotational_sensors`, the friction elements
(:class:`CoulombFriction`, :class:`Clutch`, :class:`OneWayClutch`,
:class:`BearingFriction`; their modes are :mod:`components.friction`'s) from
:mod:`components.rotational_friction`.

Sources and the ideal gear act against a housing. With ``use_support=False`` (the default,
as in Modelica) the housing is fixed at ``phi = 0``; with ``use_support=True`` it is the
extra connector ``support``, which takes the reaction torque.
"""

from __future__ import annotations

import casadi as cs

import acausal as ac

from .rotational_friction import BearingFriction as BearingFriction
from .rotational_friction import Clutch as Clutch
from .rotational_friction import CoulombFriction as CoulombFriction
from .rotational_friction import OneWayClutch as OneWayClutch
from .rotational_friction import PartialFrictionBetweenFlanges as PartialFrictionBetweenFlanges
from .rotational_sensors import AccSensor as AccSensor
from .rotational_sensors import AngleSensor as AngleSensor
from .rotational_sensors import RelAngleSensor as RelAngleSensor
from .rotational_sensors import RelSpeedSensor as RelSpeedSensor
from .rotational_sensors import SpeedSensor as SpeedSensor
from .rotational_sensors import TorqueSensor as TorqueSensor
from .rotational_sources import ConstantSpeed as ConstantSpeed
from .rotational_sources import ConstantTorque as ConstantTorque
from .rotational_sources import PartialSpeed as PartialSpeed
from .rotational_sources import PartialTorque as PartialTorque
from .rotational_sources import Position as Position
from .rotational_sources import SineTorque as SineTorque
from .rotational_sources import Speed as Speed
from .rotational_sources import Torque as Torque
from .rotational_sources import TorqueStep as TorqueStep


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


class PartialCompliant(ac.Component):
    """Massless two-flange element: ``phi_rel = flange_b.phi - flange_a.phi``,
    ``flange_b.tau = tau``, ``flange_a.tau = -tau``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        self.phi_rel = self.variable("phi_rel", unit="rad")
        self.tau = self.variable("tau", unit="N*m")
        self.equations(
            self.phi_rel == self.flange_b.phi - self.flange_a.phi,
            self.flange_b.tau == self.tau,
            self.flange_a.tau == -self.tau,
        )


class Spring(PartialCompliant):
    """Linear torsion spring: ``tau = c (phi_rel - phi_rel0)``."""

    def __init__(self, name: str, c: float = 1.0, phi_rel0: float = 0.0) -> None:
        super().__init__(name)
        c = self.parameter("c", c, "N*m/rad", min=0)
        phi_rel0 = self.parameter("phi_rel0", phi_rel0, "rad")
        self.equations(self.tau == c * (self.phi_rel - phi_rel0))


class Damper(PartialCompliant):
    """Linear damper: ``tau = d w_rel``, ``w_rel = der(phi_rel)``."""

    def __init__(self, name: str, d: float = 1.0) -> None:
        super().__init__(name)
        d = self.parameter("d", d, "N*m*s/rad", min=0)
        self.w_rel = self.variable("w_rel", unit="rad/s")
        self.equations(
            self.w_rel == ac.der(self.phi_rel),
            self.tau == d * self.w_rel,
        )


class SpringDamper(PartialCompliant):
    """Spring and damper in parallel: ``tau = tau_c + tau_d``, ``tau_c = c (phi_rel -
    phi_rel0)``, ``tau_d = d w_rel``, ``w_rel = der(phi_rel)``."""

    def __init__(self, name: str, c: float = 1.0, d: float = 1.0, phi_rel0: float = 0.0) -> None:
        super().__init__(name)
        c = self.parameter("c", c, "N*m/rad", min=0)
        d = self.parameter("d", d, "N*m*s/rad", min=0)
        phi_rel0 = self.parameter("phi_rel0", phi_rel0, "rad")
        self.w_rel = self.variable("w_rel", unit="rad/s")
        self.tau_c = self.variable("tau_c", unit="N*m")
        self.tau_d = self.variable("tau_d", unit="N*m")
        self.equations(
            self.w_rel == ac.der(self.phi_rel),
            self.tau_c == c * (self.phi_rel - phi_rel0),
            self.tau_d == d * self.w_rel,
            self.tau == self.tau_c + self.tau_d,
        )


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


class Fixed(ac.Component):
    """A flange held at angle ``phi0``: ``flange.phi = phi0``."""

    def __init__(self, name: str, phi0: float = 0.0) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        phi0 = self.parameter("phi0", phi0, "rad")
        self.equations(self.flange.phi == phi0)


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
