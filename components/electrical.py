"""Analog electrical components (Modelica.Electrical.Analog names and sign conventions).

A one-port has pins ``p`` and ``n``, voltage ``v = p.v - n.v`` and current ``i = p.i``
flowing from ``p`` through the component to ``n``.

Sensors (:class:`PotentialSensor`, :class:`VoltageSensor`, :class:`CurrentSensor`,
:class:`PowerSensor`) give their reading as a variable (``res["Vm.v"]``), not a signal
connector; a voltage sensor draws no current and a current sensor drops no voltage.
"""

from __future__ import annotations

import casadi as cs

import acausal as ac


class OnePort(ac.Component):
    """Two pins, ``v = p.v - n.v``, ``0 = p.i + n.i``, ``i = p.i``."""

    def __init__(self, name: str, v0: float | None = None, i0: float | None = None) -> None:
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        self.n = self.connector("n", ac.Pin)
        v_start, i_start = self.initial("v0", v0, "V"), self.initial("i0", i0, "A")
        self.v = self.variable("v", start=v_start, fixed=v0 is not None, unit="V")
        self.i = self.variable("i", start=i_start, fixed=i0 is not None, unit="A")
        self.equations(
            self.v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            self.i == self.p.i,
        )


class Resistor(OnePort):
    """``v = R i``."""

    def __init__(self, name: str, R: float = 1.0) -> None:
        super().__init__(name)
        R = self.parameter("R", R, "Ohm", min=0)
        self.equations(self.v == R * self.i)


class Conductor(OnePort):
    """``i = G v``."""

    def __init__(self, name: str, G: float = 1.0) -> None:
        super().__init__(name)
        G = self.parameter("G", G, "S", min=0)
        self.equations(self.i == G * self.v)


class Capacitor(OnePort):
    """``i = C dv/dt``; ``v0`` fixes the initial voltage."""

    def __init__(self, name: str, C: float = 1.0, v0: float | None = None) -> None:
        super().__init__(name, v0=v0)
        C = self.parameter("C", C, "F", min=0)
        self.equations(self.i == C * ac.der(self.v))


class Inductor(OnePort):
    """``v = L di/dt``; ``i0`` fixes the initial current."""

    def __init__(self, name: str, L: float = 1.0, i0: float | None = None) -> None:
        super().__init__(name, i0=i0)
        L = self.parameter("L", L, "H", min=0)
        self.equations(self.v == L * ac.der(self.i))


class Ground(ac.Component):
    """Zero potential at pin ``p``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        self.equations(self.p.v == 0)


class SignalVoltage(OnePort):
    """``v`` follows a signal: a number, an expression of ``ac.time`` or samples ``(t, y)``."""

    def __init__(self, name: str, v: object = 0.0) -> None:
        super().__init__(name)
        self.equations(self.v == ac.signal(v, f"{name}.v"))


class ConstantVoltage(OnePort):
    """``v = V``."""

    def __init__(self, name: str, V: float = 1.0) -> None:
        super().__init__(name)
        self.equations(self.v == self.parameter("V", V, "V"))


class StepVoltage(OnePort):
    """``v = offset + (V if t >= start_time else 0)``."""

    def __init__(
        self, name: str, V: float = 1.0, start_time: float = 0.0, offset: float = 0.0
    ) -> None:
        super().__init__(name)
        V, t0 = self.parameter("V", V, "V"), self.parameter("start_time", start_time, "s")
        self.equations(self.v == self.parameter("offset", offset, "V") + ac.step(V, t0))


class SineVoltage(OnePort):
    """``v = offset + V sin(2 pi f t + phase)``."""

    def __init__(
        self, name: str, V: float = 1.0, f: float = 1.0, phase: float = 0.0, offset: float = 0.0
    ) -> None:
        super().__init__(name)
        sig = ac.sine(
            self.parameter("V", V, "V"),
            self.parameter("f", f, "Hz"),
            self.parameter("phase", phase, "rad"),
        )
        self.equations(self.v == self.parameter("offset", offset, "V") + sig)


class SignalCurrent(OnePort):
    """``i`` follows a signal: a number, an expression of ``ac.time`` or samples ``(t, y)``."""

    def __init__(self, name: str, i: object = 0.0) -> None:
        super().__init__(name)
        self.equations(self.i == ac.signal(i, f"{name}.i"))


class ConstantCurrent(OnePort):
    """``i = I``."""

    def __init__(self, name: str, I: float = 1.0) -> None:  # noqa: E741 - Modelica's name
        super().__init__(name)
        self.equations(self.i == self.parameter("I", I, "A"))


class StepCurrent(OnePort):
    """``i = offset + (I if t >= start_time else 0)``."""

    def __init__(
        self,
        name: str,
        I: float = 1.0,
        start_time: float = 0.0,  # noqa: E741
        offset: float = 0.0,
    ) -> None:
        super().__init__(name)
        I = self.parameter("I", I, "A")  # noqa: E741
        t0 = self.parameter("start_time", start_time, "s")
        self.equations(self.i == self.parameter("offset", offset, "A") + ac.step(I, t0))


class SineCurrent(OnePort):
    """``i = offset + I sin(2 pi f t + phase)``."""

    def __init__(
        self,
        name: str,
        I: float = 1.0,
        f: float = 1.0,
        phase: float = 0.0,  # noqa: E741
        offset: float = 0.0,
    ) -> None:
        super().__init__(name)
        sig = ac.sine(
            self.parameter("I", I, "A"),
            self.parameter("f", f, "Hz"),
            self.parameter("phase", phase, "rad"),
        )
        self.equations(self.i == self.parameter("offset", offset, "A") + sig)


class Diode(OnePort):
    """Exponential diode ``i = Is (exp(v / (N Vt)) - 1) + v / R``.

    Above ``v / (N Vt) = Maxexp`` the exponential continues as its tangent line, so that
    large forward voltages do not overflow. The parallel leakage resistance ``R`` (as in
    Modelica's diode) keeps a reverse-biased diode's conductance from vanishing, which
    would make a circuit of blocking diodes numerically singular.
    """

    def __init__(
        self,
        name: str,
        Is: float = 1e-9,
        N: float = 1.0,
        Vt: float = 0.025852,
        Maxexp: float = 40.0,
        R: float = 1e8,
    ) -> None:
        super().__init__(name)
        Is, N = self.parameter("Is", Is, "A", min=0), self.parameter("N", N, "1", min=0)
        Vt = self.parameter("Vt", Vt, "V", min=0)
        xmax = self.parameter("Maxexp", Maxexp, "1", min=0)
        x = self.v / (N * Vt)
        expo = cs.if_else(x > xmax, cs.exp(xmax) * (1 + x - xmax), cs.exp(cs.fmin(x, xmax)))
        self.equations(self.i == Is * (expo - 1) + self.v / self.parameter("R", R, "Ohm", min=0))


class IdealDiode(OnePort):
    """Ideal diode with on-resistance ``Ron``, off-conductance ``Goff`` and knee ``Vknee``.

    A path parameter ``s`` (current when on, voltage when off) and the relation
    ``off = s < 0`` give ``v = s (off ? 1 : Ron) + Vknee``, ``i = s (off ? Goff : 1) + Goff
    Vknee``; ``s`` is continuous across a switch, located as an event when it changes sign.
    ``s`` declares no unit (a current when on, a voltage when off), so ``ac.check_units``
    leaves it unchecked and checks the equations around it.
    """

    def __init__(
        self, name: str, Ron: float = 1e-5, Goff: float = 1e-5, Vknee: float = 0.0
    ) -> None:
        super().__init__(name)
        Ron = self.parameter("Ron", Ron, "Ohm", min=0)
        Goff = self.parameter("Goff", Goff, "S", min=0)
        Vknee = self.parameter("Vknee", Vknee, "V", min=0)
        self.s = self.variable("s")
        self.off = self.relation(self.s < 0, "off")
        off = self.off > 0.5
        self.equations(
            self.v == self.s * ac.if_else(off, 1.0, Ron) + Vknee,
            self.i == self.s * ac.if_else(off, Goff, 1.0) + Goff * Vknee,
        )


class IdealSwitch(OnePort):
    """Switch driven by a signal ``control`` (number, expression of ``ac.time`` or samples):
    closed (resistance ``Ron``) while ``control > 0.5``, open (conductance ``Goff``)
    otherwise; it switches, with event location, when the control crosses 0.5. A number
    is the parameter ``control`` (a switch held open or closed, changeable by
    ``simulate(params=)``). Its path parameter ``s`` declares no unit, as the
    :class:`IdealDiode`'s."""

    def __init__(
        self, name: str, control: object = 0.0, Ron: float = 1e-5, Goff: float = 1e-5
    ) -> None:
        super().__init__(name)
        Ron = self.parameter("Ron", Ron, "Ohm", min=0)
        Goff = self.parameter("Goff", Goff, "S", min=0)
        if isinstance(control, (int, float)) and not isinstance(control, bool):
            control = self.parameter("control", control, "1")
        signal = ac.signal(control, f"{self.full_name}.control")
        self.s = self.variable("s")
        self.off = self.relation(signal <= 0.5, "off", start=True)
        off = self.off > 0.5
        self.equations(
            self.v == self.s * ac.if_else(off, 1.0, Ron),
            self.i == self.s * ac.if_else(off, Goff, 1.0),
        )


class IdealTransformer(ac.Component):
    """Ideal transformer with turns ratio ``n``: ``v1 = n v2``, ``i2 = -n i1``."""

    def __init__(self, name: str, n: float = 1.0) -> None:
        super().__init__(name)
        self.p1, self.n1 = self.connector("p1", ac.Pin), self.connector("n1", ac.Pin)
        self.p2, self.n2 = self.connector("p2", ac.Pin), self.connector("n2", ac.Pin)
        n = self.parameter("n", n, "1")
        v1, v2 = self.variable("v1", unit="V"), self.variable("v2", unit="V")
        i1, i2 = self.variable("i1", unit="A"), self.variable("i2", unit="A")
        self.equations(
            v1 == self.p1.v - self.n1.v,
            v2 == self.p2.v - self.n2.v,
            self.p1.i + self.n1.i == 0,
            self.p2.i + self.n2.i == 0,
            i1 == self.p1.i,
            i2 == self.p2.i,
            v1 == n * v2,
            i2 == -n * i1,
        )


class EMF(ac.Component):
    """Electromotoric force: ``v = k w``, ``flange.tau = -k i``, ``w = der(flange.phi)``.

    Pins ``p``, ``n``; rotational ``flange``; the housing is fixed.
    """

    def __init__(self, name: str, k: float = 1.0) -> None:
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        self.flange = self.connector("flange", ac.RotFlange)
        k = self.parameter("k", k, "N*m/A")
        self.v, self.i = self.variable("v", unit="V"), self.variable("i", unit="A")
        self.w = self.variable("w", unit="rad/s")
        self.equations(
            self.v == self.p.v - self.n.v,
            self.p.i + self.n.i == 0,
            self.i == self.p.i,
            self.w == ac.der(self.flange.phi),
            self.v == k * self.w,
            self.flange.tau == -k * self.i,
        )


class PotentialSensor(ac.Component):
    """The potential ``phi = p.v`` of pin ``p`` (against ground); draws no current
    (``p.i = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.p = self.connector("p", ac.Pin)
        self.phi = self.variable("phi", unit="V")
        self.equations(self.p.i == 0, self.phi == self.p.v)


class VoltageSensor(ac.Component):
    """The voltage ``v = p.v - n.v``; draws no current (``p.i = n.i = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        self.v = self.variable("v", unit="V")
        self.equations(self.p.i == 0, self.n.i == 0, self.v == self.p.v - self.n.v)


class CurrentSensor(ac.Component):
    """The current ``i = p.i`` from ``p`` through the sensor to ``n``, with no voltage drop
    (``p.v = n.v``, ``p.i + n.i = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.p, self.n = self.connector("p", ac.Pin), self.connector("n", ac.Pin)
        self.i = self.variable("i", unit="A")
        self.equations(self.p.v == self.n.v, self.p.i + self.n.i == 0, self.i == self.p.i)


class PowerSensor(ac.Component):
    """The power ``power = (pv.v - nv.v) pc.i``: a current path ``pc`` -> ``nc`` with no
    voltage drop (``pc.v = nc.v``, ``pc.i + nc.i = 0``) in series with the load, and a
    voltage path ``pv``, ``nv`` that draws no current (``pv.i = nv.i = 0``) across it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.pc, self.nc = self.connector("pc", ac.Pin), self.connector("nc", ac.Pin)
        self.pv, self.nv = self.connector("pv", ac.Pin), self.connector("nv", ac.Pin)
        self.power = self.variable("power", unit="W")
        self.equations(
            self.pc.v == self.nc.v,
            self.pc.i + self.nc.i == 0,
            self.pv.i == 0,
            self.nv.i == 0,
            self.power == (self.pv.v - self.nv.v) * self.pc.i,
        )
