"""1-D translational mechanics (Modelica.Mechanics.Translational names and sign conventions).

Connector :data:`ac.Flange`: position ``s`` (potential) and force ``f`` (flow, positive when
it acts on the component through the flange). Two-flange components have ``flange_a`` and
``flange_b``; one-flange components (sources, :class:`Fixed`) have ``flange``.

Sources act between ``flange`` and a housing. With ``use_support=False`` (the default, as
in Modelica) the housing is fixed at ``s = 0``; with ``use_support=True`` it is the extra
connector ``support``, which takes the reaction force.

The masses (:class:`Mass`, :class:`MassWithStop`, :class:`MassWithStopAndFriction`) are
written in :mod:`components.translational_masses`, the friction elements
(:class:`CoulombFriction`, :class:`SupportFriction`, :class:`Brake`) in
:mod:`components.translational_friction`; their modes are :mod:`components.friction`'s.
All are imported here.

Sensors (:class:`PositionSensor`, :class:`SpeedSensor`, :class:`AccSensor`,
:class:`RelPositionSensor`, :class:`RelSpeedSensor`, :class:`ForceSensor`, written once for
both 1-D domains in :mod:`components.sensors1d`) give their reading as a variable
(``res["vs.v"]``), not a signal connector.
"""

from __future__ import annotations

from . import mechanics1d as mech
from . import sensors1d as sensors
from .translational_friction import Brake as Brake
from .translational_friction import CoulombFriction as CoulombFriction
from .translational_friction import PartialFrictionOnSupport as PartialFrictionOnSupport
from .translational_friction import SupportFriction as SupportFriction
from .translational_masses import Mass as Mass
from .translational_masses import MassWithStop as MassWithStop
from .translational_masses import MassWithStopAndFriction as MassWithStopAndFriction
from .translational_masses import PartialRigid as PartialRigid


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


class PositionSensor(sensors.PositionSensor):
    """Absolute position ``s = flange.s``; takes no force (``flange.f = 0``)."""

    axis = mech.TRANSLATIONAL


class SpeedSensor(sensors.SpeedSensor):
    """Absolute speed ``v = der(flange.s)``; takes no force."""

    axis = mech.TRANSLATIONAL


class AccSensor(sensors.AccSensor):
    """Absolute acceleration ``a = der(v)``, ``v = der(flange.s)``; takes no force."""

    axis = mech.TRANSLATIONAL


class RelPositionSensor(sensors.RelPositionSensor):
    """Relative position ``s_rel = flange_b.s - flange_a.s``; takes no force."""

    axis = mech.TRANSLATIONAL


class RelSpeedSensor(sensors.RelSpeedSensor):
    """Relative speed ``v_rel = der(s_rel)``, ``s_rel = flange_b.s - flange_a.s``; takes no
    force."""

    axis = mech.TRANSLATIONAL


class ForceSensor(sensors.FlowSensor):
    """The force ``f = flange_a.f`` transmitted from ``flange_a`` to ``flange_b``, a rigid
    link: ``flange_a.s = flange_b.s``, ``flange_a.f + flange_b.f = 0``."""

    axis = mech.TRANSLATIONAL
