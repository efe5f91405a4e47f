"""Translational friction elements (Modelica.Mechanics.Translational names), imported into
:mod:`components.translational`. Their stuck / sliding / free modes are
:func:`components.friction.modes`; each element writes its own equations."""

from __future__ import annotations

import casadi as cs

import acausal as ac

from . import friction


class CoulombFriction(ac.Component):
    """Dry friction between ``flange_a`` and ``flange_b``: ``s_rel = flange_b.s -
    flange_a.s``, ``v_rel = der(s_rel)``, ``flange_b.f = f = -flange_a.f``.

    Sliding, ``f = f_coulomb`` against ``v_rel``; stuck, ``f`` is whatever holds the flanges
    together, up to ``f_static`` (default ``f_coulomb``) either way. ``smooth=True`` gives
    instead the regularized ``f = f_coulomb tanh(v_rel / v_smooth)`` (no events,
    differentiable: for learning).
    """

    def __init__(
        self,
        name: str,
        f_coulomb: float = 1.0,
        f_static: float | None = None,
        smooth: bool = False,
        v_smooth: float = 1e-3,
    ) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        self.s_rel, self.v_rel = (
            self.variable("s_rel", unit="m"),
            self.variable("v_rel", unit="m/s"),
        )
        self.f = self.variable("f", unit="N")
        f_coulomb = self.parameter("f_coulomb", f_coulomb, "N", min=0)
        self.equations(
            self.s_rel == self.flange_b.s - self.flange_a.s,
            self.v_rel == ac.der(self.s_rel),
            self.flange_b.f == self.f,
            self.flange_a.f == -self.f,
        )
        if smooth:
            v_smooth = self.parameter("v_smooth", v_smooth, "m/s", min=0)
            self.equations(self.f == f_coulomb * ac.tanh(self.v_rel / v_smooth))
            return
        f_static = self.parameter(
            "f_static", f_coulomb if f_static is None else f_static, "N", min=0
        )
        self.a_rel, self.sa = self.variable("a_rel", unit="m/s^2"), friction.path_parameter(self)
        fr = friction.modes(self, self.v_rel, self.sa, lambda v: f_coulomb, upper=f_static)
        self.mode = fr.mode
        self.equations(
            self.a_rel == ac.der(self.v_rel),
            self.a_rel == ac.if_else(fr.locked, 0.0, self.sa),
            self.f == ac.if_else(fr.locked, self.sa, fr.sliding),
        )


class PartialFrictionOnSupport(ac.Component):
    """``flange_a`` and ``flange_b`` rigidly together at ``s`` relative to the housing,
    which takes the friction force ``f``: ``flange_a.f + flange_b.f = f``, ``v = der(s)``,
    ``a = der(v)``. The housing is fixed at 0, or the connector ``support`` with
    ``use_support=True`` (``support.f = -f``)."""

    def __init__(self, name: str, use_support: bool) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        housing: cs.SX | float = 0.0
        self.s, self.v = self.variable("s", unit="m"), self.variable("v", unit="m/s")
        self.a, self.f = self.variable("a", unit="m/s^2"), self.variable("f", unit="N")
        self.sa = friction.path_parameter(self)
        if use_support:
            self.support = self.connector("support", ac.Flange)
            housing = self.support.s
            self.equations(self.support.f == -self.f)
        self.equations(
            self.s == self.flange_a.s - housing,
            self.flange_b.s == self.flange_a.s,
            self.v == ac.der(self.s),
            self.a == ac.der(self.v),
            self.flange_a.f + self.flange_b.f == self.f,
        )


class SupportFriction(PartialFrictionOnSupport):
    """Coulomb friction between the flanges (one body) and the housing: sliding, ``f =
    f_pos(|v|)`` against ``v`` from the samples ``f_pos = [(v, f), ...]`` (linear, extrapolated
    through the last two); stuck, up to ``peak f_pos(0)``."""

    def __init__(
        self,
        name: str,
        f_pos: object = ((0.0, 1.0),),
        peak: float = 1.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, use_support)
        peak = self.parameter("peak", peak, "1", min=1)
        law = friction.tabulated(f_pos, f"{self.full_name}.f_pos")
        fr = friction.modes(self, self.v, self.sa, law, upper=peak * law(cs.SX(0.0)))
        self.mode = fr.mode
        self.equations(
            self.a == ac.if_else(fr.locked, 0.0, self.sa),
            self.f == ac.if_else(fr.locked, self.sa, fr.sliding),
        )


class Brake(PartialFrictionOnSupport):
    """Brake between the flanges (one body) and the housing, pressed by the normal force
    ``fn`` (a signal: number, expression of ``ac.time`` or samples): sliding, ``f = mu_k
    cgeo fn`` against ``v`` (``mu_k`` a number, or samples ``[(v, mu), ...]`` of ``mu(|v|)``);
    stuck, up to ``mu_s cgeo fn``; free (``f = 0``, mode 2) while ``fn <= 0``."""

    def __init__(
        self,
        name: str,
        fn: object = 0.0,
        mu_k: object = 0.5,
        mu_s: float | None = None,
        cgeo: float = 1.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, use_support)
        self.fn = self.variable("fn", unit="N")
        mu, mu_s = friction.coefficients(self, mu_k, mu_s)
        cgeo = self.parameter("cgeo", cgeo, "1", min=0)
        static = mu_s * cgeo * self.fn
        fr = friction.modes(
            self, self.v, self.sa, lambda v: mu(v) * cgeo * self.fn, static, normal=self.fn
        )
        self.mode = fr.mode
        self.equations(
            self.fn == ac.signal(fn, f"{self.full_name}.fn"),
            self.a == ac.if_else(fr.locked, 0.0, self.sa),
            self.f == ac.if_else(fr.locked, self.sa, fr.sliding),
        )
