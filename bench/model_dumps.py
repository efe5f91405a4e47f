"""Write the compiled reference models as text, to check that a refactor leaves them unchanged.

A refactor of the component library (or of the compiler) that should not change what a
model *is* is checked by dumping before and after and comparing the folders:

    python bench/model_dumps.py /tmp/dumps_before
    ... change the code ...
    python bench/model_dumps.py /tmp/dumps_after
    diff -r /tmp/dumps_before /tmp/dumps_after        # empty: nothing changed

``models/<name>.txt`` is ``ac.compile(system).dump()`` of a reference model (every stage's
form: the flat DAE with each equation's origin, the aliases, index reduction, the BLT, the
semi-explicit DAE, the outputs and the parameter defaults): the examples' two-mass servo,
positioning axis, Furuta and cart pendulums, the planar slider-crank and four-bar with a
rotational drive, friction and sensor models of both 1-D domains, every 1-D source with and
without a support, the RC ladder and mass chain (with and without component arrays) and the
Cauer filter (electrical: a control). ``library/<module>.<Class>.txt`` is, for every component
class a user imports from ``components`` (partial bases included, which no model shows on
its own), built with its defaults and again with every option on: its quantities with kind,
unit, start and value, its connectors, its equations and events as the flat DAE prints them,
and the ``ParameterWarning`` of each parameter given a value below its physical minimum.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import casadi as cs
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import acausal as ac  # noqa: E402
from acausal.printing import infix  # noqa: E402
from components import electrical as el  # noqa: E402
from components import planar as pl  # noqa: E402
from components import rotational as rot  # noqa: E402
from components import thermal as th  # noqa: E402
from components import translational as tr  # noqa: E402
from examples import cart_pendulum as cp  # noqa: E402
from examples import cauer_filter, ladders  # noqa: E402
from examples import furuta_pendulum as fp  # noqa: E402
from examples import positioning_axis as pa  # noqa: E402
from examples import two_mass_servo as ts  # noqa: E402
from examples.references import mechanisms  # noqa: E402
from examples.references.slider_crank_reference import driven_slider_crank  # noqa: E402

LIBRARY = (el, tr, rot, th, pl)
SAMPLES = (np.linspace(0.0, 1.0, 11), np.sin(np.linspace(0.0, 1.0, 11)))  # a sampled signal


def two_mass_servo() -> dict[str, ac.System]:
    t = np.arange(20) / ts.RATE
    return {
        "two_mass_servo": ts.servo(ts.true_friction("motor"), ts.true_friction("load")),
        "two_mass_servo_sampled": ts.servo(
            ts.true_friction("motor"), ts.true_friction("load"), (t, ts.torque(0, t.size))
        ),
        "two_mass_servo_smooth": ts.servo(
            ts.smooth_friction("motor", ts.W_SMOOTH), ts.smooth_friction("load", ts.W_SMOOTH)
        ),
    }


def positioning_axis() -> dict[str, ac.System]:
    return {
        "positioning_axis": pa.axis(pa.stick_slip_friction()),
        "positioning_axis_smooth": pa.axis(pa.smooth_friction()),
        "positioning_axis_closed_loop": pa.axis(
            pa.stick_slip_friction(), pa.reference(0, duration=2.0)
        ),
    }


def pendulums() -> dict[str, ac.System]:
    return {
        "furuta": fp.pendulum_system(fp.true_friction("arm"), fp.true_friction("pendulum")),
        "furuta_smooth": fp.pendulum_system(
            fp.smooth_friction("arm", fp.W_SMOOTH), fp.smooth_friction("pendulum", fp.W_SMOOTH)
        ),
        "cart_pendulum_servo": cp.truth(cp.UNSEEN),
        "cart_pendulum_pushed": cp.truth(drive=tr.ConstantForce("push", f_constant=0.5)),
    }


def mechanisms_() -> dict[str, ac.System]:
    out = {"slider_crank": driven_slider_crank()}
    for v in mechanisms.variants():
        if v.theta0 == 0.0:
            out[f"{v.mechanism}_{v.place}_{v.drive}"] = v.build()
    return out


def system(name: str, *connections: tuple[ac.Connector, ...]) -> ac.System:
    s = ac.System(name)
    for c in connections:
        s.connect(*c)
    return s


def flange_b(element: ac.Component) -> ac.Connector:
    return element.flange_b


def support(element: ac.Component) -> ac.Connector:
    return element.support


Grounded = Callable[[ac.Component], ac.Connector] | None  # what of an element is fixed


def friction(
    domain: str,
    lib: object,
    body: Callable[[], ac.Component],
    drive: Callable[[], ac.Component],
    elements: dict[str, tuple[Callable[[], ac.Component], Grounded]],
) -> dict[str, ac.System]:
    """``body`` driven by ``drive`` on each friction element (its ``flange_a`` on the body),
    the connector ``grounded`` picks on a fixed housing (none: the element's own housing)."""
    out = {}
    for key, (make, grounded) in elements.items():
        b, src, housing, fr = body(), drive(), lib.Fixed("housing"), make()
        pairs = [(src.flange, b.flange_a), (b.flange_b, fr.flange_a)]
        if grounded is not None:
            pairs.append((grounded(fr), housing.flange))
        out[f"{domain}_friction_{key}"] = system(key, *pairs)
    return out


def translational_friction() -> dict[str, ac.System]:
    """A mass on each friction element of :mod:`components.translational`, pushed by a
    sine; masses with hard stops."""
    out = friction(
        "translational",
        tr,
        lambda: tr.Mass("mass", m=1.0, s0=0.0, v0=0.0),
        lambda: tr.SineForce("push", amplitude=5.0, f=0.5, offset=1.0),
        {
            "coulomb": (lambda: tr.CoulombFriction("fr", f_coulomb=2.0, f_static=3.0), flange_b),
            "coulomb_smooth": (
                lambda: tr.CoulombFriction("fr", f_coulomb=2.0, smooth=True),
                flange_b,
            ),
            "support": (lambda: tr.SupportFriction("fr", f_pos=[(0, 1), (1, 2)], peak=1.5), None),
            "support_support": (lambda: tr.SupportFriction("fr", use_support=True), support),
            "brake": (
                lambda: tr.Brake("fr", fn=ac.fmax(ac.time - 0.5, 0.0), mu_k=[(0, 0.5), (1, 0.4)]),
                None,
            ),
            "brake_support": (lambda: tr.Brake("fr", fn=1.0, use_support=True), support),
        },
    )
    stop = tr.MassWithStop("stop", m=2.0, L=0.1, smin=-0.5, smax=0.5, s0=0.0, v0=0.0)
    stribeck = tr.MassWithStopAndFriction("stribeck", L=0.2, s0=0.0, v0=0.0)
    push, force = tr.SineForce("push", amplitude=20.0, f=0.3), tr.ForceStep("step", 2.0)
    out["translational_masses_with_stops"] = system(
        "stops", (push.flange, stop.flange_a), (force.flange, stribeck.flange_b)
    )
    return out


def rotational_friction() -> dict[str, ac.System]:
    """An inertia on each friction element of :mod:`components.rotational`, driven by a sine."""
    return friction(
        "rotational",
        rot,
        lambda: rot.Inertia("inertia", J=0.5, phi0=0.0, w0=0.0),
        lambda: rot.SineTorque("drive", amplitude=5.0, f=0.5, offset=1.0),
        {
            "coulomb": (
                lambda: rot.CoulombFriction("fr", tau_coulomb=2.0, tau_static=3.0),
                flange_b,
            ),
            "coulomb_smooth": (
                lambda: rot.CoulombFriction("fr", smooth=True, w_smooth=0.01),
                flange_b,
            ),
            "clutch": (
                lambda: rot.Clutch("fr", fn=SAMPLES, mu_k=[(0, 0.5), (1, 0.4)], cgeo=0.2),
                flange_b,
            ),
            "one_way_clutch": (lambda: rot.OneWayClutch("fr", fn=1.0, mu_s=0.7), flange_b),
            "brake": (lambda: rot.Brake("fr", fn=ac.fmax(ac.time - 0.5, 0.0), mu_k=0.3), None),
            "brake_support": (lambda: rot.Brake("fr", fn=1.0, use_support=True), support),
            "bearing": (
                lambda: rot.BearingFriction("fr", tau_pos=[(0, 1), (1, 2)], peak=1.2),
                None,
            ),
            "bearing_support": (lambda: rot.BearingFriction("fr", use_support=True), support),
        },
    )


def sensors() -> dict[str, ac.System]:
    """Every sensor of both 1-D domains on a spring-damper oscillator."""
    mass, other = tr.Mass("mass", m=1.0, s0=0.1, v0=0.0), tr.Mass("other", m=2.0, s0=0.0, v0=0.0)
    spring, damper = tr.Spring("spring", c=4.0, s_rel0=0.1), tr.Damper("damper", d=0.3)
    wall, force = tr.Fixed("wall", s0=0.2), tr.ForceSensor("fs")
    ps, vs, acc = tr.PositionSensor("ps"), tr.SpeedSensor("vs"), tr.AccSensor("acc")
    rps, rvs = tr.RelPositionSensor("rps"), tr.RelSpeedSensor("rvs")
    translational = system(
        "translational_sensors",
        (wall.flange, force.flange_a),
        (force.flange_b, spring.flange_a, damper.flange_a, rps.flange_a, rvs.flange_a),
        (spring.flange_b, damper.flange_b, mass.flange_a, ps.flange, vs.flange, acc.flange),
        (mass.flange_b, other.flange_a, rps.flange_b, rvs.flange_b),
    )
    inertia, load = rot.Inertia("inertia", J=1.0, phi0=0.1, w0=0.0), rot.Inertia("load", J=2.0)
    shaft = rot.SpringDamper("shaft", c=4.0, d=0.3, phi_rel0=0.05)
    housing, torque = rot.Fixed("housing", phi0=0.1), rot.TorqueSensor("ts")
    angle, speed, accel = rot.AngleSensor("angle"), rot.SpeedSensor("speed"), rot.AccSensor("acc")
    rel_angle, rel_speed = rot.RelAngleSensor("rel_angle"), rot.RelSpeedSensor("rel_speed")
    rotational = system(
        "rotational_sensors",
        (housing.flange, torque.flange_a),
        (torque.flange_b, shaft.flange_a, rel_angle.flange_a, rel_speed.flange_a),
        (shaft.flange_b, inertia.flange_a, angle.flange, speed.flange, accel.flange),
        (inertia.flange_b, load.flange_a, rel_angle.flange_b, rel_speed.flange_b),
    )
    return {"translational_sensors": translational, "rotational_sensors": rotational}


def sources() -> dict[str, ac.System]:
    """Every 1-D source driving a mass or an inertia (through a spring where it prescribes a
    motion), without and with its support on a fixed housing; and the ideal gear."""
    out = {}
    translational: dict[str, Callable[[bool], ac.Component]] = {
        "force": lambda sup: tr.Force("src", f=SAMPLES, use_support=sup),
        "constant_force": lambda sup: tr.ConstantForce("src", 2.0, use_support=sup),
        "force_step": lambda sup: tr.ForceStep("src", 2.0, 0.5, 0.3, use_support=sup),
        "sine_force": lambda sup: tr.SineForce("src", 2.0, 3.0, 0.1, 0.2, use_support=sup),
        "position": lambda sup: tr.Position("src", s=ac.sin(ac.time), use_support=sup),
        "speed": lambda sup: tr.Speed("src", v=ac.cos(ac.time), s0=0.1, use_support=sup),
        "speed_free_start": lambda sup: tr.Speed("src", v=SAMPLES, use_support=sup),
        "constant_speed": lambda sup: tr.ConstantSpeed("src", 2.0, 0.3, use_support=sup),
    }
    rotational: dict[str, Callable[[bool], ac.Component]] = {
        "torque": lambda sup: rot.Torque("src", tau=ac.sin(ac.time), use_support=sup),
        "constant_torque": lambda sup: rot.ConstantTorque("src", 2.0, use_support=sup),
        "torque_step": lambda sup: rot.TorqueStep("src", 2.0, 0.5, 0.3, use_support=sup),
        "sine_torque": lambda sup: rot.SineTorque("src", 2.0, 3.0, 0.1, 0.2, use_support=sup),
        "position": lambda sup: rot.Position("src", phi=SAMPLES, use_support=sup),
        "speed": lambda sup: rot.Speed("src", w=ac.cos(ac.time), phi0=0.1, use_support=sup),
        "speed_free_start": lambda sup: rot.Speed("src", w=2.0, use_support=sup),
        "constant_speed": lambda sup: rot.ConstantSpeed("src", 2.0, use_support=sup),
    }
    domains = (
        ("translational", translational, tr, lambda: tr.Mass("body", m=2.0, s0=0.0, v0=0.0)),
        ("rotational", rotational, rot, lambda: rot.Inertia("body", J=2.0, phi0=0.0, w0=0.0)),
    )
    for domain, makers, lib, body in domains:
        for key, make in makers.items():
            for sup in (False, True):
                src, spring, target = make(sup), lib.Spring("spring", 3.0), body()
                pairs = [(src.flange, spring.flange_a), (spring.flange_b, target.flange_a)]
                if sup:
                    pairs.append((src.support, lib.Fixed("housing", 0.25).flange))
                name = f"{domain}_{key}{'_support' if sup else ''}"
                out[name] = system(name, *pairs)
    for sup in (False, True):
        gear, drive = rot.IdealGear("gear", ratio=3.0, use_support=sup), rot.Speed("drive", w=1.0)
        load, housing = rot.Inertia("load", J=0.2), rot.Fixed("housing")
        pairs = [(drive.flange, gear.flange_a), (gear.flange_b, load.flange_a)]
        if sup:
            pairs.append((gear.support, housing.flange))
        name = f"ideal_gear{'_support' if sup else ''}"
        out[name] = system(name, *pairs)
    return out


def ladders_() -> dict[str, ac.System]:
    return {
        "cauer": cauer_filter.build(),
        "rc_ladder_arrays": ladders.rc_ladder(5),
        "rc_ladder_scalar": ladders.rc_ladder(5, arrays=False),
        "chain_arrays": ladders.chain(5),
        "chain_scalar": ladders.chain(5, arrays=False),
    }


def models() -> dict[str, ac.System]:
    """Every reference model by file name."""
    return {
        **two_mass_servo(),
        **positioning_axis(),
        **pendulums(),
        **mechanisms_(),
        **translational_friction(),
        **rotational_friction(),
        **sensors(),
        **sources(),
        **ladders_(),
    }


def library_classes() -> dict[str, type]:
    """Every component class a user imports from the library modules, by
    ``<module>.<Class>``."""
    out = {}
    for module in LIBRARY:
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, ac.Component) and cls is not ac.Component:
                out[f"{module.__name__.split('.')[-1]}.{name}"] = cls
    return out


def _options(cls: type, every: bool, below_minimum: bool) -> dict[str, object] | None:
    """Keywords for ``cls``: none, or every optional start value (None -> 1.0) and every
    option (False -> True); with ``below_minimum``, each number -1.5. None when ``cls``
    needs more than its name and defaults (such bases are kept as the bases of others)."""
    out: dict[str, object] = {}
    for p in list(inspect.signature(cls).parameters.values())[1:]:
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.default is p.empty:
            return None
        if every and p.default is None:
            out[p.name] = 1.0
        elif every and p.default is False:
            out[p.name] = True
        elif below_minimum and isinstance(p.default, float):
            out[p.name] = -1.5
    return out


def component_text(cls: type) -> str:
    """What ``cls`` declares, with its defaults and with every option (see the module
    docstring)."""
    parts = []
    for every in (False, True):
        options = _options(cls, every, below_minimum=False)
        if options is None:
            return f"{cls.__name__}: needs arguments beyond its name\n"
        comp = cls("x", **options)
        parts.append(f"--- {cls.__name__}({options})\n{comp.describe()}")
        for part in comp.walk():
            for local, q in part.quantities.items():
                start = infix(q.start, comp.name_of) if isinstance(q.start, cs.SX) else q.start
                parts.append(
                    f"{part.full_name}.{local}: {q.kind} unit={q.unit!r} start={start} "
                    f"fixed={q.fixed} value={q.value!r} priority={q.state_priority}"
                )
        s = ac.System("library")
        s.add(comp)
        parts.append(ac.flatten(s).text(values=True))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                cls("x", **(_options(cls, every, below_minimum=True) or {}))
            except ac.ModelError as exc:
                caught.append(warnings.WarningMessage(str(exc), type(exc), "", 0))
        parts += [f"{w.category.__name__}: {w.message}" for w in caught]
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where to write models/ and library/")
    folder = parser.parse_args().folder
    (folder / "models").mkdir(parents=True, exist_ok=True)
    (folder / "library").mkdir(parents=True, exist_ok=True)
    lines = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = models()
        for name, s in built.items():
            text = ac.compile(s).dump() + "\n"
            (folder / "models" / f"{name}.txt").write_text(text)
            lines += text.count("\n")
    classes = library_classes()
    for name, cls in classes.items():
        text = component_text(cls)
        (folder / "library" / f"{name}.txt").write_text(text)
        lines += text.count("\n")
    print(f"{len(built)} models and {len(classes)} library classes, {lines} lines, in {folder}")


if __name__ == "__main__":
    main()
