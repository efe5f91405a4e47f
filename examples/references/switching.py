"""Two models whose modes switch at events, with closed forms in the event tests:

* :func:`half_wave`: ``V0 sin(2 pi F t)`` through an ideal diode into ``C`` parallel to
  ``R`` (a half-wave rectifier: the diode conducts until its current
  ``C V0 w cos wt + V0 sin wt / R`` vanishes, then the capacitor discharges);
* :func:`friction_system`: a mass on a fixed base through Coulomb friction (kinetic
  ``FC``, static ``FS``), pushed by ``A sin(OMEGA t)``: stick-slip.
"""

from __future__ import annotations

import numpy as np

import acausal as ac
from components import electrical as el
from components import translational as tr

V0, F, C, R = 10.0, 50.0, 1e-4, 100.0
A, OMEGA, MASS, FC, FS = 2.0, np.pi, 1.0, 1.0, 1.5


def half_wave(Ron: float = 1e-6, Goff: float = 1e-9) -> ac.System:
    """The rectifier; ``Ron``, ``Goff``: the ideal diode's on resistance, off conductance."""
    s = ac.System("half_wave")
    src = el.SineVoltage("V", V=V0, f=F)
    d = el.IdealDiode("D", Ron=Ron, Goff=Goff)
    cap, load, gnd = el.Capacitor("C", C=C, v0=0.0), el.Resistor("R", R=R), el.Ground("G")
    s.connect(src.p, d.p)
    s.connect(d.n, cap.p, load.p)
    s.connect(src.n, cap.n, load.n, gnd.p)
    return s


def friction_system() -> ac.System:
    """The stick-slip mass, at rest at 0."""
    s = ac.System("stick_slip")
    mass = tr.Mass("m", m=MASS, s0=0.0, v0=0.0)
    fr = tr.CoulombFriction("fr", f_coulomb=FC, f_static=FS)
    base = tr.Fixed("base")
    force = tr.Force("F", f=A * ac.sin(OMEGA * ac.time))
    s.connect(force.flange, mass.flange_a)
    s.connect(mass.flange_b, fr.flange_b)
    s.connect(fr.flange_a, base.flange)
    return s


def sine_with_load(element: ac.Component, R: float) -> ac.System:
    """A 1 V, 1 Hz sine source, ``element`` and a load resistor ``R``."""
    s = ac.System("switching")
    V, load, G = el.SineVoltage("V", V=1.0, f=1.0), el.Resistor("R", R=R), el.Ground("G")
    s.connect(V.p, element.p)
    s.connect(element.n, load.p)
    s.connect(load.n, V.n, G.p)
    return s
