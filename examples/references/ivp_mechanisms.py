"""Three index-3 mechanisms of the Test Set for IVP Solvers (Mazzia & Magherini, Bari;
originally Hairer & Wanner, "Solving ODEs II", and Simeon 1996), written as user components
with position-level constraints, as a user would write them: coordinates ``q`` with
``v = der(q)``, the equations of motion ``M(q) der(v) = f(q, v, t) - G(q)^T lam`` with
``G = dg/dq``, and the constraints ``g(q, t) = 0``. Nothing is index-reduced by hand.

Equations, parameter values, consistent initial values and reference solutions are those of
the test set's Fortran files ``andrews.f``, ``caraxis.f`` and ``crank.f`` (as distributed in
the R package deTestSet: ``rforge/bvpsolve``, ``pkg/deTestSet/src/Ex_andrews.f``,
``Ex_car.f``, ``Ex_crank.f``, ``R/ex_*.R``; the slider crank's 16-digit initial values are
those of the original ``crank.f`` ``init``, quoted identically by two independent ports).

* :class:`Andrews`: Andrews' squeezing mechanism (seven bodies, 7 angles, 6 constraints,
  1 degree of freedom; index 3, 27 unknowns in the test set); ``t`` in ``[0, 0.03]``.
* :class:`CarAxis`: the car axis (4 coordinates of two wheels' ends, 2 constraints, one of
  them rheonomic; index 3, 10 unknowns); ``t`` in ``[0, 3]``.
* :class:`SliderCrank`: Simeon's slider crank with an elastic connecting rod (3 rigid and
  4 elastic coordinates, 3 constraints, the crank driven at ``phi1 = omega t``). The test
  set integrates its index-2 form (velocity constraints); its ``RESMBS`` also holds the
  position constraints (``ITYP = 0``, index 3), written here. ``t`` in ``[0, 0.1]``.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

import acausal as ac


def mat_vec(m, v):
    """``m @ v`` for a nested list ``m`` of expressions (zeros as 0) and a list ``v``."""
    return [sum((mij * vj for mij, vj in zip(row, v) if not _zero(mij)), 0) for row in m]


def transpose_vec(g, lam):
    """``G^T lam`` for a nested list ``G`` (rows: constraints)."""
    return [
        sum((g[k][i] * lam[k] for k in range(len(g)) if not _zero(g[k][i])), 0)
        for i in range(len(g[0]))
    ]


def _zero(x):
    return isinstance(x, (int, float)) and x == 0


# -- Andrews' squeezing mechanism ----------------------------------------------------------
ANDREWS_PARAMETERS = dict(
    m1=0.04325, m2=0.00365, m3=0.02373, m4=0.00706, m5=0.07050, m6=0.00706, m7=0.05498,
    xa=-0.06934, ya=-0.00227, xb=-0.03635, yb=0.03273, xc=0.014, yc=0.072, c0=4530.0,
    i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7,
    i7=1.912e-5, d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5,
    ss=35e-3, sa=1874e-5, sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5, u=4e-2,
    ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2, fa=1421e-5, mom=33e-3,
)  # fmt: skip
ANDREWS_ANGLES = ("beta", "theta", "gamma", "phi", "delta", "omega", "epsilon")
ANDREWS_Q0 = (
    -0.0617138900142764496358948458001,
    0.0,
    0.455279819163070380255912382449,
    0.222668390165885884674473185609,
    0.487364979543842550225598953530,
    -0.222668390165885884674473185609,
    1.23054744454982119249735015568,
)
ANDREWS_LAMBDA0 = (98.5668703962410896057654982170, -6.12268834425566265503114393122, 0, 0, 0, 0)
ANDREWS_W0 = (14222.4439199541138705911625887, -10666.8329399655854029433719415, 0, 0, 0, 0, 0)
ANDREWS_T_END = 0.03
ANDREWS_REFERENCE = {  # andsoln: PSIDE, rtol = atol = 1e-14 (Cray C90)
    "beta": 0.1581077119629904e2,
    "theta": -0.1575637105984298e2,
    "gamma": 0.4082224013073101e-1,
    "phi": -0.5347301163226948,
    "delta": 0.5244099658805304,
    "omega": 0.5347301163226948,
    "epsilon": 0.1048080741042263e1,
    "der(beta)": 0.1139920302151208e4,
    "der(theta)": -0.1424379294994111e4,
    "der(gamma)": 0.1103291221937134e2,
    "der(phi)": 0.1929337464421385e2,
    "der(delta)": 0.5735699284790808,
    "der(omega)": -0.1929337464421385e2,
    "der(epsilon)": 0.3231791658026955,
    "lam1": 0.1991753333731910e3,
    "lam2": -0.2975531228015052e2,
    "lam3": 0.2306654119098399e2,
    "lam4": 0.3145271365475927e2,
    "lam5": 0.2264249232082739e2,
    "lam6": 0.1161740700019673e2,
}


class Andrews(ac.Component):
    """Andrews' squeezing mechanism: seven rigid bodies, joints without friction, a drive
    torque ``mom`` on the first body and a spring ``c0`` on the third (Hairer & Wanner
    VII.7; the test set's ``andrews.f``). Coordinates ``beta ... epsilon`` (angles), speeds
    ``w_<angle> = der(angle)``, multipliers ``lam1 ... lam6`` of the three loop closures.

    ``fixed``: which start values are fixed: ``"positions"`` (the angles), ``"all"``
    (angles and speeds), ``()`` (none), or a tuple of coordinate names (their angle and
    speed). ``state_priority``: {angle: priority}. ``q0``: start angles other than the
    test set's.
    """

    def __init__(self, name, fixed="all", state_priority=None, q0=ANDREWS_Q0):
        super().__init__(name)
        p = ANDREWS_PARAMETERS
        speeds = [0.0] * len(ANDREWS_ANGLES)
        q, v, lam = _coordinates(
            self, ANDREWS_ANGLES, q0, speeds, ANDREWS_LAMBDA0, fixed, state_priority, "w_"
        )
        self.q, self.v, self.lam = q, v, lam
        be, th, ga, ph, de, om, ep = q
        bep, thp, _, php, dep, omp, epp = v
        m1, m2, m3, m4, m5, m6, m7 = (p[f"m{k}"] for k in range(1, 8))
        i1, i2, i3, i4, i5, i6, i7 = (p[f"i{k}"] for k in range(1, 8))
        d, da, e, ea, rr, ra = p["d"], p["da"], p["e"], p["ea"], p["rr"], p["ra"]
        ss, sa, sb, sc, sd = p["ss"], p["sa"], p["sb"], p["sc"], p["sd"]
        ta, tb, u, ua, ub = p["ta"], p["tb"], p["u"], p["ua"], p["ub"]
        zf, zt, fa = p["zf"], p["zt"], p["fa"]
        xa, ya, xb, yb, xc, yc = p["xa"], p["ya"], p["xb"], p["yb"], p["xc"], p["yc"]
        sin, cos = ac.sin, ac.cos
        # mass matrix (symmetric, block diagonal: bodies 1-2, 3, 4-5, 6-7)
        m = [[0] * 7 for _ in range(7)]
        m[0][0] = m1 * ra**2 + m2 * (rr**2 - 2 * da * rr * cos(th) + da**2) + i1 + i2
        m[1][0] = m[0][1] = m2 * (da**2 - da * rr * cos(th)) + i2
        m[1][1] = m2 * da**2 + i2
        m[2][2] = m3 * (sa**2 + sb**2) + i3
        m[3][3] = m4 * (e - ea) ** 2 + i4
        m[4][3] = m[3][4] = m4 * ((e - ea) ** 2 + zt * (e - ea) * sin(ph)) + i4
        m[4][4] = (
            m4 * (zt**2 + 2 * zt * (e - ea) * sin(ph) + (e - ea) ** 2)
            + m5 * (ta**2 + tb**2)
            + i4
            + i5
        )
        m[5][5] = m6 * (zf - fa) ** 2 + i6
        m[6][5] = m[5][6] = m6 * ((zf - fa) ** 2 - u * (zf - fa) * sin(om)) + i6
        m[6][6] = (
            m6 * ((zf - fa) ** 2 - 2 * u * (zf - fa) * sin(om) + u**2)
            + m7 * (ua**2 + ub**2)
            + i6
            + i7
        )
        # the spring between body 3's point D and the fixed point C
        xd = sd * cos(ga) + sc * sin(ga) + xb
        yd = sd * sin(ga) - sc * cos(ga) + yb
        length = ac.sqrt((xd - xc) ** 2 + (yd - yc) ** 2)
        force = -p["c0"] * (length - p["l0"]) / length
        fx, fy = force * (xd - xc), force * (yd - yc)
        f = [
            p["mom"] - m2 * da * rr * thp * (thp + 2 * bep) * sin(th),
            m2 * da * rr * bep**2 * sin(th),
            fx * (sc * cos(ga) - sd * sin(ga)) + fy * (sd * cos(ga) + sc * sin(ga)),
            m4 * zt * (e - ea) * dep**2 * cos(ph),
            -m4 * zt * (e - ea) * php * (php + 2 * dep) * cos(ph),
            -m6 * u * (zf - fa) * epp**2 * cos(om),
            m6 * u * (zf - fa) * omp * (omp + 2 * epp) * cos(om),
        ]
        # loop closures: point E (end of body 2) reaches B through body 3 and A through
        # bodies 4-5 and 6-7
        ex = rr * cos(be) - d * cos(be + th)
        ey = rr * sin(be) - d * sin(be + th)
        g = [
            ex - ss * sin(ga) - xb,
            ey + ss * cos(ga) - yb,
            ex - e * sin(ph + de) - zt * cos(de) - xa,
            ey + e * cos(ph + de) - zt * sin(de) - ya,
            ex - zf * cos(om + ep) - u * sin(ep) - xa,
            ey - zf * sin(om + ep) + u * cos(ep) - ya,
        ]
        dex = [-rr * sin(be) + d * sin(be + th), d * sin(be + th)]  # d ex / d(beta, theta)
        dey = [rr * cos(be) - d * cos(be + th), -d * cos(be + th)]
        gq = [
            dex + [-ss * cos(ga), 0, 0, 0, 0],
            dey + [-ss * sin(ga), 0, 0, 0, 0],
            dex + [0, -e * cos(ph + de), -e * cos(ph + de) + zt * sin(de), 0, 0],
            dey + [0, -e * sin(ph + de), -e * sin(ph + de) - zt * cos(de), 0, 0],
            dex + [0, 0, 0, zf * sin(om + ep), zf * sin(om + ep) - u * cos(ep)],
            dey + [0, 0, 0, -zf * cos(om + ep), -zf * cos(om + ep) - u * sin(ep)],
        ]
        acc = mat_vec(m, [ac.der(vi) for vi in v])
        glam = transpose_vec(gq, lam)
        self.equations(
            *[vi == ac.der(qi) for qi, vi in zip(q, v)],
            *[acc[i] + glam[i] == f[i] for i in range(7)],
            *[gk == 0 for gk in g],
        )


def _coordinates(comp, names, q0, v0, lam0, fixed, state_priority, speed="v_"):
    """Declare a mechanism's coordinates ``names`` (starts ``q0``), their speeds
    ``<speed><name>`` (starts ``v0``) and its multipliers ``lam1, lam2, ...`` (starts
    ``lam0``) on ``comp``, in that order; ``fixed`` as for :class:`Andrews`,
    ``state_priority``: {coordinate: priority}. Returns the three lists of symbols."""
    prio = state_priority or {}
    fix_q, fix_v = _which_fixed(fixed, names)
    q = [
        comp.variable(c, start=s, fixed=c in fix_q, state_priority=prio.get(c, 0))
        for c, s in zip(names, q0)
    ]
    v = [comp.variable(f"{speed}{c}", start=s, fixed=c in fix_v) for c, s in zip(names, v0)]
    lam = [comp.variable(f"lam{k + 1}", start=s) for k, s in enumerate(lam0)]
    return q, v, lam


def _which_fixed(fixed, names):
    """(coordinates whose position start is fixed, those whose speed start is fixed)."""
    if fixed == "all":
        return set(names), set(names)
    if fixed == "positions":
        return set(names), set()
    if fixed == "speeds":
        return set(), set(names)
    return set(fixed), set(fixed)


# -- the car axis ---------------------------------------------------------------------------
CAR_PARAMETERS = dict(eps=1e-2, M=10.0, L=1.0, L0=0.5, r=0.1, w=10.0, g=1.0)
CAR_COORDINATES = ("xl", "yl", "xr", "yr")
CAR_T_END = 3.0
CAR_REFERENCE = {  # carsoln
    "xl": 0.4934557842755629e-1,
    "yl": 0.4969894602303324,
    "xr": 0.1041742524885400e1,
    "yr": 0.3739110272652214,
    "der(xl)": -0.7705836840321485e-1,
    "der(yl)": 0.7446866596327776e-2,
    "der(xr)": 0.1755681574942899e-1,
    "der(yr)": 0.7703410437794031,
    "lam1": -0.4736886750784630e-2,
    "lam2": -0.1104680411345730e-2,
}


class CarAxis(ac.Component):
    """The car axis (test set ``caraxis.f``): the left wheel end ``(xl, yl)`` on a spring
    to the origin, the right one ``(xr, yr)`` on a spring to the point ``(xb, yb)`` that an
    uneven road moves along ``yb = r sin(w t)``; the axis between them keeps length ``L``
    and stays orthogonal to ``(xb, yb)``. Masses ``k = M eps^2 / 2``.

    Start values (the test set's, consistent): ``xl = 0, yl = L0, xr = L, yr = L0``,
    speeds ``-L0/L, 0, -L0/L, 0``, ``lam = 0``. ``fixed`` as for :class:`Andrews`;
    ``parameters``: values other than :data:`CAR_PARAMETERS` (parameters of the component,
    e.g. ``car.M``).
    """

    def __init__(self, name, fixed="all", state_priority=None, **parameters):
        super().__init__(name)
        values = CAR_PARAMETERS | parameters
        p = {k: self.parameter(k, v) for k, v in values.items()}
        L, L0 = p["L"], p["L0"]
        q0 = (cs.SX(0.0), L0, L, L0)  # expressions of the parameters: consistent for any L, L0
        v0 = (-L0 / L, cs.SX(0.0), -L0 / L, cs.SX(0.0))
        q, v, lam = _coordinates(self, CAR_COORDINATES, q0, v0, (0.0, 0.0), fixed, state_priority)
        self.q, self.v, self.lam = q, v, lam
        xl, yl, xr, yr = q
        lam1, lam2 = lam
        k = p["M"] * p["eps"] ** 2 / 2
        yb = p["r"] * ac.sin(p["w"] * ac.time)
        xb = ac.sqrt(L**2 - yb**2)
        ll = ac.sqrt(xl**2 + yl**2)
        lr = ac.sqrt((xr - xb) ** 2 + (yr - yb) ** 2)
        self.equations(
            *[vi == ac.der(qi) for qi, vi in zip(q, v)],
            k * ac.der(v[0]) == (L0 - ll) * xl / ll + lam1 * xb + 2 * lam2 * (xl - xr),
            k * ac.der(v[1]) == (L0 - ll) * yl / ll + lam1 * yb + 2 * lam2 * (yl - yr) - k * p["g"],
            k * ac.der(v[2]) == (L0 - lr) * (xr - xb) / lr - 2 * lam2 * (xl - xr),
            k * ac.der(v[3]) == (L0 - lr) * (yr - yb) / lr - 2 * lam2 * (yl - yr) - k * p["g"],
            xb * xl + yb * yl == 0,
            (xl - xr) ** 2 + (yl - yr) ** 2 == L**2,
        )


# -- the slider crank with an elastic connecting rod ----------------------------------------
CRANK_PARAMETERS = dict(
    M1=0.36, M2=0.151104, M3=0.075552, L1=0.15, L2=0.30, J1=0.002727, J2=0.0045339259,
    EE=0.20e12, NUE=0.30, BB=0.0080, HH=0.0080, RHO=7870.0, GRAV=0.0, OMEGA=150.0,
)  # fmt: skip
CRANK_PI = 3.1415927  # the value crank.f uses (``PARAMETER (PI = 3.1415927D0)``)
CRANK_COORDINATES = ("phi1", "phi2", "x3", "q1", "q2", "q3", "q4")
CRANK_Q0 = (0.0, 0.0, 4.500169330000000e-1, 0.0, 0.0, 1.033398630000000e-5, 1.693279690000000e-5)
CRANK_V0 = (
    1.500000000000000e2,
    -7.499576703969453e1,
    -2.689386719979040e-6,
    4.448961125815990e-1,
    4.634339319238670e-3,
    -1.785910760000550e-6,
    -2.689386719979040e-6,
)
CRANK_LAMBDA0 = (-6.552727150584648e-8, 3.824589509350831e2, -4.635908708561371e-9)
CRANK_T_END = 0.1
CRANK_REFERENCE = {  # cranksoln: MEBDFI, rtol = atol = 1e-14, linear stiffness, no damping
    "phi1": 0.1500000000000104e2,
    "phi2": -0.3311734988256260,
    "x3": 0.1697373328427860,
    "q1": 0.1893192899613509e-3,
    "q2": 0.2375751249879174e-4,
    "q3": -0.5323896770569702e-5,
    "q4": -0.8363313279112129e-5,
    "der(phi1)": 0.1500000000000000e3,
    "der(phi2)": 0.6025346755138369e2,
    "der(x3)": -0.8753116326670527e1,
    "der(q1)": -0.3005541400289738e-1,
    "der(q2)": -0.5500431812571696e-2,
    "der(q3)": 0.4974111734266989e-3,
    "der(q4)": 0.1105560003626645e-2,
}


def crank_fe_matrices(p=CRANK_PARAMETERS):
    """The finite-element data of the elastic rod (2 lateral modes, 2 longitudinal nodes):
    ``MQ, KQ, BQ`` (4 x 4) and ``c1, c2, c12, c21`` (4), as ``crank.f`` builds them."""
    pi, l2, bb, hh = CRANK_PI, p["L2"], p["BB"], p["HH"]
    facm, fack, facb = p["RHO"] * bb * hh * l2, p["EE"] * bb * hh / l2, bb * hh * l2
    mq, kq, bq = np.zeros((4, 4)), np.zeros((4, 4)), np.zeros((4, 4))
    mq[0, 0] = mq[1, 1] = facm * 0.5
    mq[2, 2], mq[2, 3], mq[3, 2], mq[3, 3] = facm * 8, facm, facm, facm * 2
    kq[0, 0] = fack * pi**4 / 24 * (hh / l2) ** 2
    kq[1, 1] = fack * pi**4 * 2 / 3 * (hh / l2) ** 2
    kq[2, 2], kq[3, 3] = fack * 16 / 3, fack * 7 / 3
    kq[2, 3] = kq[3, 2] = -fack * 8 / 3
    bq[0, 2], bq[0, 3], bq[1, 3] = -facb * 16 / pi**3, facb * (8 / pi**3 - 1 / pi), facb * 0.5 / pi
    bq[2, 0], bq[3, 0], bq[3, 1] = -bq[0, 2], -bq[0, 3], -bq[1, 3]
    c1 = np.array([0, 0, facb * 2 / 3, facb / 6])
    c2 = np.array([facb * 2 / pi, 0, 0, 0])
    c12 = np.array([0, 0, l2 * facb / 3, l2 * facb / 6])
    c21 = np.array([l2 * facb / pi, -l2 * facb * 0.5 / pi, 0, 0])
    return mq, kq, bq, c1, c2, c12, c21


class SliderCrank(ac.Component):
    """Simeon's slider crank with an elastic connecting rod (test set ``crank.f``, linear
    stiffness, no damping): crank angle ``phi1`` (driven: ``phi1 = omega t``), rod angle
    ``phi2``, slider position ``x3`` and the rod's elastic coordinates ``q1, q2`` (lateral
    modes) and ``q3, q4`` (longitudinal nodes; ``q4`` lengthens the rod at its end).

    Position constraints (``RESMBS`` with ``ITYP = 0``): the rod's end on the slider's axis,
    ``L1 sin phi1 + (L2 + q4) sin phi2 = 0``, at the slider, ``x3 = L1 cos phi1 +
    (L2 + q4) cos phi2``, and the drive ``phi1 = omega t``.
    """

    def __init__(self, name, fixed="all", state_priority=None):
        super().__init__(name)
        p = CRANK_PARAMETERS
        x, v, lam = _coordinates(
            self, CRANK_COORDINATES, CRANK_Q0, CRANK_V0, CRANK_LAMBDA0, fixed, state_priority
        )
        self.q, self.v, self.lam = x, v, lam
        phi1, phi2, _, *q = x
        v1, v2, _, *qd = v
        mq, kq, bq, c1, c2, c12, c21 = crank_fe_matrices(p)
        l1, l2, m2, rho = p["L1"], p["L2"], p["M2"], p["RHO"]
        grav, m1 = p["GRAV"], p["M1"]
        sin, cos = ac.sin, ac.cos
        c12s, s12s = cos(phi1 - phi2), sin(phi1 - phi2)

        def dot(a, b):
            return sum((ai * bi for ai, bi in zip(a, b) if not _zero(ai)), 0)

        mqq = [dot(mq[:, i], q) for i in range(4)]  # (MQ q)_i, MQ symmetric
        kqq = [dot(kq[:, i], q) for i in range(4)]
        qtbq = [dot(bq[:, i], q) for i in range(4)]  # (q^T BQ)_i
        bqqd = [dot(bq[i, :], qd) for i in range(4)]  # (BQ qd)_i
        c1q, c2q, c12q = dot(c1, q), dot(c2, q), dot(c12, q)
        c1qd, c2qd, c12qd = dot(c1, qd), dot(c2, qd), dot(c12, qd)
        # mass matrix
        am = [[0] * 7 for _ in range(7)]
        am[0][0] = p["J1"] + m2 * l1**2
        am[0][1] = 0.5 * l1 * l2 * m2 * c12s + rho * l1 * (s12s * c2q + c12s * c1q)
        am[1][1] = p["J2"] + dot(q, mqq) + 2 * rho * c12q
        am[2][2] = p["M3"]
        for i in range(4):
            am[0][3 + i] = rho * l1 * (-s12s * c1[i] + c12s * c2[i])
            am[1][3 + i] = rho * c21[i] + rho * qtbq[i]
            for j in range(4):
                am[3 + j][3 + i] = mq[j, i]
        for i in range(7):
            for j in range(i + 1, 7):
                am[j][i] = am[i][j]
        # forces: rigid motion, superposed flexible motion, Coriolis, stiffness
        f = [0] * 7
        f[0] = (
            -0.5 * l1 * grav * (m1 + 2 * m2) * cos(phi1)
            - 0.5 * l1 * l2 * m2 * v2**2 * s12s
            + rho * l1 * v2**2 * (-s12s * c1q + c12s * c2q)
            - 2 * rho * l1 * v2 * (c12s * c1qd + s12s * c2qd)
        )
        f[1] = (
            -0.5 * l2 * grav * m2 * cos(phi2)
            + 0.5 * l1 * l2 * m2 * v1**2 * s12s
            + rho * l1 * v1**2 * (s12s * c1q - c12s * c2q)
            - 2 * rho * v2 * c12qd
            - 2 * v2 * dot(qd, mqq)
            - rho * dot(qd, bqqd)
            - rho * grav * (cos(phi2) * c1q - sin(phi2) * c2q)
        )
        for i in range(4):
            f[3 + i] = (
                v2**2 * mqq[i]
                + rho
                * (v2**2 * c12[i] + l1 * v1**2 * (c12s * c1[i] + s12s * c2[i]) + 2 * v2 * bqqd[i])
                - rho * grav * (sin(phi2) * c1[i] + cos(phi2) * c2[i])
                - kqq[i]
            )
        rod = l2 + q[3]  # the rod's length with its longitudinal stretch q4
        g = [
            l1 * sin(phi1) + rod * sin(phi2),
            x[2] - l1 * cos(phi1) - rod * cos(phi2),
            phi1 - p["OMEGA"] * ac.time,
        ]
        gq = [
            [l1 * cos(phi1), rod * cos(phi2), 0, 0, 0, 0, sin(phi2)],
            [l1 * sin(phi1), rod * sin(phi2), 1, 0, 0, 0, -cos(phi2)],
            [1, 0, 0, 0, 0, 0, 0],
        ]
        acc = mat_vec(am, [ac.der(vi) for vi in v])
        glam = transpose_vec(gq, lam)
        self.equations(
            *[vi == ac.der(xi) for xi, vi in zip(x, v)],
            *[acc[i] + glam[i] == f[i] for i in range(7)],
            *[gk == 0 for gk in g],
        )


# -- builders and the measure of accuracy -----------------------------------------------------
def system(component: ac.Component) -> ac.System:
    s = ac.System(component.name)
    s.add(component)
    return s


def andrews(**kw) -> ac.System:
    return system(Andrews("andrews", **kw))


def car_axis(**kw) -> ac.System:
    return system(CarAxis("car", **kw))


def slider_crank(**kw) -> ac.System:
    return system(SliderCrank("crank", **kw))


def scd(value: float, reference: float) -> float:
    """Significant correct digits of ``value``: ``-log10 |value - ref| / |ref|`` (the test
    set's scd; 17 for an exact match)."""
    err = abs(value - reference)
    return 17.0 if err == 0 else float(-np.log10(err / abs(reference)))
