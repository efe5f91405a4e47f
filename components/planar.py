"""Planar multibody mechanics (in the spirit of Modelica's PlanarMechanics library).

Connector :data:`ac.Frame`: position ``x``, ``y`` and angle ``phi`` (potentials) and force
``fx``, ``fy`` and torque ``tau`` (flows). A flow is the force or torque acting *on* the
component through the frame, resolved in the world's axes; at a connection the frames
coincide and the forces sum to zero. ``R(phi)`` below is the rotation by ``phi``
(counter-clockwise); a vector fixed in a frame is given in the frame's own coordinates.

Gravity is the :class:`World`'s ``g`` along ``-y``: bodies read it as ``outer("g")`` (9.80665
when the system has no World). Every component exposes the power flowing into it through
each port, ``P_<port>`` (``fx der(x) + fy der(y) + tau der(phi)`` for a frame, force times
speed for a 1-D flange); bodies expose their kinetic and potential energy ``E_kin`` and
``E_pot``, with ``der(E_kin + E_pot) = P_frame_a``.

Joint axes: with ``use_axis=True`` a :class:`Revolute` gets a rotational flange ``axis`` (angle
``phi``, the joint's relative angle) and a :class:`Prismatic` a translational flange ``axis``
(position ``s`` along the joint). The 1-D world on the axis is fixed to ``frame_a``: a housing
for springs, dampers or sources is ``rotational.Fixed`` / ``translational.Fixed`` at 0, and the
reaction of the axis torque or force is applied to ``frame_a`` by the joint itself (as in
Modelica.Mechanics.MultiBody, whose ``support`` flange is fixed the same way).
"""

from __future__ import annotations

import casadi as cs

import acausal as ac

GRAVITY = 9.80665


def rotate(phi: cs.SX, x: cs.SX | float, y: cs.SX | float) -> tuple[cs.SX, cs.SX]:
    """``R(phi) (x, y)``: a vector given in a frame at angle ``phi``, in world axes."""
    c, s = ac.cos(phi), ac.sin(phi)
    return c * x - s * y, s * x + c * y


def cross(ax: cs.SX, ay: cs.SX, bx: cs.SX, by: cs.SX) -> cs.SX:
    """z-component of ``a x b``."""
    return ax * by - ay * bx


def frame_power(comp: ac.Component, frame: ac.Connector) -> cs.SX:
    """Declare ``P_<frame>`` = power into ``comp`` through ``frame`` and return it."""
    power = comp.variable(f"P_{frame.local}", unit="W")
    comp.equations(
        power
        == frame.fx * ac.der(frame.x) + frame.fy * ac.der(frame.y) + frame.tau * ac.der(frame.phi)
    )
    return power


def _pair(value: tuple[float, float], what: str, owner: str) -> tuple[float, float]:
    try:
        x, y = value
    except (TypeError, ValueError):
        raise ac.ParameterError(f"{owner}: {what} = {value!r} must be a pair (x, y)") from None
    return x, y


class World(ac.Component):
    """The inertial frame ``frame_b`` at the origin with ``phi = 0``; gravity ``g`` along
    ``-y`` for every :class:`Body` of the system (declared ``inner``)."""

    def __init__(self, name: str, g: float = GRAVITY) -> None:
        super().__init__(name)
        self.frame_b = self.connector("frame_b", ac.Frame)
        self.g = self.inner("g", g, "m/s^2")
        self.P_frame_b = self.variable("P_frame_b", unit="W")
        self.equations(
            self.frame_b.x == 0,
            self.frame_b.y == 0,
            self.frame_b.phi == 0,
            self.P_frame_b == 0,  # the frame does not move
        )


class Fixed(ac.Component):
    """A frame ``frame_b`` fixed at ``r = (x, y)`` with angle ``phi``."""

    def __init__(self, name: str, r: tuple[float, float] = (0.0, 0.0), phi: float = 0.0) -> None:
        super().__init__(name)
        rx, ry = _pair(r, "r", name)
        self.frame_b = self.connector("frame_b", ac.Frame)
        self.P_frame_b = self.variable("P_frame_b", unit="W")
        self.equations(
            self.frame_b.x == self.parameter("r_x", rx, "m"),
            self.frame_b.y == self.parameter("r_y", ry, "m"),
            self.frame_b.phi == self.parameter("phi", phi, "rad"),
            self.P_frame_b == 0,  # the frame does not move
        )


class Body(ac.Component):
    """Rigid body with mass ``m`` and inertia ``I`` about its centre of mass, which sits at
    ``r_cm`` from ``frame_a`` in body coordinates. Newton-Euler equations at the centre of
    mass under gravity ``outer("g")``:

    ``m a_cm = F + m (0, -g)``, ``I alpha = tau + (r_a - r_cm) x F`` with ``F``, ``tau`` the
    force and torque acting through ``frame_a``.

    Variables: ``x_cm, y_cm`` (centre of mass), ``vx_cm, vy_cm``, ``ax_cm, ay_cm``, ``phi``,
    ``w``, ``alpha``, ``E_kin = m |v_cm|^2 / 2 + I w^2 / 2``, ``E_pot = m g y_cm``, ``P_frame_a``.
    ``inertia``: ``(m, I, r_cm_x, r_cm_y)`` as parameters or expressions of the system's (a
    slider-crank's bodies take theirs from its own parameters), ``gravity`` its ``g``. A body
    built with ``I=0`` is a point mass: its rotational equation becomes the torque
    balance ``0 = tau + (r_a - r_cm) x F`` (so ``I`` cannot be made non-zero later by
    ``simulate(params=)``). ``phi_start`` is a guess of the body's angle for initialization
    (where the joints leave it to Newton, e.g. a closed loop whose angles are not states).
    """

    def __init__(
        self,
        name: str,
        m: float | cs.SX = 1.0,
        I: float | cs.SX = 0.1,
        r_cm: tuple[float | cs.SX, float | cs.SX] = (0.0, 0.0),
        phi_start: float | cs.SX | None = None,
    ) -> None:
        super().__init__(name)
        fa = self.frame_a = self.connector("frame_a", ac.Frame)
        point_mass = not isinstance(I, cs.SX) and I == 0
        m = self.parameter("m", m, "kg", min=0)
        inertia = 0.0 if point_mass else self.parameter("I", I, "kg*m^2", min=0)
        rx, ry = _pair(r_cm, "r_cm", name)
        rx, ry = self.parameter("r_cm_x", rx, "m"), self.parameter("r_cm_y", ry, "m")
        #: ``(m, I, r_cm_x, r_cm_y)``: numbers or expressions of the system's parameters
        self.inertia = (m, inertia, rx, ry)
        g = self.gravity = self.outer("g", GRAVITY, "m/s^2")
        v = self.variable
        self.x_cm, self.y_cm = v("x_cm", unit="m"), v("y_cm", unit="m")
        self.vx_cm, self.vy_cm = v("vx_cm", unit="m/s"), v("vy_cm", unit="m/s")
        self.ax_cm, self.ay_cm = v("ax_cm", unit="m/s^2"), v("ay_cm", unit="m/s^2")
        self.phi = v("phi", start=phi_start, unit="rad")
        self.w, self.alpha = v("w", unit="rad/s"), v("alpha", unit="rad/s^2")
        self.E_kin, self.E_pot = v("E_kin", unit="J"), v("E_pot", unit="J")
        dx, dy = rotate(self.phi, rx, ry)  # centre of mass relative to frame_a
        rotation = inertia * self.alpha if not point_mass else 0
        self.equations(
            self.phi == fa.phi,
            self.x_cm == fa.x + dx,
            self.y_cm == fa.y + dy,
            self.vx_cm == ac.der(self.x_cm),
            self.vy_cm == ac.der(self.y_cm),
            self.w == ac.der(self.phi),
            self.ax_cm == ac.der(self.vx_cm),
            self.ay_cm == ac.der(self.vy_cm),
            self.alpha == ac.der(self.w),
            m * self.ax_cm == fa.fx,
            m * self.ay_cm == fa.fy - m * g,
            rotation == fa.tau - cross(dx, dy, fa.fx, fa.fy),
            self.E_kin == m * (self.vx_cm**2 + self.vy_cm**2) / 2 + inertia * self.w**2 / 2,
            self.E_pot == m * g * self.y_cm,
        )
        self.P_frame_a = frame_power(self, fa)


class FixedTranslation(ac.Component):
    """Massless rigid rod: ``frame_b = frame_a + R(phi_a) r``, same angle; force and torque
    balance ``F_a + F_b = 0``, ``tau_a + tau_b + (r_b - r_a) x F_b = 0``."""

    def __init__(self, name: str, r: tuple[float | cs.SX, float | cs.SX] = (1.0, 0.0)) -> None:
        super().__init__(name)
        fa = self.frame_a = self.connector("frame_a", ac.Frame)
        fb = self.frame_b = self.connector("frame_b", ac.Frame)
        rx, ry = _pair(r, "r", name)
        dx, dy = rotate(fa.phi, self.parameter("r_x", rx, "m"), self.parameter("r_y", ry, "m"))
        self.equations(
            fb.x == fa.x + dx,
            fb.y == fa.y + dy,
            fb.phi == fa.phi,
            fa.fx + fb.fx == 0,
            fa.fy + fb.fy == 0,
            fa.tau + fb.tau + cross(dx, dy, fb.fx, fb.fy) == 0,
        )
        self.P_frame_a = frame_power(self, fa)
        self.P_frame_b = frame_power(self, fb)


class Revolute(ac.Component):
    """Revolute joint: the frames coincide, ``phi = frame_b.phi - frame_a.phi``, ``w = der(phi)``.

    ``tau`` is the torque the joint's axis applies to the ``frame_b`` side (its reaction goes
    to ``frame_a``): ``frame_b.tau = -tau``, ``frame_a.tau = tau``. With ``use_axis=True`` it
    comes from the rotational flange ``axis`` (``axis.phi = phi``, ``axis.tau = tau``, power
    ``P_axis = tau w``); otherwise the joint turns freely, ``tau = 0``.

    ``phi0``/``w0`` fix the initial angle/speed; ``phi_start`` is only a guess for
    initialization; ``state_priority`` > 0 asks index reduction to keep ``phi`` and ``w`` as
    states (the crank angle of a closed loop).
    """

    def __init__(
        self,
        name: str,
        phi0: float | cs.SX | None = None,
        w0: float | cs.SX | None = None,
        use_axis: bool = False,
        state_priority: int = 1,
        phi_start: float | cs.SX | None = None,
    ) -> None:
        super().__init__(name)
        fa = self.frame_a = self.connector("frame_a", ac.Frame)
        fb = self.frame_b = self.connector("frame_b", ac.Frame)
        start = self.parameter("phi0", phi0, "rad") if phi0 is not None else phi_start
        self.phi = self.variable(
            "phi", start=start, fixed=phi0 is not None, state_priority=state_priority, unit="rad"
        )
        self.w = self.variable(
            "w",
            start=self.initial("w0", w0, "rad/s"),
            fixed=w0 is not None,
            state_priority=state_priority,
            unit="rad/s",
        )
        self.tau = self.variable("tau", unit="N*m")
        self.equations(
            fb.x == fa.x,
            fb.y == fa.y,
            self.phi == fb.phi - fa.phi,
            self.w == ac.der(self.phi),
            fa.fx + fb.fx == 0,
            fa.fy + fb.fy == 0,
            fa.tau + fb.tau == 0,
            fb.tau == -self.tau,
        )
        if use_axis:
            self.axis = self.connector("axis", ac.RotFlange)
            self.P_axis = self.variable("P_axis", unit="W")
            self.equations(
                self.axis.phi == self.phi,
                self.axis.tau == self.tau,
                self.P_axis == self.tau * self.w,
            )
        else:
            self.equations(self.tau == 0)
        self.P_frame_a = frame_power(self, fa)
        self.P_frame_b = frame_power(self, fb)


class Prismatic(ac.Component):
    """Prismatic joint along the unit direction ``e = axis / |axis|`` fixed in ``frame_a``:
    ``frame_b = frame_a + s R(phi_a) e``, same angle; ``v = der(s)``.

    ``f`` is the force the joint's axis applies to the ``frame_b`` side along ``e`` (its
    reaction goes to ``frame_a``): ``F_b . R e = -f``, ``F_a + F_b = 0``,
    ``tau_a + tau_b + (r_b - r_a) x F_b = 0``. With ``use_axis=True`` it comes from the
    translational flange ``axis`` (``axis.s = s``, ``axis.f = f``, power ``P_axis = f v``);
    otherwise the joint slides freely, ``f = 0``.

    ``s0``/``v0`` fix the initial position/speed; ``s_start`` is only a guess for
    initialization. The direction is the parameter pair ``n_x``, ``n_y`` (normalized).
    """

    def __init__(
        self,
        name: str,
        axis: tuple[float, float] = (1.0, 0.0),
        s0: float | None = None,
        v0: float | None = None,
        use_axis: bool = False,
        state_priority: int = 1,
        s_start: float | cs.SX | None = None,
    ) -> None:
        super().__init__(name)
        fa = self.frame_a = self.connector("frame_a", ac.Frame)
        fb = self.frame_b = self.connector("frame_b", ac.Frame)
        nx, ny = _pair(axis, "axis", name)
        if not isinstance(nx, cs.SX) and not isinstance(ny, cs.SX) and nx == 0 and ny == 0:
            raise ac.ParameterError(f"{name}: axis = {axis!r} has no direction; give (x, y) != 0")
        nx, ny = self.parameter("n_x", nx, "1"), self.parameter("n_y", ny, "1")
        norm = ac.sqrt(nx**2 + ny**2)
        ex, ey = rotate(fa.phi, nx / norm, ny / norm)  # the direction in world axes
        start = self.parameter("s0", s0, "m") if s0 is not None else s_start
        self.s = self.variable(
            "s", start=start, fixed=s0 is not None, state_priority=state_priority, unit="m"
        )
        self.v = self.variable(
            "v",
            start=self.initial("v0", v0, "m/s"),
            fixed=v0 is not None,
            state_priority=state_priority,
            unit="m/s",
        )
        self.f = self.variable("f", unit="N")
        self.equations(
            fb.x == fa.x + self.s * ex,
            fb.y == fa.y + self.s * ey,
            fb.phi == fa.phi,
            self.v == ac.der(self.s),
            fa.fx + fb.fx == 0,
            fa.fy + fb.fy == 0,
            fa.tau + fb.tau + self.s * cross(ex, ey, fb.fx, fb.fy) == 0,
            ex * fb.fx + ey * fb.fy == -self.f,
        )
        if use_axis:
            self.axis = self.connector("axis", ac.Flange)
            self.P_axis = self.variable("P_axis", unit="W")
            self.equations(
                self.axis.s == self.s,
                self.axis.f == self.f,
                self.P_axis == self.f * self.v,
            )
        else:
            self.equations(self.f == 0)
        self.P_frame_a = frame_power(self, fa)
        self.P_frame_b = frame_power(self, fb)


class SliderCrank(ac.Component):
    """Slider-crank mechanism, a closed kinematic loop of one degree of freedom.

    The housing frame ``frame_a`` is the crank axis; the slider runs on the line through
    it along frame_a's x axis. Crank angle ``theta`` (``crank_joint.phi``) from that line;
    crank of length ``l1`` (mass ``m_crank``, centre of mass ``r_crank`` from the axis, its
    inertia about the axis together with a motor's is ``J``), connecting rod of length ``l2``
    (mass ``m_rod``, centre of mass at mid-length, inertia ``I_rod`` about it, by default a
    uniform bar's ``m_rod l2^2 / 12``), slider of mass ``m_slider`` on the crank pin's far end.

    Connectors: ``frame_a``; ``crank_axis`` (rotational flange on the crank joint: angle
    ``theta``, for a motor, friction or extra inertia) and ``slider_axis`` (translational
    flange: the slider's distance ``s`` from the crank axis, ``slide.s``), both with their
    1-D housing fixed to ``frame_a``. ``theta0``, ``w0`` fix the initial crank angle and speed;
    the crank angle and speed carry ``state_priority`` so that index reduction keeps them as
    the states (the slider position is not a valid coordinate at the dead centres).

    The slider position measured from bottom dead centre is ``slide.s - (l2 - l1)``
    = ``l1 cos(theta) + l2 cos(asin(l1 sin(theta) / l2)) - (l2 - l1)``.

    Totals: ``E_kin``, ``E_pot`` of the three bodies; ``P_frame_a``, ``P_crank_axis``,
    ``P_slider_axis``, the power into the mechanism through each port, so that
    ``der(E_kin + E_pot) = P_frame_a + P_crank_axis + P_slider_axis``. The crank body's
    inertia about its centre of mass is ``J - m_crank r_crank^2`` (keep it >= 0).
    """

    def __init__(
        self,
        name: str,
        l1: float = 0.05,
        l2: float = 0.29,
        m_crank: float = 0.23,
        m_rod: float = 0.35,
        m_slider: float = 0.77,
        J: float = 0.0034,
        I_rod: float | None = None,
        r_crank: float | None = None,
        theta0: float | None = 0.0,
        w0: float | None = 0.0,
        state_priority: int = 10,
    ) -> None:
        super().__init__(name)
        l1, l2 = self.parameter("l1", l1, "m", min=0), self.parameter("l2", l2, "m", min=0)
        m_crank = self.parameter("m_crank", m_crank, "kg", min=0)
        m_rod = self.parameter("m_rod", m_rod, "kg", min=0)
        J = self.parameter("J", J, "kg*m^2", min=0)
        r_crank = self.parameter("r_crank", r_crank, "m") if r_crank is not None else l1 / 2
        I_rod = (
            self.parameter("I_rod", I_rod, "kg*m^2", min=0)
            if I_rod is not None
            else m_rod * l2**2 / 12
        )
        # initial guesses for the dependent coordinates, exact at theta0
        theta = self.parameter("theta0", theta0, "rad") if theta0 is not None else 0.0
        psi = ac.asin(-l1 * ac.sin(theta) / l2)  # rod angle from the slider line
        self.crank_joint = Revolute(
            "crank_joint",
            phi0=theta if theta0 is not None else None,
            w0=self.initial("w0", w0, "rad/s"),
            use_axis=True,
            state_priority=state_priority,
        )
        self.crank = Body("crank", m=m_crank, I=J - m_crank * r_crank**2, r_cm=(r_crank, 0.0))
        self.crank_arm = FixedTranslation("crank_arm", r=(l1, 0.0))
        self.crank_pin = Revolute("crank_pin", phi_start=psi - theta)
        self.rod = Body("rod", m=m_rod, I=I_rod, r_cm=(l2 / 2, 0.0))
        self.rod_arm = FixedTranslation("rod_arm", r=(l2, 0.0))
        self.piston_pin = Revolute("piston_pin", phi_start=-psi)
        self.slider = Body("slider", m=m_slider, I=0.0)
        self.slide = Prismatic(
            "slide",
            axis=(1.0, 0.0),
            use_axis=True,
            s_start=l1 * ac.cos(theta) + l2 * ac.cos(psi),
        )
        self.connect(self.crank_joint.frame_a, self.slide.frame_a)
        self.connect(self.crank_joint.frame_b, self.crank.frame_a, self.crank_arm.frame_a)
        self.connect(self.crank_arm.frame_b, self.crank_pin.frame_a)
        self.connect(self.crank_pin.frame_b, self.rod.frame_a, self.rod_arm.frame_a)
        self.connect(self.rod_arm.frame_b, self.piston_pin.frame_a)
        self.connect(self.piston_pin.frame_b, self.slider.frame_a, self.slide.frame_b)
        self.frame_a = self.expose("frame_a", self.crank_joint.frame_a)
        self.crank_axis = self.expose("crank_axis", self.crank_joint.axis)
        self.slider_axis = self.expose("slider_axis", self.slide.axis)
        # totals over the parts: energies, and the power through each exposed port
        bodies = (self.crank, self.rod, self.slider)
        v = self.variable
        self.E_kin, self.E_pot = v("E_kin", unit="J"), v("E_pot", unit="J")
        self.P_frame_a = v("P_frame_a", unit="W")
        self.P_crank_axis = v("P_crank_axis", unit="W")
        self.P_slider_axis = v("P_slider_axis", unit="W")
        self.equations(
            self.E_kin == sum(b.E_kin for b in bodies),
            self.E_pot == sum(b.E_pot for b in bodies),
            self.P_frame_a == self.crank_joint.P_frame_a + self.slide.P_frame_a,
            self.P_crank_axis == self.crank_joint.P_axis,
            self.P_slider_axis == self.slide.P_axis,
        )
