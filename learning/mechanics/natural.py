"""Natural coordinates of planar bodies from a simulation (Angeli, Desmet and Naets, Section 3.2).

Each body is described by two points fixed in it, ``p_0`` and ``p_1`` (body coordinates
``rho_0``, ``rho_1`` from its ``frame_a``, ``d = |rho_1 - rho_0|``). A body point
``rho = rho_0 + xi e_1 + eta e_2`` (``e_1 = (rho_1 - rho_0) / d``, ``e_2`` that turned by 90
degrees) sits in the world at

    r(rho) = (1 - xi/d) p_0 + (xi/d) p_1 + (eta/d) R (p_1 - p_0) = C(rho) x_k,

``R`` the rotation by 90 degrees and ``x_k = (p_0, p_1)``: linear in the body's natural
coordinates, so its kinetic energy is ``1/2 x_k'^T M_k x_k'`` with the constant matrix

    M_k = m C(c)^T C(c) + (I / d^2) [[1, -1], [-1, 1]] (x) 1_2

(``c`` the centre of mass, ``I`` the inertia about it; the second term is the rotation's,
``|p_1' - p_0'| = d |phi'|``, the cross terms cancel because ``R + R^T = 0``). Gravity is the
constant force ``m C(c)^T (0, -g)`` and a force ``F`` at the point ``rho`` the force
``C(rho)^T F`` on ``x_k`` (virtual work). The system's natural coordinates stack the bodies'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import casadi as cs
import numpy as np

from acausal.errors import OptionError
from solvers import Result

GRAVITY = 9.80665
TURN = np.array([[0.0, -1.0], [1.0, 0.0]])  # R: the rotation by 90 degrees


@dataclass(frozen=True)
class PointLoad:
    """A force along the world direction ``direction`` at the point ``point`` (body
    coordinates from ``frame_a``) of ``body``; ``force``: the result's variable holding its
    value along ``direction`` in the training simulations (e.g. a prismatic joint's ``f``)."""

    body: str
    point: tuple[float, float] = (0.0, 0.0)
    direction: tuple[float, float] = (0.0, 1.0)
    force: str | None = None


@dataclass(frozen=True)
class NaturalCoordinates:
    """The natural coordinates of ``bodies`` along some simulations: ``names`` (``"bar1.p0_x"``,
    ...), the constant ``mass`` matrix and ``gravity`` force, the bodies' two points and
    inertial data, the ``loads`` and per record ``t``, ``x``, ``v``, ``a`` (samples x n),
    ``f`` (the loads' forces on the natural coordinates), ``xm`` (the given minimal
    coordinates' values) and ``fm`` (the generalized forces on them). ``mobility``: the
    number of minimal coordinates."""

    names: tuple[str, ...]
    mass: np.ndarray
    gravity: np.ndarray
    bodies: Mapping[str, dict[str, Any]]
    loads: Mapping[str, PointLoad]
    records: tuple[dict[str, np.ndarray], ...]
    minimal: tuple[str, ...] | None
    mobility: int

    def point(self, body: str, rho: Sequence[float]) -> np.ndarray:
        """The ``2 x n`` matrix taking the natural coordinates to the world position of
        the point ``rho`` (body coordinates from ``frame_a``) of ``body``."""
        if body not in self.bodies:
            raise OptionError(f"natural coordinates: no body {body!r} (have {list(self.bodies)})")
        info = self.bodies[body]
        out = np.zeros((2, len(self.names)))
        k = info["index"]
        out[:, 4 * k : 4 * k + 4] = _local(info["points"], rho)
        return out

    def centres(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Each body's centre of mass (samples x 2) from natural coordinates (samples x n)."""
        return {b: x @ self.point(b, info["r_cm"]).T for b, info in self.bodies.items()}


def _local(points: tuple[np.ndarray, np.ndarray], rho: Sequence[float]) -> np.ndarray:
    """``C(rho)`` (2 x 4) of a body with the points ``points`` (see the module docstring)."""
    r0, r1 = points
    d = float(np.linalg.norm(r1 - r0))
    e1 = (r1 - r0) / d
    xi, eta = e1 @ (np.asarray(rho) - r0), (TURN @ e1) @ (np.asarray(rho) - r0)
    eye = np.eye(2)
    return np.hstack([(1 - xi / d) * eye - (eta / d) * TURN, (xi / d) * eye + (eta / d) * TURN])


def body_mass(m: float, inertia: float, r_cm: np.ndarray, points: tuple) -> np.ndarray:
    """``M_k`` of one body (4 x 4, see the module docstring)."""
    c = _local(points, r_cm)
    d2 = float(np.sum((points[1] - points[0]) ** 2))
    spin = np.kron(np.array([[1.0, -1.0], [-1.0, 1.0]]), np.eye(2))
    return m * c.T @ c + inertia / d2 * spin


def natural_coordinates(
    results: Any,
    bodies: Sequence[Any],
    *,
    points: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    loads: Mapping[str, PointLoad] | None = None,
    minimal: Sequence[str] | None = None,
    forces: Mapping[str, str] | None = None,
    mobility: int | None = None,
    gravity: float | None = None,
) -> NaturalCoordinates:
    """The natural coordinates of the planar ``bodies`` (:class:`components.planar.Body`
    objects of the simulated system, or their names when their inertial data are
    parameters of their own) along ``results`` (one ``Result`` or several).

    ``points``: each body's two points in body coordinates (default: ``frame_a``'s origin
    and twice the centre of mass, the far end of a uniform bar; ``(1, 0)`` when the centre
    of mass is at ``frame_a``). ``loads``: :class:`PointLoad` by name, their forces read
    from the results. ``minimal``: the result variables that are the minimal coordinates
    (the paper's Section 4.2.2: known coordinates, only a decoder to learn) and ``forces``
    the result variables holding the generalized forces on them (by minimal coordinate, e.g.
    a prismatic joint's ``f`` on its ``s``: what acts on the mechanism there); without them
    ``mobility`` (default: the compiled model's state count / 2) coordinates are learned by
    an encoder. ``gravity``: ``g`` along ``-y`` (default: each body's as simulated, its
    ``World``'s). Positions, velocities and accelerations of the points come
    from each body's ``x_cm, y_cm, phi`` and their derivatives in the results."""
    runs = list(results) if isinstance(results, (list, tuple)) else [results]
    wrong = next((r for r in runs if not isinstance(r, Result)), None)
    if not runs or wrong is not None:
        raise OptionError(
            "natural_coordinates: results must be one or more solvers.Result of the "
            f"mechanism's simulations, got {type(wrong).__name__ if runs else 'none'}; e.g. "
            "natural_coordinates(simulate(system, t_end=2.0, dt=1e-3), bodies=[bar1, bar2])"
        )
    if isinstance(bodies, str) or not isinstance(bodies, Sequence):
        raise OptionError(
            f"natural_coordinates: bodies={bodies!r:.60} must be a list of the planar Body "
            "objects (or their names), e.g. bodies=[bar1, bar2] or ['bar1', 'bar2']"
        )
    names = [b if isinstance(b, str) else b.full_name for b in bodies]
    if not names or len(set(names)) != len(names):
        raise OptionError(f"natural_coordinates: bodies must be distinct and given: {names}")
    info, blocks, gforce = {}, [], []
    for k, (b, body) in enumerate(zip(names, bodies)):
        m, inertia, r_cm, g = _inertial(runs[0], b, body)
        pts = _points(b, (points or {}).get(b), r_cm)
        info[b] = {"index": k, "points": pts, "m": m, "I": inertia, "r_cm": r_cm}
        blocks.append(body_mass(m, inertia, r_cm, pts))
        g = g if gravity is None else float(gravity)
        gforce.append(m * _local(pts, r_cm).T @ np.array([0.0, -g]))
    n = 4 * len(names)
    mass = np.zeros((n, n))
    for k, block in enumerate(blocks):
        mass[4 * k : 4 * k + 4, 4 * k : 4 * k + 4] = block
    coords = tuple(f"{b}.p{j}_{axis}" for b in names for j in (0, 1) for axis in ("x", "y"))
    shell = NaturalCoordinates(
        coords, mass, np.concatenate(gforce), info, dict(loads or {}), (), None, 0
    )
    bad = sorted(set(forces or {}) - set(minimal or ()))
    if bad:
        raise OptionError(
            f"natural_coordinates: forces on {bad}, which are not minimal coordinates "
            f"({list(minimal or ())})"
        )
    records = tuple(_record(res, shell, minimal, forces or {}) for res in runs)
    states = len(runs[0].model.states)
    count = len(minimal) if minimal else (mobility or states // 2)
    return replace(
        shell, records=records, minimal=tuple(minimal) if minimal else None, mobility=int(count)
    )


def expect_natural(value: object, where: str, name: str) -> NaturalCoordinates:
    """``value`` when it is :class:`NaturalCoordinates`; anything else (a simulation's
    ``Result``, a dict of columns) is an error showing the call that makes them."""
    if not isinstance(value, NaturalCoordinates):
        raise OptionError(
            f"{where}: {name} must be ln.NaturalCoordinates, got {type(value).__name__}; make "
            "them from the simulations: ln.natural_coordinates(results, bodies=[bar1, bar2]) "
            f"(optionally minimal=[...], forces={{...}}), then {where}(that, ...)"
        )
    return value


def _inertial(res: Any, name: str, body: Any) -> tuple[float, float, np.ndarray, float]:
    """``(m, I, r_cm, g)`` of a body: a ``Body`` object's ``inertia`` and ``gravity``
    (numbers or expressions of the system's parameters, evaluated at the result's), or a
    name's parameters in the result (``g``: the body's own, else the one World's)."""
    if not isinstance(body, str):
        if not hasattr(body, "inertia"):
            raise OptionError(f"natural_coordinates: {name!r} is not a planar Body")
        exprs = cs.vertcat(*[cs.SX(v) for v in (*body.inertia, body.gravity)])
        exprs = cs.substitute(exprs, *_bound(exprs, res.model.p))
        values = np.asarray(cs.Function("i", [res.model.p], [exprs])(res.p)).ravel()
        m, inertia, rx, ry, g = values.tolist()
        return m, inertia, np.array([rx, ry]), g
    params = res.params
    need = [f"{name}.{n}" for n in ("m", "r_cm_x", "r_cm_y")]
    missing = [n for n in need if n not in params]
    if missing:
        raise OptionError(
            f"natural_coordinates: {name!r} is not a planar Body of the results (no "
            f"{missing[0]}; a body whose mass is an expression of other parameters is "
            "given as the Body object)"
        )
    r_cm = np.array([params[f"{name}.r_cm_x"], params[f"{name}.r_cm_y"]])
    worlds = [k for k in params if k.endswith(".g")]
    if f"{name}.g" in params:
        g = params[f"{name}.g"]
    elif len(worlds) > 1:
        raise OptionError(
            f"natural_coordinates: which of {worlds} is {name!r}'s gravity? Give the Body "
            "object or gravity="
        )
    else:
        g = params[worlds[0]] if worlds else GRAVITY
    return params[need[0]], params.get(f"{name}.I", 0.0), r_cm, g


def _bound(exprs: cs.SX, p: cs.SX) -> tuple[cs.SX, cs.SX]:
    """``(outers, inners)``: the symbols of ``exprs`` that the model replaced by an inner
    parameter of the same name (a body's ``g`` by its World's), paired with those."""
    known = {str(p[k]): p[k] for k in range(p.numel())}
    free = [v for v in cs.symvar(exprs) if str(v) not in known]
    pairs = []
    for v in free:
        local = str(v).rsplit(":", 1)[-1]
        match = [s for name, s in known.items() if name.rsplit(":", 1)[-1] == local]
        if len(match) != 1:
            raise OptionError(f"natural_coordinates: cannot tell which parameter {local!r} is")
        pairs.append((v, match[0]))
    return cs.vertcat(*[a for a, _ in pairs]), cs.vertcat(*[b for _, b in pairs])


def _points(body: str, given: Any, r_cm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if given is None:
        far = 2 * r_cm if np.any(r_cm) else np.array([1.0, 0.0])
        return np.zeros(2), far
    r0, r1 = (np.asarray(p, dtype=float).reshape(2) for p in given)
    if np.linalg.norm(r1 - r0) == 0:
        raise OptionError(f"natural_coordinates: the two points of {body!r} coincide")
    return r0, r1


def _record(
    res: Any, nc: NaturalCoordinates, minimal: Sequence[str] | None, forces: Mapping[str, str]
) -> dict:
    """``t``, ``x``, ``v``, ``a``, ``f`` (and ``xm``, ``fm``) of one result."""
    cols = {"x": [], "v": [], "a": []}
    for b, info in nc.bodies.items():
        phi, w, alpha = (res[f"{b}.{n}"] for n in ("phi", "w", "alpha"))
        cm = [res[f"{b}.{n}"] for n in ("x_cm", "y_cm", "vx_cm", "vy_cm", "ax_cm", "ay_cm")]
        for rho in info["points"]:
            lx, ly = rho - info["r_cm"]
            dx, dy = np.cos(phi) * lx - np.sin(phi) * ly, np.sin(phi) * lx + np.cos(phi) * ly
            cols["x"] += [cm[0] + dx, cm[1] + dy]
            cols["v"] += [cm[2] - w * dy, cm[3] + w * dx]
            cols["a"] += [cm[4] - alpha * dy - w**2 * dx, cm[5] + alpha * dx - w**2 * dy]
    out = {"t": np.asarray(res.t, dtype=float)}
    out.update({k: np.column_stack(v) for k, v in cols.items()})
    out["f"] = np.zeros_like(out["x"])
    for name, load in nc.loads.items():
        if load.force is None:
            continue
        if load.force not in res:
            raise OptionError(f"natural_coordinates: load {name!r}: no variable {load.force!r}")
        e = np.asarray(load.direction, dtype=float)
        e = e / np.linalg.norm(e)
        out["f"] += np.outer(res[load.force], nc.point(load.body, load.point).T @ e)
    if minimal:
        for name in (*minimal, *forces.values()):
            if name not in res:
                raise OptionError(f"natural_coordinates: the results have no variable {name!r}")
        out["xm"] = np.column_stack([res[m] for m in minimal])
        zero = np.zeros_like(out["t"])
        out["fm"] = np.column_stack([res[forces[m]] if m in forces else zero for m in minimal])
    return out
