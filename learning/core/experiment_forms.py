"""What each learner computes with, made from :class:`~learning.core.experiment.Experiment`
values at its entry (or passed through when its data come in an older form): :func:`as_pairs`
for the simulation-based learners (a system with this experiment's parameter values, its
data, its weights), :func:`as_records` for the sample-based ones (columns by name, the inputs
under their parameters' names), :func:`as_samples` for the Lagrangian's training, and
:func:`as_list` where a sequence of experiments is expected. The numbers are those of the old
call with the same data.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

import acausal as ac
from acausal.errors import OptionError

from .experiment import Experiment, is_result


class Run(NamedTuple):
    """One experiment as the simulation-based learners take it: the system (or model) with
    this experiment's parameter values, its data dict, and its weights by column."""

    system: Any
    data: Any
    weights: dict[str, Any]


def experiments_in(data: Any, who: str, arg: str) -> list[Experiment] | None:
    """The experiments in ``data`` (one or a sequence); None for data in an older form (a
    dict, a list of dicts, times); an error for a Result or a mixed sequence."""
    if isinstance(data, Experiment):
        return [data]
    if is_result(data):
        raise OptionError(
            f"{who}: {arg} is a simulation Result; measure from it: "
            f"{who}(..., ln.Experiment(result, measured=['<variable>', ...]))"
        )
    if isinstance(data, Sequence) and not isinstance(data, str):
        kinds = {isinstance(d, Experiment) for d in data}
        if kinds == {True}:
            return list(data)
        if kinds == {True, False}:
            raise OptionError(
                f"{who}: {arg} mixes ln.Experiment values and other data; make each an "
                "ln.Experiment(...)"
            )
    return None


def with_values(system: ac.System, values: Mapping[str, float]) -> ac.System:
    """A copy of ``system`` whose parameters named in ``values`` take those values."""
    new = copy.deepcopy(system)
    for comp in new.all_components():
        for q in comp.quantities.values():
            if q.kind == "parameter" and q.name in values:
                q.value = float(values[q.name])
    return new


def _with_params(system: Any, params: Mapping[str, float]) -> Any:
    """``system`` (a System or a Model) with an experiment's parameter values."""
    if not params:
        return system
    if isinstance(system, ac.Model):
        return system.with_parameters(params)
    return with_values(system, params)


def as_pairs(
    system: Any,
    data: Any,
    experiments: Sequence[tuple[Any, Any]] | None,
    who: str,
    weighted: bool = True,
) -> list[Run]:
    """The experiments of a simulation-based learner (``system`` with ``data``, then each
    ``(system, data)`` of ``experiments``) as :class:`Run` values: an :class:`Experiment`
    (or each of a sequence) becomes its system with its ``params`` (checked against the
    compiled model), its :meth:`Experiment.record` and its weights; a list of dicts is one
    experiment per dict; other data pass unchanged (None included, for the learner's own
    message). Inputs that drive parameters cannot be simulated (parameters are constant in
    a simulation): an experiment with ``inputs`` is refused with what to do instead, as
    are weights when the learner weighs no samples (``weighted=False``)."""
    runs = []
    items = ([(system, data)] if system is not None or data is not None else []) + list(
        experiments or []
    )
    for k, item in enumerate(items):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise OptionError(
                f"{who}: experiments[{k}] is a {type(item).__name__}; give (system, data) pairs, "
                "e.g. experiments=[(system, ln.Experiment(...)), ...]"
            )
        s, d = item
        exps = experiments_in(d, who, "data" if k == 0 and system is not None else "experiments")
        if exps is None:
            many = isinstance(d, Sequence) and d and all(isinstance(x, Mapping) for x in d)
            runs += [Run(s, x, {}) for x in d] if many else [Run(s, d, {})]
            continue
        model = s if isinstance(s, ac.Model) else ac.compile(s)
        for e in exps:
            e.check(model, who)
            if e.inputs:
                raise OptionError(
                    f"{who}: experiment {e.name!r} drives parameters by inputs= "
                    f"({', '.join(e.inputs)}), which a simulation holds constant; drive the "
                    "system through a source that plays the samples instead, e.g. "
                    "el.SignalVoltage('V', v=(exp.t, exp['u']))"
                )
            if e.weights and not weighted:
                raise OptionError(
                    f"{who}: experiment {e.name!r} has weights ({', '.join(e.weights)}), which "
                    f"{who} does not use; leave them out (scale outputs by its own options)"
                )
            runs.append(Run(_with_params(s, e.params), e.record(), e.weights))
    return runs


def as_list(data: Any, who: str, arg: str) -> list[Any]:
    """``data`` as a list of experiments (one experiment or a sequence), or a list of
    dicts as given; one dict, a Result or a mixed sequence is an error that shows the call."""
    exps = experiments_in(data, who, arg)
    if exps is not None:
        return exps
    if isinstance(data, Mapping):
        raise OptionError(
            f"{who}: {arg} is one dict; give a list of them ({arg}=[data]) or an "
            "ln.Experiment(data, ...)"
        )
    if not isinstance(data, Sequence) or isinstance(data, str):
        raise OptionError(
            f"{who}: {arg} of type {type(data).__name__} is not a list of records or experiments"
        )
    return list(data)


def as_records(
    data: Any, model: ac.Model | None, inputs: Mapping[str, str] | None, who: str, arg: str
) -> tuple[list[Any], dict[str, str], dict[str, float]]:
    """The records of a sample-based learner (rollouts, equation error), the inputs
    ``{parameter: column}`` and state weights by column.

    Lists of dicts pass unchanged with ``inputs``. Experiments (one or a sequence) become
    records ``{"t": t, measured column: values, parameter: values}``: each driven parameter
    is a column under its own name (its input column, or its ``params`` value at every
    sample; the model's value in an experiment that does not set it), so the inputs are
    ``{parameter: parameter}``; their weights must be one number per column, the same in
    every experiment (these learners weigh a state, not a sample). A mask that leaves a
    sample out is refused: these learners step from sample to sample."""
    items = as_list(data, who, arg)
    if not items or not isinstance(items[0], Experiment):
        return items, dict(inputs or {}), {}
    if inputs:
        raise OptionError(
            f"{who}: inputs= with ln.Experiment data; give each experiment its inputs: "
            "ln.Experiment(data, inputs={'<parameter>': '<column>'})"
        )
    driven = list(dict.fromkeys(p for e in items for p in [*e.inputs, *e.params]))
    if driven and model is None:
        raise OptionError(
            f"{who}: an experiment's inputs= and params= need a model; {who} has none"
        )
    weights: dict[str, float] = {}
    records = []
    for e in items if model is not None else ():
        e.check(model, who)
    for e in items:
        out = [c for c, m in e.mask.items() if not m.all()]
        if out:
            raise OptionError(
                f"{who}: experiment {e.name!r} masks samples of {', '.join(out)} out; {who} "
                "steps from sample to sample and needs every one: drop those samples (a "
                "shorter experiment), or fit by simulation (ln.fit), which skips them"
            )
        for c, w in e.weights.items():
            if not isinstance(w, float) or weights.setdefault(c, w) != w:
                raise OptionError(
                    f"{who}: weights[{c!r}] of experiment {e.name!r} must be one number, the "
                    f"same in every experiment ({who} weighs a state, not a sample)"
                )
        rec: dict[str, Any] = {"t": e.t, **{c: e[c] for c in e.measured}}
        for p in driven:
            col = e.inputs.get(p)
            value = e.params.get(p, model.parameters[p] if model is not None else 0.0)
            rec[p] = e[col] if col is not None else np.full(len(e), value)
        records.append(rec)
    return records, {p: p for p in driven}, weights


def as_samples(data: Any, who: str, arg: str) -> Any:
    """Data of a learner that reads columns by name without a model
    (:func:`~learning.train_lagrangian`): experiments (one or a sequence) become their
    records (:func:`as_records`; no ``inputs`` or ``params``), other data pass unchanged."""
    if experiments_in(data, who, arg) is None:
        return data
    return as_records(data, None, None, who, arg)[0]
