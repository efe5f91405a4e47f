"""Per-component checks: Proposition 3.1 (the named partial derivatives never vanish) and
dissipativity (``f_a x_a + f_b x_b >= 0``), each proven with sympy where possible, else
checked on a sampled box of operating points and along a simulated trajectory.

A proof comes in two strengths. For an :class:`~learning.Unknown` whose law has a
constraint, the law is rebuilt with symbolic weights carrying the signs the
reparameterization guarantees (``w = s (m + softplus(theta))`` is strictly of sign ``s``),
so a proof holds for every parameter an optimizer can reach. For every component the
relation is also taken at the parameter values of the check (``params=``).
"""

from __future__ import annotations

import casadi as cs
import numpy as np
import sympy as sp

from ..laws import NeuralNet, Polynomial, Unknown
from . import sympy_bridge as sb
from .check_context import (
    Context,
    Finding,
    at_values,
    box_ranges,
    box_zeros,
    evaluate,
    namer,
    rate,
    real_symbol,
    trajectory,
    vanishing,
)
from .constitutive import Constitutive, _label


# -- the unknowns' weight form ------------------------------------------------------------
def weight_form(con: Constitutive) -> list[sp.Expr] | None:
    """The relations of an Unknown with its weights as sympy symbols of the guaranteed
    sign (fixed weights as numbers), in the labels of ``con``; None for other components."""
    comp = con.component
    if not isinstance(comp, Unknown):
        return None
    names = {"f": con.flow, "x": con.potential}
    names |= {f"f{s}": f"{con.flow}_{s}" for s in "ab"} | {
        f"x{s}": f"{con.potential}_{s}" for s in "ab"
    }
    out = []
    for law, prefix in zip(comp.laws, comp.prefixes):
        table: dict[str, sp.Symbol] = {}
        u = []
        for label in law.labels:
            order = len(label) - len(label.lstrip("d"))
            name = _label(names[label[order:]], order)
            u.append(cs.SX.sym(name))
            table[name] = real_symbol(name)
        w: dict[str, cs.SX] = {}
        for wt in law._ws:
            if wt.kind == "fixed":
                w[wt.name] = cs.SX(wt.value)
                continue
            sym = cs.SX.sym(prefix + wt.name)
            w[wt.name] = sym
            if wt.kind == "signed":
                table[sym.name()] = sp.Symbol(
                    sym.name(), positive=wt.sign > 0, negative=wt.sign < 0
                )
            else:
                table[sym.name()] = real_symbol(sym.name())
        lhs, rhs = law._relation(u, w)
        out.append(sb.to_sympy(lhs - rhs, lambda s, t=table: t[s.name()]))
    return out


def constraint_reference(comp: object, template: int | None) -> str:
    """Which propositions the Unknown's constraint makes hold, or ''."""
    if not isinstance(comp, Unknown):
        return ""
    refs = []
    for law in comp.laws:
        if isinstance(law, Polynomial) and law.constraint:
            refs.append(
                "Prop 4.1" + (f", 4.{template + 1}" if law.constraint == "dissipative" else "")
            )
        elif isinstance(law, NeuralNet) and law.constraint:
            refs.append("Prop 4.4")
    return "; ".join(refs)


# -- Proposition 3.1 ----------------------------------------------------------------------
def _prove(expr: sp.Expr | None, general: sp.Expr | None, ref: str, data: dict) -> tuple:
    """(status, proof text) from sympy: "proven" for all constrained weights (``general``,
    the weight form) or at the parameter values (``expr``), "violated" (identically zero,
    real roots in ``data["zeros"]``) or "unknown"."""
    if general is not None:
        sign = sb.sign_of(general)
        if sign:
            data["expr"] = sb.text(general)
            return "proven", (
                f"{'> 0' if sign > 0 else '< 0'} for every operating point and every weight "
                f"its constraint allows ({ref}, sympy)"
            )
    if expr is None:
        return "unknown", ""
    sign = sb.sign_of(expr)
    if sign:
        return "proven", f"{'> 0' if sign > 0 else '< 0'} everywhere (sympy)"
    if sign == 0:
        return "violated", "is identically zero"
    zeros = sb.real_zeros(expr)
    if zeros is None:
        return "unknown", ""
    var, roots = zeros
    if not roots:
        return "proven", "has no real zero (sympy)"
    data["zeros"] = {str(var): [float(r) for r in roots]}
    listed = ", ".join(sb.value_text(r) for r in roots)
    return "violated", f"vanishes at {var} = {listed} (sympy)"


def prop31(con: Constitutive, ctx: Context, traj: dict | None) -> list[Finding]:
    """A finding per named partial derivative of each relation."""
    weights = weight_form(con)
    ref = constraint_reference(con.component, con.template)
    variables = con.variables()
    syms = [con.symbol(v) for v in variables]
    ranges = box_ranges(con, ctx, traj)
    out = []
    for k, rel in enumerate(con.relations):
        g = at_values(rel.g, ctx)
        gname = "g" if len(con.relations) == 1 else f"G{k + 1}"
        for label in rel.named:
            partial = cs.jacobian(g, con.symbol(label))
            what = f"d{gname}/d{label}" if "(" not in label else f"d{gname}/d[{label}]"
            data: dict = {"partial": what, "variable": label}
            try:
                expr = sb.to_sympy(partial, namer)
                data["expr"] = data["expr_at_values"] = sb.text(expr)
            except sb.NotConvertible:
                expr = None
            general = sp.diff(weights[k], real_symbol(label)) if weights and ref else None
            status, proof = _prove(expr, general, ref, data)
            hit, at, count = box_zeros(partial, con, ranges, ctx.samples, data)
            if hit and status == "proven":  # tanh saturates: 1 - tanh(z)^2 is 0 in floats
                proof += f" (numerically ~0 at {at}: scale the inputs)"
            elif hit and status != "violated":
                status, proof = "violated", f"vanishes in the sampled box at {at}"
            if traj is not None:
                tv = evaluate(partial, syms, np.vstack([traj[v] for v in variables]))
                data["trajectory_min_abs"] = float(np.nanmin(np.abs(tv)))
                thit, tj = vanishing(tv)
                if thit:
                    data["t_vanish"] = float(np.asarray(ctx.result.t)[tj])
                    proof += f"; along the trajectory it vanishes near t = {data['t_vanish']:.4g}"
                    status = "violated"
            out.append(_partial_finding(con, what, label, status, proof, count, data))
    return out


def _partial_finding(
    con: Constitutive, what: str, label: str, status: str, proof: str, count: int, data: dict
) -> Finding:
    name = con.component.full_name
    shown = f"{what} = {data.get('expr', '?')}"
    if status == "proven":
        return Finding("prop3.1", "ok", f"{shown} {proof}", name, data)
    if status == "violated":
        never = proof == "is identically zero"
        if isinstance(con.component, Unknown):
            fix = "use constraint='feasible' or 'dissipative' on its law (Props 4.1, 4.4)"
        elif never:
            fix = "a parameter makes it zero (a zero ratio, resistance, mass): change it"
        else:
            fix = f"make the law strictly monotone in {label}"
        text = (
            f"{shown} {proof.lstrip('; ')}: the component cannot be solved for {label} "
            f"{'at all' if never else 'there'} (Proposition 3.1)"
        )
        return Finding("prop3.1", "error", text, name, data, advice=fix)
    tmin = data.get("trajectory_min_abs")
    along = f", >= {tmin:.3g} along the trajectory" if tmin is not None else ""
    text = (
        f"{shown}: not proven; |{what}| >= {data['box_min_abs']:.3g} on {count} samples of "
        f"the box{along}"
    )
    return Finding("prop3.1", "warning", text, name, data)


# -- dissipativity ------------------------------------------------------------------------
def power_along(con: Constitutive, result: object) -> np.ndarray:
    """``f_a x_a + f_b x_b`` along the result, ``x`` the potential's power variable (its
    derivative on a flange: the result's own where the model has it, :func:`rate`)."""
    a, b = con.connectors
    fl, pt = con.flow, con.potential
    order = con.power_order or 0
    return sum(np.asarray(result[f"{c}.{fl}"]) * rate(result, f"{c}.{pt}", order) for c in (a, b))


def sign_pattern(con: Constitutive, ctx: Context) -> tuple[bool, str] | None:
    """Propositions 4.2/4.3's sufficient condition at the current weights of a polynomial
    Unknown of Type 1/2 (all coefficients >= 0, the first of each input > 0):
    (holds, text); None for other components."""
    comp = con.component
    if con.template not in (1, 2) or not isinstance(comp, Unknown):
        return None
    law = comp.law
    if not isinstance(law, Polynomial) or law.n_inputs != 2:
        return None
    weights = comp.weights(ctx.values)
    bad = []
    for label in law.labels:
        names = [f"w_{label}{p}" for p in range(1, 2 * law.order, 2)]
        names = [law.alias.get(n, n) for n in names]
        if weights[names[0]] <= 0:
            bad.append(f"{names[0]} = {weights[names[0]]:.4g} <= 0")
        bad += [f"{n} = {weights[n]:.4g} < 0" for n in names[1:] if weights[n] < 0]
    prop = f"Prop 4.{con.template + 1}"
    if not bad:
        return True, f"its weights have {prop}'s sign pattern (all >= 0, first ones > 0)"
    return False, f"{prop}'s sign pattern fails: {', '.join(bad)}"


def dissipativity(con: Constitutive, ctx: Context) -> Finding:
    """Power into a resistive component: by construction (the law's constraint, or its
    weights' sign pattern), by sympy on the relation solved for one variable, and along the
    trajectory; each later source can refute what an earlier one could not prove."""
    data: dict = {}
    status, how = "unknown", ""
    proven = _by_construction(con)
    if proven is not None:
        status, how = "proven", proven
    pattern = sign_pattern(con, ctx)
    if pattern is not None:
        data["sign_pattern"] = pattern[1]
        if pattern[0] and status != "proven":
            status, how = "proven", pattern[1]
    if con.template in (1, 2):
        status, how = _by_sympy(con, ctx, data, status, how)
    if ctx.result is not None:
        status, how = _along_trajectory(con, ctx, data, status, how)
    return _dissipativity_finding(con, data, status, how, pattern)


def _by_construction(con: Constitutive) -> str | None:
    """Why every weight the constraint allows is dissipative (None: not by construction):
    a Type 1/2 Unknown whose laws are all Polynomial or NeuralNet with
    ``constraint="dissipative"``."""
    comp = con.component
    if not (
        con.template in (1, 2)
        and isinstance(comp, Unknown)
        and all(
            isinstance(law, (Polynomial, NeuralNet)) and law.constraint == "dissipative"
            for law in comp.laws
        )
    ):
        return None
    prop = (
        f"Prop 4.{con.template + 1}"
        if isinstance(comp.law, Polynomial)
        else "g decreasing in f, increasing in x, g(0) = 0: NeuralNet's 'dissipative'"
    )
    return f"for every weight its constraint allows ({prop})"


def _by_sympy(
    con: Constitutive, ctx: Context, data: dict, status: str, how: str
) -> tuple[str, str]:
    """The power ``f x`` of a Type 1/2 relation solved for one variable, shown ``>= 0``
    or negative somewhere by sympy (``data`` gets the power and where it is negative)."""
    fl, pt = real_symbol(con.flow), real_symbol(con.power_label())
    try:
        g = sb.to_sympy(at_values(con.relations[0].g, ctx), namer)
    except sb.NotConvertible:
        g = None
    power = None
    if g is not None:
        x_of_f = sb.solve_unique(g, pt)
        f_of_x = sb.solve_unique(g, fl) if x_of_f is None else None
        power = fl * x_of_f if x_of_f is not None else pt * f_of_x if f_of_x is not None else None
    if power is None:
        return status, how
    power = sp.expand(power)
    data["power"] = sb.text(power)
    shown = f"{fl}*{pt} = {data['power']}"
    if con.template == 2:
        shown = f"(f_a + f_b)*{pt} = {data['power']}"
    if sb.is_nonnegative(power):
        if status != "proven":
            status, how = "proven", f"{shown} >= 0 (sympy)"
    else:
        region = sb.negative_set(power)
        if region is not None and region[1] != sp.S.EmptySet:
            var, where = region
            data["negative_where"] = {str(var): sb.set_text(where)}
            status, how = "violated", f"{shown} < 0 for {var} in {sb.set_text(where)}"
        elif region is not None and status != "proven":
            status, how = "proven", f"{shown} >= 0 (sympy)"
        elif (-power).is_positive:
            status, how = "violated", f"{shown} < 0 everywhere but 0"
    return status, how


def _along_trajectory(
    con: Constitutive, ctx: Context, data: dict, status: str, how: str
) -> tuple[str, str]:
    """The power along the simulated trajectory: its minimum (in ``data``) below
    round-off refutes any proof; otherwise, with nothing proven, it is the evidence."""
    p = power_along(con, ctx.result)
    scale = float(np.max(np.abs(p))) if p.size else 0.0
    k = int(np.argmin(p))
    data["min_power"] = float(p[k])
    data["t_min_power"] = float(np.asarray(ctx.result.t)[k])
    if p[k] < -(1e-6 * scale + 1e-12):
        along = f"power {con.power_text()} reaches {p[k]:.4g} at t = {data['t_min_power']:.4g}"
        status = "violated"
        how = (
            f"{how}; along the trajectory the {along}"
            if how
            else f"along the trajectory the {along}"
        )
    elif status == "unknown":
        status, how = "trajectory", f"power {con.power_text()} >= {p[k]:.3g} (not proven)"
    return status, how


def _dissipativity_finding(
    con: Constitutive, data: dict, status: str, how: str, pattern: tuple[bool, str] | None
) -> Finding:
    """The finding for what the sources showed, with the advice for a violation."""
    name, comp = con.component.full_name, con.component
    if status == "proven":
        return Finding("dissipativity", "ok", f"dissipative: {how}", name, data)
    if status in ("violated", "unknown", "trajectory") and pattern is not None:
        how = f"{how} ({pattern[1]})" if how else pattern[1]
    if status == "violated":
        fix = (
            "use constraint='dissipative' on its law (Props 4.2, 4.3)"
            if isinstance(comp, Unknown)
            else "check the sign of its parameters: it supplies power (an active element)"
        )
        return Finding("dissipativity", "error", f"not dissipative: {how}", name, data, fix)
    if status == "trajectory":
        return Finding(
            "dissipativity", "ok", f"dissipative along the trajectory: {how}", name, data
        )
    if con.template == 3:
        why = "type 3 (separate flow and potential relations): checked along a trajectory only"
        return Finding("dissipativity", "info", why, name, data)
    return Finding(
        "dissipativity", "warning", "dissipativity not shown (no proof, no trajectory)", name, data
    )


# -- one component --------------------------------------------------------------------------
def law_text(con: Constitutive) -> str:
    """The relations as text, with parameter names (weights for an Unknown)."""
    weights = weight_form(con)
    parts = []
    for k, rel in enumerate(con.relations):
        try:
            expr = weights[k] if weights is not None else sb.to_sympy(rel.g, namer)
            parts.append(f"{sb.text(expr)} = 0")
        except sb.NotConvertible:
            parts.append("(not shown)")
    return "; ".join(parts)


def check_component(con: Constitutive, ctx: Context) -> list[Finding]:
    """All findings of one two-connector component."""
    name = con.component.full_name
    if con.kind == "other":
        return [Finding("prop3.1", "info", f"not in a template: {con.note}", name)]
    if con.kind == "source":
        return [Finding("prop3.1", "info", f"not checked: {con.note}", name)]
    traj = trajectory(con, ctx.result) if ctx.result is not None else None
    findings = prop31(con, ctx, traj)
    if con.resistive or con.template == 3 and con.power_order is not None:
        findings.append(dissipativity(con, ctx))
    elif con.power_order is None:
        why = f"{con.flow} is itself a power: dissipativity f x does not apply"
        findings.append(Finding("dissipativity", "info", why, name))
    else:
        power = f"{con.flow}*{con.power_label()}"
        why = f"stores energy (its law is not one between {con.flow} and {con.power_label()})"
        findings.append(
            Finding(
                "dissipativity", "info", f"{why}: dissipativity ({power} >= 0) not required", name
            )
        )
    return findings
