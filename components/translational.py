"""1-D translational mechanics (Modelica.Mechanics.Translational names and sign conventions).

Connector :data:`ac.Flange`: position ``s`` (potential) and force ``f`` (flow, positive when
it acts on the component through the flange). Two-flange components have ``flange_a`` and
``flange_b``; one-flange components (sources, :class:`Fixed`) have ``flange``.

Here: the compliant elements (:class:`Spring`, :class:`Damper`, :class:`SpringDamper`, each
a :class:`PartialCompliant` stating its own force law) and :class:`Fixed`. Imported from the
modules beside it, as Modelica's packages: the masses (:class:`Mass`, :class:`MassWithStop`,
:class:`MassWithStopAndFriction`) from :mod:`components.translational_masses`, the sources
(:class:`Force`, :class:`ConstantForce`, :class:`ForceStep`, :class:`SineForce`,
:class:`Position`, :class:`Speed`, :class:`ConstantSpeed`) from
:mod:`components.translational_sources`, the sensors (:class:`PositionSensor`,
:class:`SpeedSensor`, :class:`AccSensor`, :class:`RelPositionSensor`,
:class:`RelSpeedSensor`, :class:`ForceSensor`; the reading is a variable, ``res["vs.v"]``,
not a signal connector) from :mod:`components.translational_sensors`, the friction elements
(:class:`CoulombFriction`, :class:`SupportFriction`, :class:`Brake`; their modes are
:mod:`components.friction`'s) from :mod:`components.translational_friction`.

Sources act between ``flange`` and a housing. With ``use_support=False`` (the default, as
in Modelica) the housing is fixed at ``s = 0``; with ``use_support=True`` it is the extra
connector ``support``, which takes the reaction force.
"""

from __future__ import annotations

import acausal as ac

from .translational_friction import Brake as Brake
from .translational_friction import CoulombFriction as CoulombFriction
from .translational_friction import PartialFrictionOnSupport as PartialFrictionOnSupport
from .translational_friction import SupportFriction as SupportFriction
from .translational_masses import Mass as Mass
from .translational_masses import MassWithStop as MassWithStop
from .translational_masses import MassWithStopAndFriction as MassWithStopAndFriction
from .translational_masses import PartialRigid as PartialRigid
from .translational_sensors import AccSensor as AccSensor
from .translational_sensors import ForceSensor as ForceSensor
from .translational_sensors import PositionSensor as PositionSensor
from .translational_sensors import RelPositionSensor as RelPositionSensor
from .translational_sensors import RelSpeedSensor as RelSpeedSensor
from .translational_sensors import SpeedSensor as SpeedSensor
from .translational_sources import ConstantForce as ConstantForce
from .translational_sources import ConstantSpeed as ConstantSpeed
from .translational_sources import Force as Force
from .translational_sources import ForceStep as ForceStep
from .translational_sources import PartialForce as PartialForce
from .translational_sources import PartialSpeed as PartialSpeed
from .translational_sources import Position as Position
from .translational_sources import SineForce as SineForce
from .translational_sources import Speed as Speed


class PartialCompliant(ac.Component):
    """Massless two-flange element: ``s_rel = flange_b.s - flange_a.s``,
    ``flange_b.f = f``, ``flange_a.f = -f``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        self.s_rel = self.variable("s_rel", unit="m")
        self.f = self.variable("f", unit="N")
        self.equations(
            self.s_rel == self.flange_b.s - self.flange_a.s,
            self.flange_b.f == self.f,
            self.flange_a.f == -self.f,
        )


class Spring(PartialCompliant):
    """Linear spring: ``f = c (s_rel - s_rel0)``."""

    def __init__(self, name: str, c: float = 1.0, s_rel0: float = 0.0) -> None:
        super().__init__(name)
        c = self.parameter("c", c, "N/m", min=0)
        s_rel0 = self.parameter("s_rel0", s_rel0, "m")
        self.equations(self.f == c * (self.s_rel - s_rel0))


class Damper(PartialCompliant):
    """Linear damper: ``f = d v_rel``, ``v_rel = der(s_rel)``."""

    def __init__(self, name: str, d: float = 1.0) -> None:
        super().__init__(name)
        d = self.parameter("d", d, "N*s/m", min=0)
        self.v_rel = self.variable("v_rel", unit="m/s")
        self.equations(
            self.v_rel == ac.der(self.s_rel),
            self.f == d * self.v_rel,
        )


class SpringDamper(PartialCompliant):
    """Spring and damper in parallel: ``f = f_c + f_d``, ``f_c = c (s_rel - s_rel0)``,
    ``f_d = d v_rel``, ``v_rel = der(s_rel)``."""

    def __init__(self, name: str, c: float = 1.0, d: float = 1.0, s_rel0: float = 0.0) -> None:
        super().__init__(name)
        c = self.parameter("c", c, "N/m", min=0)
        d = self.parameter("d", d, "N*s/m", min=0)
        s_rel0 = self.parameter("s_rel0", s_rel0, "m")
        self.v_rel = self.variable("v_rel", unit="m/s")
        self.f_c = self.variable("f_c", unit="N")
        self.f_d = self.variable("f_d", unit="N")
        self.equations(
            self.v_rel == ac.der(self.s_rel),
            self.f_c == c * (self.s_rel - s_rel0),
            self.f_d == d * self.v_rel,
            self.f == self.f_c + self.f_d,
        )


class Fixed(ac.Component):
    """A flange held at position ``s0``: ``flange.s = s0``."""

    def __init__(self, name: str, s0: float = 0.0) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        s0 = self.parameter("s0", s0, "m")
        self.equations(self.flange.s == s0)
