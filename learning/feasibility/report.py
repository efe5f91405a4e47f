"""``check_feasibility(system)``: is a proposed model feasible and physical? A report per
component a person can act on.

For every two-connector component (Unknowns and known ones alike; see
:mod:`learning.feasibility.constitutive` for how its law is found from its equations):

- Proposition 3.1 (Matei et al.): the partial derivatives of its law with respect to its
  flow and potential (the highest time derivative of each present) never vanish; proven
  with sympy where possible, else checked on a sampled box of operating points and along a
  simulated trajectory (:mod:`learning.feasibility.law_checks`);
- dissipativity ``f_a x_a + f_b x_b >= 0`` for resistive laws (with ``x`` the potential's
  power variable: the voltage on a pin, the velocity ``der(s)`` on a flange): by
  construction (the law's constraint), by sympy, and along the trajectory.

For every BLT block solved by Newton or as a loop: the determinant of its Jacobian, where it
vanishes, and its singular values along the trajectory with the components responsible
(:mod:`learning.feasibility.block_checks`). ``small_capacitor=`` first inserts the paper's small
capacitors (:mod:`learning.feasibility.small_capacitors`) and checks the modified system.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import acausal as ac
from acausal.errors import ModelError, OptionError, unknown_name
from solvers.time_scales import time_scales

from .block_checks import BlockReport, check_blocks
from .check_context import Context, Finding
from .constitutive import constitutive
from .law_checks import check_component, law_text
from .small_capacitors import insert_small_capacitors

DEFAULT_T_END = 10.0
_MARK = {"error": "[error]  ", "warning": "[warning]", "ok": "[ok]     ", "info": "[info]   "}


@dataclass
class ComponentReport:
    """The findings of one two-connector component."""

    name: str
    type_name: str
    template: int | None
    kind: str  # "law", "source" or "other"
    law: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def by_check(self, check: str) -> list[Finding]:
        return [f for f in self.findings if f.check == check]


@dataclass
class FeasibilityReport:
    """``ok``: no check failed. ``components`` by name, ``blocks``, system-level
    ``findings`` (simulation, structure, small capacitors), the simulated interval ``t`` and
    ``result`` (the trajectory the checks used); ``print(report)`` for people."""

    system: str
    components: dict[str, ComponentReport]
    blocks: list[BlockReport]
    findings: list[Finding]
    t: tuple[float, float] | None = None
    result: object | None = field(default=None, repr=False)  # the trajectory checked

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Finding]:
        """Every failed check, components first."""
        return [f for f in self.all_findings() if f.severity == "error"]

    def all_findings(self) -> list[Finding]:
        out = [f for c in self.components.values() for f in c.findings]
        out += [b.finding for b in self.blocks if b.finding is not None]
        return out + self.findings

    def __getitem__(self, name: str) -> ComponentReport:
        if name not in self.components:
            raise unknown_name("checked component", name, self.components)
        return self.components[name]

    def __str__(self) -> str:
        head = f"Feasibility of {self.system}: " + (
            "ok" if self.ok else f"{len(self.errors)} problem{'s' * (len(self.errors) != 1)}"
        )
        lines = [head]
        for f in self.findings:
            lines += _finding_lines(f, "  ")
        if self.components:
            lines.append("components:")
        for c in self.components.values():
            kind = f"type {c.template}" if c.template else c.kind
            law = f": {c.law}" if c.law else ""
            lines.append(f"  {c.name} ({c.type_name}, {kind}){law}")
            for f in c.findings:
                lines += _finding_lines(f, "    ")
        if self.blocks:
            lines.append("blocks solved by Newton or as loops:")
        for b in self.blocks:
            if b.finding is not None:
                lines += _finding_lines(b.finding, "  ")
                if b.finding.severity in ("error", "warning"):
                    lines += [f"      {e}" for e in b.equations]
                    if b.null_unknowns:
                        lines.append(f"      undetermined there: {', '.join(b.null_unknowns)}")
        return "\n".join(lines)


def _finding_lines(f: Finding, indent: str) -> list[str]:
    out = [f"{indent}{_MARK.get(f.severity, f.severity)} {f.check}: {f.message}"]
    if f.advice and f.severity in ("error", "warning"):
        out.append(f"{indent}           what to do: {f.advice}")
    return out


def check_feasibility(
    system: ac.System,
    *,
    t_end: float | None = None,
    dt: float | None = None,
    params: Mapping[str, float] | None = None,
    box: Mapping | None = None,
    samples: int = 4096,
    simulate: bool = True,
    small_capacitor: float | Mapping[str, float] | Sequence[str] | None = None,
    t_start: float = 0.0,
    rtol: float = 1e-6,
    atol: float = 1e-8,
) -> FeasibilityReport:
    """Check ``system`` (see the module docstring) and return a :class:`FeasibilityReport`.

    ``params`` override parameter values (raw ``theta`` of Unknowns included); ``box`` sets
    the sampled operating points, ``{"i": (-2, 2)}`` for every component with a variable
    ``i`` or ``{"Rx": {"i": (-2, 2)}}`` for one (default: +-2x the trajectory's range, at
    least +-1; +-10 without a trajectory); ``samples`` points per check. The trajectory is
    ``simulate(system, t_end, dt)``; without ``t_end`` and ``dt`` they follow the model's
    time scales at the start (:mod:`solvers.time_scales`: five of its longest time
    constant, three of its longest period or source period, after its last step; a
    twentieth of its shortest scale). A failing simulation is reported, and the trajectory
    up to shortly before the failure is used. Warnings raised on the way (a numpy overflow
    on an unstable model, an event iteration that chatters, a doubtful state selection)
    become findings of the report.
    ``small_capacitor``: a capacitance (at every nonlinear component), a list of component
    names (1e-6 each) or a mapping name -> capacitance; the modified system is checked.
    """
    _check_options(box, samples, simulate, t_start, t_end)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = _check(
            system, t_end, dt, params, box, samples, simulate, small_capacitor, t_start, rtol, atol
        )
    report.findings.extend(_warning_findings(caught))
    return report


def _check(
    system: ac.System,
    t_end: float | None,
    dt: float | None,
    params: Mapping[str, float] | None,
    box: Mapping | None,
    samples: int,
    simulate: bool,
    small_capacitor: float | Mapping[str, float] | Sequence[str] | None,
    t_start: float,
    rtol: float,
    atol: float,
) -> FeasibilityReport:
    """:func:`check_feasibility` once its options are checked."""
    findings: list[Finding] = []
    if small_capacitor is not None:
        if isinstance(small_capacitor, (int, float)):
            system, added = insert_small_capacitors(system, None, float(small_capacitor), t_start)
        else:
            system, added = insert_small_capacitors(system, small_capacitor, t_start=t_start)
        findings.append(
            Finding(
                "setup",
                "info",
                f"small capacitors inserted ({len(added)}): "
                + ("; ".join(added) or "none")
                + ". With every connector potential a state, each law is solved alone for its "
                "flow, and Proposition 3.1's conditions become sufficient.",
            )
        )
    model, result, failed = None, None, False
    try:
        model = ac.compile(system)
    except ModelError as exc:
        findings.append(Finding("structure", "error", f"the model does not compile: {exc}"))
    values = _parameter_values(system, model, params)
    t_end, dt, why = _grid(model, params, t_start, t_end, dt)
    if simulate and model is not None:
        result, failed, sim_finding = _simulate(model, t_start, t_end, dt, params, rtol, atol)
        sim_finding.message += why
        findings.append(sim_finding)
    raw = {  # the components' own parameter symbols by name -> value
        q.sym.name(): values.get(q.name, q.value)
        for comp in system.all_components()
        for q in comp.quantities.values()
        if q.kind == "parameter"
    }
    ctx = Context(values | raw, result, box, int(samples), (t_start, t_end))
    components: dict[str, ComponentReport] = {}
    skipped = []
    for comp in system.all_components():
        con = constitutive(comp)
        if con is None:
            if comp.declared_equations:
                skipped.append(comp.full_name)
            continue
        law = law_text(con) if con.relations else ""
        components[comp.full_name] = ComponentReport(
            comp.full_name, type(comp).__name__, con.template, con.kind, law,
            check_component(con, ctx),
        )  # fmt: skip
    if skipped:
        findings.append(
            Finding(
                "setup", "info", "not two-connector components, not checked: " + ", ".join(skipped)
            )
        )
    laws = [name for name, c in components.items() if c.kind == "law"]
    blocks = []
    if model is not None:
        p = np.array([values[name] for name in model.parameters], dtype=float)
        blocks = check_blocks(model, p, result, failed or not simulate, ctx.samples, laws)
    span = (float(result.t[0]), float(result.t[-1])) if result is not None else None
    return FeasibilityReport(system.name, components, blocks, findings, span, result)


def _grid(
    model: ac.Model | None,
    params: Mapping[str, float] | None,
    t_start: float,
    t_end: float | None,
    dt: float | None,
) -> tuple[float, float | None, str]:
    """``(t_end, dt, why)``: as given, else from the model's time scales at ``t_start``
    (``why`` says which), else ``DEFAULT_T_END`` when they cannot be found (the model
    does not initialize: the simulation reports why)."""
    if (t_end is not None and dt is not None) or model is None:
        return (DEFAULT_T_END if t_end is None else float(t_end)), dt, ""
    try:
        scales = time_scales(model, params, t_start)
    except (ModelError, np.linalg.LinAlgError):
        return (DEFAULT_T_END if t_end is None else float(t_end)), dt, ""
    stop, step = scales.horizon(None if t_end is None else float(t_end))
    what = "horizon and step" if t_end is None else "step"
    return stop, (step if dt is None else dt), f"; {what} from the model: {scales.text()}"


WARNING_CHECKS = {"RuntimeWarning": "numerics", "StateSelectionWarning": "structure"}


def _warning_findings(caught: list[warnings.WarningMessage]) -> list[Finding]:
    """One finding per distinct warning raised during the check, with its count."""
    counts: dict[tuple[str, str], int] = {}
    for w in caught:
        text = str(w.message).strip()
        if issubclass(w.category, RuntimeWarning):  # numpy's: say where
            text += f" (in {Path(w.filename).name}, line {w.lineno})"
        key = (w.category.__name__, text)
        counts[key] = counts.get(key, 0) + 1
    return [
        Finding(
            WARNING_CHECKS.get(category, "simulation"),
            "warning",
            f"{category}: {text}" + (f" ({n} times)" if n > 1 else ""),
            data={"category": category, "count": n},
        )
        for (category, text), n in counts.items()
    ]


def _check_options(
    box: Mapping | None, samples: int, simulate: bool, t_start: float, t_end: float | None
) -> None:
    """An :class:`OptionError` naming a malformed option."""
    if not (isinstance(samples, int) and samples >= 3):
        raise OptionError(f"check_feasibility: samples={samples!r} must be an integer >= 3")
    if simulate and t_end is not None and not (np.isfinite(t_end) and t_end > t_start):
        raise OptionError(f"check_feasibility: t_end={t_end!r} must be a time after {t_start!r}")
    for key, value in (box or {}).items():
        pairs = value.items() if isinstance(value, Mapping) else [(key, value)]
        for label, pair in pairs:
            try:
                lo, hi = (float(v) for v in pair)
                good = np.isfinite(lo) and np.isfinite(hi) and lo < hi
            except (TypeError, ValueError):
                good = False
            if not good:
                raise OptionError(
                    f"check_feasibility: box entry {key!r}: {label!r} -> {pair!r} must be a "
                    "pair (lo, hi) with lo < hi, e.g. box={'i': (-2, 2)} or "
                    "box={'Rx': {'i': (-2, 2)}}"
                )


def _parameter_values(
    system: ac.System, model: ac.Model | None, params: Mapping[str, float] | None
) -> dict[str, float]:
    """Parameter values by full name, ``params`` overriding (checked against the model's
    names when it compiled)."""
    if model is not None:
        p = model.parameter_vector(dict(params or {}))
        return dict(zip(model.parameters, (float(v) for v in p)))
    values = {
        q.name: float(q.value)
        for comp in system.all_components()
        for q in comp.quantities.values()
        if q.kind == "parameter"
    }
    return values | {k: float(v) for k, v in (params or {}).items()}


def _simulate(
    system: ac.Model,
    t_start: float,
    t_end: float,
    dt: float | None,
    params: Mapping[str, float] | None,
    rtol: float,
    atol: float,
) -> tuple[object | None, bool, Finding]:
    """The trajectory; on failure the one up to just before the failure time, if any."""
    from solvers import simulate

    kwargs = dict(t_start=t_start, params=dict(params or {}), rtol=rtol, atol=atol)
    try:
        res = simulate(system, t_end=t_end, dt=dt, **kwargs)
        msg = f"simulated t = {t_start:g} .. {t_end:g} ({len(res.t)} output times)"
        return res, False, Finding("simulation", "ok", msg)
    except ModelError as exc:
        text = str(exc).splitlines()[0]
        res = None
        t_fail = getattr(exc, "time", None)
        t_fail = t_start if t_fail is None else t_fail
        for fraction in (0.995, 0.95, 0.8) if t_fail > t_start else ():
            stop = t_start + fraction * (t_fail - t_start)
            step = dt if dt is not None and dt < (stop - t_start) / 20 else (stop - t_start) / 200
            try:
                res = simulate(system, t_end=stop, dt=step, **kwargs)
                break
            except ModelError:
                continue
        used = (
            f"; the checks use the trajectory up to t = {res.t[-1]:.4g}" if res is not None else ""
        )
        return res, True, Finding("simulation", "error", f"{text}{used}", data={"error": str(exc)})
