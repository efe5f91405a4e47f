"""What 1-D translational and rotational mechanics share, written once for both.

An :class:`Axis` names a domain's connector variables (position ``s`` / angle ``phi``, force
``f`` / torque ``tau``, speed ``v`` / ``w``); the compliant elements below declare their
variables under those names, so ``translational.Damper`` has ``s_rel``, ``v_rel`` and ``f``
while ``rotational.Damper`` has ``phi_rel``, ``w_rel`` and ``tau``. The units come from
the domain as well: the connector's position and flow units (``m``, ``N`` / ``rad``,
``N*m``) and the ones derived from them (:attr:`Axis.rate_unit`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as cs

import acausal as ac


@dataclass(frozen=True)
class Axis:
    """Names of a 1-D mechanical domain; its units are the connector's (position ``m`` or
    ``rad``, flow ``N`` or ``N*m``) and those derived from them."""

    connector: ac.ConnectorType
    position: str
    flow: str
    rate: str
    effort: str  # what the flow is called in parameter names: "force", "torque"

    @property
    def position_unit(self) -> str:
        return self.connector.units[self.position]

    @property
    def flow_unit(self) -> str:
        return self.connector.units[self.flow]

    @property
    def rate_unit(self) -> str:
        """Position per second: ``m/s``, ``rad/s``."""
        return f"{self.position_unit}/s"

    @property
    def acceleration_unit(self) -> str:
        """``m/s^2``, ``rad/s^2``."""
        return f"{self.position_unit}/s^2"

    @property
    def stiffness_unit(self) -> str:
        """Flow per position: ``N/m``, ``N*m/rad``."""
        return f"{self.flow_unit}/{self.position_unit}"

    @property
    def damping_unit(self) -> str:
        """Flow per rate: ``N*s/m``, ``N*m*s/rad``."""
        return f"{self.flow_unit}*s/{self.position_unit}"


TRANSLATIONAL = Axis(ac.Flange, "s", "f", "v", "force")
ROTATIONAL = Axis(ac.RotFlange, "phi", "tau", "w", "torque")


class Compliant(ac.Component):
    """Massless two-flange element: ``<pos>_rel = flange_b.<pos> - flange_a.<pos>``,
    ``flange_b.<flow> = <flow>``, ``flange_a.<flow> = -<flow>``."""

    axis: Axis

    def __init__(self, name: str) -> None:
        super().__init__(name)
        ax = self.axis
        self.rel = relative_position(self, ax)
        self.load = self.variable(ax.flow, unit=ax.flow_unit)
        setattr(self, ax.flow, self.load)
        self.equations(
            getattr(self.flange_b, ax.flow) == self.load,
            getattr(self.flange_a, ax.flow) == -self.load,
        )

    def relative_rate(self) -> cs.SX:
        """Declare ``<rate>_rel = der(<pos>_rel)`` and return it."""
        return derivative(self, f"{self.axis.rate}_rel", self.rel, self.axis.rate_unit)


def relative_position(comp: ac.Component, ax: Axis) -> cs.SX:
    """Declare ``comp``'s ``flange_a`` and ``flange_b`` and its variable
    ``<pos>_rel = flange_b.<pos> - flange_a.<pos>`` (also its attribute); return it."""
    comp.flange_a = comp.connector("flange_a", ax.connector)
    comp.flange_b = comp.connector("flange_b", ax.connector)
    rel = comp.variable(f"{ax.position}_rel", unit=ax.position_unit)
    setattr(comp, f"{ax.position}_rel", rel)
    comp.equations(rel == getattr(comp.flange_b, ax.position) - getattr(comp.flange_a, ax.position))
    return rel


def derivative(comp: ac.Component, name: str, x: cs.SX, unit: str) -> cs.SX:
    """Declare the variable ``name = der(x)`` of ``comp`` in ``unit`` (also its attribute
    ``name``) and return it."""
    rate = comp.variable(name, unit=unit)
    setattr(comp, name, rate)
    comp.equations(rate == ac.der(x))
    return rate


class LinearSpring(Compliant):
    """``<flow> = c (<pos>_rel - <pos>_rel0)``."""

    def __init__(self, name: str, c: float, rel0: float) -> None:
        super().__init__(name)
        ax = self.axis
        c = self.parameter("c", c, ax.stiffness_unit, min=0)
        rel0 = self.parameter(f"{ax.position}_rel0", rel0, ax.position_unit)
        self.equations(self.load == c * (self.rel - rel0))


class LinearDamper(Compliant):
    """``<flow> = d <rate>_rel``."""

    def __init__(self, name: str, d: float) -> None:
        super().__init__(name)
        d = self.parameter("d", d, self.axis.damping_unit, min=0)
        self.equations(self.load == d * self.relative_rate())


class LinearSpringDamper(Compliant):
    """Spring and damper in parallel: ``<flow> = <flow>_c + <flow>_d`` with
    ``<flow>_c = c (<pos>_rel - <pos>_rel0)`` and ``<flow>_d = d <rate>_rel``."""

    def __init__(self, name: str, c: float, d: float, rel0: float) -> None:
        super().__init__(name)
        ax = self.axis
        flow = ax.flow
        c = self.parameter("c", c, ax.stiffness_unit, min=0)
        d = self.parameter("d", d, ax.damping_unit, min=0)
        rel0 = self.parameter(f"{ax.position}_rel0", rel0, ax.position_unit)
        rate = self.relative_rate()
        spring = self.variable(f"{flow}_c", unit=ax.flow_unit)
        damper = self.variable(f"{flow}_d", unit=ax.flow_unit)
        setattr(self, f"{flow}_c", spring)
        setattr(self, f"{flow}_d", damper)
        self.equations(
            spring == c * (self.rel - rel0),
            damper == d * rate,
            self.load == spring + damper,
        )


class Fixed(ac.Component):
    """A flange held at ``<pos>0``."""

    axis: Axis

    def __init__(self, name: str, position: float) -> None:
        super().__init__(name)
        ax = self.axis
        self.flange = self.connector("flange", ax.connector)
        fixed = self.parameter(f"{ax.position}0", position, ax.position_unit)
        self.equations(getattr(self.flange, ax.position) == fixed)


class OneFlange(ac.Component):
    """``flange`` and, with ``use_support``, a housing ``support`` that takes the reaction
    ``support.<flow> = -flange.<flow>``; without it the housing is fixed at 0."""

    axis: Axis

    def __init__(self, name: str, use_support: bool) -> None:
        super().__init__(name)
        ax = self.axis
        self.flange = self.connector("flange", ax.connector)
        self.housing: cs.SX | float = 0.0
        if use_support:
            self.support = self.connector("support", ax.connector)
            self.housing = getattr(self.support, ax.position)
            self.equations(getattr(self.support, ax.flow) == -getattr(self.flange, ax.flow))


class Effort(OneFlange):
    """A force or torque ``<flow>`` acting on ``flange`` in the positive direction:
    ``flange.<flow> = -<flow>``."""

    def __init__(self, name: str, use_support: bool) -> None:
        super().__init__(name, use_support)
        flow = self.axis.flow
        self.effort = self.variable(flow, unit=self.axis.flow_unit)
        setattr(self, flow, self.effort)
        self.equations(getattr(self.flange, flow) == -self.effort)


class SignalEffort(Effort):
    """``<flow>`` follows a signal: a number, an expression of ``ac.time`` or samples."""

    def __init__(self, name: str, value: object, use_support: bool) -> None:
        super().__init__(name, use_support)
        label = f"{self.full_name}.{self.axis.flow}"
        self.equations(self.effort == ac.signal(value, label))


class ConstantEffort(Effort):
    """``<flow> = <flow>_constant``."""

    def __init__(self, name: str, value: float, use_support: bool) -> None:
        super().__init__(name, use_support)
        ax = self.axis
        self.equations(self.effort == self.parameter(f"{ax.flow}_constant", value, ax.flow_unit))


class StepEffort(Effort):
    """``<flow> = offset_<effort> + (step_<effort> if t >= start_time else 0)``."""

    def __init__(
        self, name: str, height: float, offset: float, start_time: float, use_support: bool
    ) -> None:
        super().__init__(name, use_support)
        word, unit = self.axis.effort, self.axis.flow_unit
        height = self.parameter(f"step_{word}", height, unit)
        t0 = self.parameter("start_time", start_time, "s")
        offset = self.parameter(f"offset_{word}", offset, unit)
        self.equations(self.effort == offset + ac.step(height, t0))


class SineEffort(Effort):
    """``<flow> = offset + amplitude sin(2 pi f t + phase)``; the frequency parameter is
    ``freq`` where ``f`` already names the force."""

    def __init__(
        self,
        name: str,
        amplitude: float,
        f: float,
        phase: float,
        offset: float,
        use_support: bool,
    ) -> None:
        super().__init__(name, use_support)
        freq = "freq" if self.axis.flow == "f" else "f"
        unit = self.axis.flow_unit
        sig = ac.sine(
            self.parameter("amplitude", amplitude, unit),
            self.parameter(freq, f, "Hz"),
            self.parameter("phase", phase, "rad"),
        )
        self.equations(self.effort == self.parameter("offset", offset, unit) + sig)


class Position(OneFlange):
    """Prescribed position of ``flange`` relative to the housing: ``<pos> = <pos>_ref(t)``.

    The signal is differentiated symbolically by index reduction, so an expression of
    ``ac.time`` should be smooth; samples ``(t, y)`` become a C2 cubic spline
    (:func:`acausal.spline`). Driving a mass or inertia this way gives index 3.
    """

    def __init__(self, name: str, value: object, use_support: bool) -> None:
        super().__init__(name, use_support)
        pos = self.axis.position
        self.prescribed = self.variable(pos, unit=self.axis.position_unit)
        setattr(self, pos, self.prescribed)
        self.equations(
            self.prescribed == getattr(self.flange, pos) - self.housing,
            self.prescribed == ac.signal(value, f"{self.full_name}.{pos}", smooth=True),
        )


class Motion(OneFlange):
    """Prescribed speed ``<rate> = der(<pos>)`` of ``flange`` relative to the housing;
    ``<pos>0`` fixes the initial position (else the rest of the system determines it)."""

    def __init__(self, name: str, start: float | None, use_support: bool) -> None:
        super().__init__(name, use_support)
        ax = self.axis
        position = self.variable(
            ax.position,
            start=self.initial(f"{ax.position}0", start, ax.position_unit),
            fixed=start is not None,
            unit=ax.position_unit,
        )
        self.speed = self.variable(ax.rate, unit=ax.rate_unit)
        setattr(self, ax.position, position)
        setattr(self, ax.rate, self.speed)
        self.equations(
            position == getattr(self.flange, ax.position) - self.housing,
            self.speed == ac.der(position),
        )


class SignalSpeed(Motion):
    """``<rate>`` follows a signal: a number, an expression of ``ac.time`` or samples."""

    def __init__(self, name: str, value: object, start: float | None, use_support: bool) -> None:
        super().__init__(name, start, use_support)
        self.equations(self.speed == ac.signal(value, f"{self.full_name}.{self.axis.rate}"))


class ConstantSpeed(Motion):
    """``<rate> = <rate>_fixed``."""

    def __init__(self, name: str, value: float, start: float | None, use_support: bool) -> None:
        super().__init__(name, start, use_support)
        ax = self.axis
        self.equations(self.speed == self.parameter(f"{ax.rate}_fixed", value, ax.rate_unit))
