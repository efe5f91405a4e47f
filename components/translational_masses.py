"""Sliding masses (Modelica.Mechanics.Translational names), imported into
:mod:`components.translational`: a free mass, one between hard stops, and one with
Stribeck friction and hard stops (its modes are :func:`components.friction.modes`)."""

from __future__ import annotations

import casadi as cs

import acausal as ac

from . import friction


class PartialRigid(ac.Component):
    """A rigid body of mass ``m`` and length ``L`` sliding along the axis: its flanges sit at
    ``s -/+ L/2``, ``v = der(s)``, ``a = der(v)``; ``s0`` and ``v0`` fix the initial centre
    position and velocity."""

    def __init__(self, name: str, m: float, L: float, s0: float | None, v0: float | None) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        self.m = self.parameter("m", m, "kg", min=0)
        self.L = self.parameter("L", L, "m", min=0)
        s_start, v_start = self.initial("s0", s0, "m"), self.initial("v0", v0, "m/s")
        self.s = self.variable("s", start=s_start, fixed=s0 is not None, unit="m")
        self.v = self.variable("v", start=v_start, fixed=v0 is not None, unit="m/s")
        self.a = self.variable("a", unit="m/s^2")
        self.equations(
            self.flange_a.s == self.s - self.L / 2,
            self.flange_b.s == self.s + self.L / 2,
            self.v == ac.der(self.s),
            self.a == ac.der(self.v),
        )


class Mass(PartialRigid):
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
        super().__init__(name, m, L, s0, v0)
        self.equations(self.m * self.a == self.flange_a.f + self.flange_b.f)


class MassWithStop(PartialRigid):
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
        super().__init__(name, m, L, s0, v0)
        lo, hi = self.parameter("smin", smin, "m"), self.parameter("smax", smax, "m")
        self.sa, self.f_stop = friction.path_parameter(self), self.variable("f_stop", unit="N")
        self.mode = self.discrete("mode", 0.0)
        free = ac.fabs(self.mode) < 0.5
        self.equations(
            self.a == ac.if_else(free, self.sa, 0.0),
            self.f_stop == ac.if_else(free, 0.0, self.sa),
            self.m * self.a == self.flange_a.f + self.flange_b.f + self.f_stop,
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


class MassWithStopAndFriction(PartialRigid):
    """Sliding mass (as :class:`Mass`) with Stribeck friction against the ground and hard
    stops for its ends: ``m der(v) = flange_a.f + flange_b.f - f``.

    Sliding, ``f = sign(v) (F_Coulomb + F_prop |v| + F_Stribeck exp(-fexp |v|))``; stuck,
    ``f`` holds the mass up to ``F_Coulomb + F_Stribeck`` (the force at rest) either way.
    The ends stay within ``[smin, smax]`` (``smin + L/2 <= s <= smax - L/2``): reaching a
    stop is an inelastic impact (``v`` set to 0, the discrete ``stopped`` to +1 at ``smax``,
    -1 at ``smin``), and the mass then rests, stuck, held by the stop however hard it is
    pushed against it, until a force away from the stop breaks it loose.
    """

    def __init__(
        self,
        name: str,
        m: float = 1.0,
        L: float = 0.0,
        smin: float = -25.0,
        smax: float = 25.0,
        F_prop: float = 1.0,
        F_Coulomb: float = 5.0,
        F_Stribeck: float = 10.0,
        fexp: float = 2.0,
        s0: float | None = None,
        v0: float | None = None,
    ) -> None:
        super().__init__(name, m, L, s0, v0)
        lo = self.parameter("smin", smin, "m") + self.L / 2
        hi = self.parameter("smax", smax, "m") - self.L / 2
        coulomb = self.parameter("F_Coulomb", F_Coulomb, "N", min=0)
        prop = self.parameter("F_prop", F_prop, "N*s/m", min=0)
        peak = self.parameter("F_Stribeck", F_Stribeck, "N", min=0)
        fexp = self.parameter("fexp", fexp, "s/m", min=0)
        self.f, self.sa = self.variable("f", unit="N"), friction.path_parameter(self)
        self.stopped = self.discrete("stopped", 0.0)
        fr = friction.modes(
            self,
            self.v,
            self.sa,
            friction.stribeck(coulomb, prop, peak, fexp),
            upper=ac.if_else(self.stopped > 0.5, cs.inf, coulomb + peak),
            lower=ac.if_else(self.stopped < -0.5, -cs.inf, -coulomb - peak),
        )
        self.mode = fr.mode
        self.equations(
            self.m * self.a == self.flange_a.f + self.flange_b.f - self.f,
            self.a == ac.if_else(fr.locked, 0.0, self.sa),
            self.f == ac.if_else(fr.locked, self.sa, fr.sliding),
        )
        hit_max = cs.logic_and(self.s >= hi, self.v > 0)
        hit_min = cs.logic_and(self.s <= lo, self.v < 0)
        hit = cs.logic_or(hit_max, hit_min)
        leaves = cs.logic_or(
            cs.logic_and(self.stopped > 0.5, fr.direction < 0),
            cs.logic_and(self.stopped < -0.5, fr.direction > 0),
        )
        self.event(
            [ac.if_else(ac.fabs(self.stopped) < 0.5, ac.fmin(hi - self.s, self.s - lo), 0.0)],
            {
                self.stopped: ac.if_else(
                    hit, hit_max - hit_min, ac.if_else(leaves, 0, self.stopped)
                ),
                self.v: ac.if_else(hit, 0.0, self.v),
                self.s: ac.if_else(hit_max, hi, ac.if_else(hit_min, lo, self.s)),
            },
        )
