"""Rotational friction elements (Modelica.Mechanics.Rotational names), imported into
:mod:`components.rotational`. Their stuck / sliding / free modes are
:func:`components.friction.modes`; each element writes its own equations."""

from __future__ import annotations

import casadi as cs

import acausal as ac

from . import friction


class PartialFrictionBetweenFlanges(ac.Component):
    """Friction between ``flange_a`` and ``flange_b``: ``phi_rel = flange_b.phi -
    flange_a.phi``, ``w_rel = der(phi_rel)``, ``flange_b.tau = tau = -flange_a.tau``; with
    ``stick_slip``, also ``a_rel = der(w_rel)`` and the path parameter ``sa``."""

    def __init__(self, name: str, stick_slip: bool = True) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        self.phi_rel = self.variable("phi_rel", unit="rad")
        self.w_rel = self.variable("w_rel", unit="rad/s")
        self.tau = self.variable("tau", unit="N*m")
        self.equations(
            self.phi_rel == self.flange_b.phi - self.flange_a.phi,
            self.w_rel == ac.der(self.phi_rel),
            self.flange_b.tau == self.tau,
            self.flange_a.tau == -self.tau,
        )
        if stick_slip:
            self.a_rel = self.variable("a_rel", unit="rad/s^2")
            self.sa = friction.path_parameter(self)
            self.equations(self.a_rel == ac.der(self.w_rel))


class CoulombFriction(PartialFrictionBetweenFlanges):
    """Dry friction between the flanges: sliding, ``tau = tau_coulomb`` against ``w_rel``;
    stuck, ``tau`` is whatever holds the flanges together, up to ``tau_static`` (default
    ``tau_coulomb``) either way. ``smooth=True`` gives instead the regularized ``tau =
    tau_coulomb tanh(w_rel / w_smooth)`` (no events, differentiable: for learning)."""

    def __init__(
        self,
        name: str,
        tau_coulomb: float = 1.0,
        tau_static: float | None = None,
        smooth: bool = False,
        w_smooth: float = 1e-3,
    ) -> None:
        super().__init__(name, stick_slip=not smooth)
        kinetic = self.parameter("tau_coulomb", tau_coulomb, "N*m", min=0)
        if smooth:
            w_smooth = self.parameter("w_smooth", w_smooth, "rad/s", min=0)
            self.equations(self.tau == kinetic * ac.tanh(self.w_rel / w_smooth))
            return
        static = self.parameter(
            "tau_static", kinetic if tau_static is None else tau_static, "N*m", min=0
        )
        fr = friction.modes(self, self.w_rel, self.sa, lambda w: kinetic, upper=static)
        self.mode = fr.mode
        self.equations(
            self.a_rel == ac.if_else(fr.locked, 0.0, self.sa),
            self.tau == ac.if_else(fr.locked, self.sa, fr.sliding),
        )


class Clutch(PartialFrictionBetweenFlanges):
    """Friction clutch pressed by the normal force ``fn`` (a signal: number, expression of
    ``ac.time`` or samples): sliding, ``tau = mu_k cgeo fn`` against ``w_rel`` (``mu_k`` a
    number, or samples ``[(w, mu), ...]`` of ``mu(|w_rel|)``, Modelica's ``mu_pos``); stuck,
    up to ``mu_s cgeo fn`` (Modelica's ``peak mu(0)``); free (``tau = 0``, mode 2) while
    ``fn <= 0``."""

    freewheel = False  # a freewheel in parallel: holds any torque backward (OneWayClutch)

    def __init__(
        self,
        name: str,
        fn: object = 0.0,
        mu_k: object = 0.5,
        mu_s: float | None = None,
        cgeo: float = 1.0,
    ) -> None:
        super().__init__(name)
        self.fn = self.variable("fn", unit="N")
        mu, mu_s = friction.coefficients(self, mu_k, mu_s)
        cgeo = self.parameter("cgeo", cgeo, "m", min=0)
        pressed = ac.fmax(self.fn, 0.0)
        fr = friction.modes(
            self,
            self.w_rel,
            self.sa,
            lambda w: mu(w) * cgeo * pressed,
            upper=mu_s * cgeo * pressed,
            lower=-cs.inf if self.freewheel else None,
            normal=None if self.freewheel else self.fn,
        )
        self.mode = fr.mode
        self.equations(
            self.fn == ac.signal(fn, f"{self.full_name}.fn"),
            self.a_rel == ac.if_else(fr.locked, 0.0, self.sa),
            self.tau == ac.if_else(fr.locked, self.sa, fr.sliding),
        )


class OneWayClutch(Clutch):
    """A :class:`Clutch` in parallel with a freewheel that locks when ``flange_b`` would
    turn backward against ``flange_a`` (``w_rel < 0``): stuck, it holds any torque backward
    and up to ``mu_s cgeo fn`` forward; sliding forward, ``tau = mu_k cgeo fn``. With
    ``fn <= 0`` it is the freewheel alone (turns forward freely; no free mode). Start it
    with ``w_rel >= 0``."""

    freewheel = True


class BearingFriction(ac.Component):
    """Coulomb friction in a bearing: ``flange_a`` and ``flange_b`` are one shaft at ``phi``
    relative to the housing, which takes the friction torque ``tau = flange_a.tau +
    flange_b.tau``; ``w = der(phi)``, ``a = der(w)``. Sliding, ``tau = tau_pos(|w|)``
    against ``w`` from the samples ``tau_pos = [(w, tau), ...]`` (linear, extrapolated
    through the last two); stuck, up to ``peak tau_pos(0)``. The housing is fixed at 0, or
    the connector ``support`` with ``use_support=True`` (``support.tau = -tau``)."""

    def __init__(
        self,
        name: str,
        tau_pos: object = ((0.0, 1.0),),
        peak: float = 1.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        self.phi, self.w = self.variable("phi", unit="rad"), self.variable("w", unit="rad/s")
        self.a, self.tau = self.variable("a", unit="rad/s^2"), self.variable("tau", unit="N*m")
        self.sa = friction.path_parameter(self)
        housing: cs.SX | float = 0.0
        if use_support:
            self.support = self.connector("support", ac.RotFlange)
            housing = self.support.phi
            self.equations(self.support.tau == -self.tau)
        peak = self.parameter("peak", peak, "1", min=1)
        law = friction.tabulated(tau_pos, f"{self.full_name}.tau_pos")
        fr = friction.modes(self, self.w, self.sa, law, upper=peak * law(cs.SX(0.0)))
        self.mode = fr.mode
        self.equations(
            self.phi == self.flange_a.phi - housing,
            self.flange_b.phi == self.flange_a.phi,
            self.w == ac.der(self.phi),
            self.a == ac.der(self.w),
            self.flange_a.tau + self.flange_b.tau == self.tau,
            self.a == ac.if_else(fr.locked, 0.0, self.sa),
            self.tau == ac.if_else(fr.locked, self.sa, fr.sliding),
        )
