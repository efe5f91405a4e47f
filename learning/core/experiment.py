"""``ln.Experiment``: one measured experiment, the form of data every learner takes.

An experiment holds sample times ``t_0 < t_1 < ... < t_{n-1}`` (finite, strictly
increasing), measured columns ``y_j(t_k)`` (variables of the model, by dotted name), input
columns ``u_i(t_k)`` with the model parameter each one drives (``inputs={parameter:
column}``: the parameter takes the column's value at each sample), per-experiment parameter
values (``params={parameter: value}``: e.g. this run's load mass or initial velocity),
per-column weights ``c_j`` (a number, or one per sample: the loss sums ``c_j (y_j - ym_j)^2``)
and a mask (``True`` where a sample counts; a non-finite measured value must be masked out).
It is checked once, when built, and is immutable afterwards.

Every learner (:func:`~learning.fit`, :func:`~learning.train`,
:func:`~learning.fit_equations`, :func:`~learning.predict`, the cross-validations,
:func:`~learning.multi_start`, :func:`~learning.train_lagrangian`,
:func:`~learning.identifiability`) takes one experiment or a sequence of them where it takes
its data, and converts them at its entry to the form it has always computed with
(:mod:`learning.core.experiment_forms`), so the numbers are those of the old call with the same
data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import acausal as ac
from acausal.errors import OptionError, UnknownNameError, unknown_name

TIME_NAMES = ("t", "time")


def _is_dataframe(data: object) -> bool:
    """A pandas DataFrame, recognised without importing pandas."""
    return type(data).__module__.startswith("pandas") and all(
        hasattr(data, a) for a in ("columns", "index", "to_numpy")
    )


def is_result(data: object) -> bool:
    """A :class:`solvers.Result` (recognised by its type's name, so as not to import it)."""
    return type(data).__name__ == "Result" and type(data).__module__.startswith("solvers")


def _unknown(where: str, kind: str, name: str, known: Iterable[str]) -> UnknownNameError:
    """:func:`acausal.errors.unknown_name` prefixed with where the name was given."""
    return UnknownNameError(f"{where}: {unknown_name(kind, name, known).args[0]}")


def _table(
    data: Any, time: str | None, measured: Sequence[str] | None, columns: Sequence[str] | None
) -> tuple[dict[str, Any], str]:
    """The raw columns of ``data`` by name (the time among them) and the time's name."""
    if is_result(data):
        if measured is None:
            raise OptionError(
                "Experiment: a simulation Result holds every variable of its model; name the "
                "measured ones: ln.Experiment(result, measured=['C1.v', ...])"
            )
        return {"t": data.t, **{n: data[n] for n in measured}}, "t"
    if _is_dataframe(data):
        table = {str(c): data[c].to_numpy() for c in data.columns}
        name = time or next((n for n in TIME_NAMES if n in table), None)
        if name not in table:
            index = data.index
            if type(index).__name__ == "RangeIndex" and (time is None or index.name != time):
                raise OptionError(
                    "Experiment: the DataFrame has no time column ('t' or 'time') and its index "
                    "is the row number; give time='<column>' or index it by time "
                    "(df.set_index('t'))"
                )
            name = time or (str(index.name) if index.name is not None else "t")
            table = {name: index.to_numpy(), **table}
        return table, name
    if isinstance(data, np.ndarray) and data.dtype.names:
        table = {n: data[n] for n in data.dtype.names}
    elif isinstance(data, np.ndarray):
        if data.ndim != 2 or columns is None or len(columns) != data.shape[1]:
            raise OptionError(
                f"Experiment: a numpy array of shape {data.shape} needs columns= naming each "
                "of its columns (samples in rows), e.g. ln.Experiment(arr, columns=['t', 'x'])"
            )
        table = {str(n): data[:, k] for k, n in enumerate(columns)}
    elif isinstance(data, Mapping):
        table = {str(k): v for k, v in data.items()}
    else:
        raise OptionError(
            f"Experiment: data of type {type(data).__name__} is not a dict of columns, a pandas "
            "DataFrame, a numpy array (with columns=) or a simulation Result"
        )
    name = time or next((n for n in TIME_NAMES if n in table), None)
    if name not in table:
        raise OptionError(
            f"Experiment: the data have no time column {time or 't'!r} (columns: "
            f"{', '.join(table) or 'none'}); name it 't' or give time='<column>'"
        )
    return table, name


def numeric(
    name: str, values: Any, size: int | None, what: str = "column", who: str = "Experiment"
) -> np.ndarray:
    """``values`` as a read-only 1-D float array of ``size`` samples, or an error of
    ``who`` (the function the user called) naming it."""
    raw = np.asarray(values)
    if raw.dtype.kind not in "biuf":
        raise OptionError(
            f"{who}: {what} {name!r} is not numeric (dtype {raw.dtype}, e.g. "
            f"{raw.ravel()[:1].tolist()}); give numbers, one per sample"
        )
    if raw.ndim != 1 and not (raw.ndim == 2 and 1 in raw.shape):
        raise OptionError(
            f"{who}: {what} {name!r} has shape {raw.shape}; give one value per sample"
        )
    out = raw.astype(float).ravel()
    if size is not None and out.size != size:
        raise OptionError(
            f"{who}: {what} {name!r} has {out.size} samples, the time has {size}; give "
            "every column one value per sample time"
        )
    out.flags.writeable = False
    return out


def finite_column(
    name: str, values: Any, size: int | None, who: str, t: np.ndarray | None = None
) -> np.ndarray:
    """:func:`numeric` with every sample finite, or an error of ``who`` naming the column,
    its first non-finite sample and (given the times ``t``) that sample's time: for the
    learners that step or regress from every sample and cannot skip one."""
    out = numeric(name, values, size, who=who)
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        k = int(bad[0])
        at = f", t = {t[k]:.9g}" if t is not None else ""
        raise OptionError(
            f"{who}: column {name!r} is not finite at sample {k} ({out[k]}{at}); drop or "
            "interpolate that sample"
        )
    return out


def check_time(t: np.ndarray, name: str, who: str = "Experiment") -> None:
    """Two or more finite, strictly increasing sample times, or an error of ``who`` naming
    the first sample that is not."""
    if t.size < 2:
        raise OptionError(f"{who}: the time {name!r} has {t.size} samples; give 2 or more")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise OptionError(
            f"{who}: the time {name!r} is {t[bad[0]]} at sample {bad[0]}; sample times "
            "must be finite (drop that sample)"
        )
    back = np.flatnonzero(np.diff(t) <= 0)
    if back.size:
        k = int(back[0]) + 1
        raise OptionError(
            f"{who}: the time {name!r} does not increase at sample {k} ({name}[{k - 1}] = "
            f"{t[k - 1]:.9g}, {name}[{k}] = {t[k]:.9g}); sort the samples and drop repeated times"
        )


class Experiment:
    """One experiment: times, measured columns, inputs and the parameters they drive,
    per-experiment parameter values, weights and a mask (see the module docstring).

    ``data``: a dict of columns, a pandas DataFrame (the time a column or its index), a
    numpy structured array, a 2-D array with ``columns=`` names, or a simulation
    :class:`~solvers.Result` (with ``measured=``). ``time``: the time column (default
    ``"t"``, else ``"time"``, else a DataFrame's index). ``measured``: the columns compared
    with the model (default every column but the time and the inputs). ``inputs``:
    ``{parameter: column}``. ``params``: ``{parameter: value}`` for this experiment.
    ``weights``: ``{measured column: c or array of c per sample}`` (``c >= 0``). ``mask``:
    ``{measured column: booleans}`` or one boolean array for every measured column, True
    where the sample counts. ``name``: shown in messages.

    >>> import numpy as np
    >>> e = Experiment({"t": [0.0, 0.1, 0.2], "C1.v": [0.0, 0.4, np.nan]},
    ...                mask={"C1.v": [True, True, False]}, name="step")
    >>> print(e)
    Experiment 'step': 3 samples, t = 0 .. 0.2
      measured: C1.v (1 of 3 samples masked out)
    """

    def __init__(
        self,
        data: Any,
        *,
        time: str | None = None,
        measured: Sequence[str] | None = None,
        inputs: Mapping[str, str] | None = None,
        params: Mapping[str, float] | None = None,
        weights: Mapping[str, float | Sequence[float]] | None = None,
        mask: Mapping[str, Sequence[bool]] | Sequence[bool] | None = None,
        name: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> None:
        measured = [measured] if isinstance(measured, str) else measured
        table, time_name = _table(data, time, measured, columns)
        t = numeric(time_name, table[time_name], None, "time")
        check_time(t, time_name)
        inputs = dict(inputs or {})
        for p, col in inputs.items():
            if col not in table or col == time_name:
                raise _unknown(f"Experiment: inputs[{p!r}]", "column", col, table)
        driven = set(inputs.values())
        if measured is None:
            measured = [c for c in table if c != time_name and c not in driven]
        for c in measured:
            if c not in table or c == time_name:
                raise _unknown("Experiment: measured", "column", c, table)
            if c in driven:
                raise OptionError(
                    f"Experiment: column {c!r} is both measured and an input (inputs= drives a "
                    "parameter with it); leave it out of measured="
                )
        if not measured:
            raise OptionError("Experiment: nothing is measured (no column but the time and inputs)")
        cols = {c: numeric(c, table[c], t.size) for c in [*measured, *inputs.values()]}
        masks = self._masks(mask, measured, t.size)
        for c in [*measured, *inputs.values()]:
            bad = np.flatnonzero(~np.isfinite(cols[c]) & masks.get(c, True))
            if bad.size:
                k = int(bad[0])
                fix = (
                    f"give mask={{{c!r}: ...}} False there to leave it out, or drop the sample"
                    if c in measured
                    else "an input needs every sample (interpolate or drop the sample)"
                )
                raise OptionError(
                    f"Experiment: column {c!r} is {cols[c][k]} at sample {k} "
                    f"({time_name} = {t[k]:.9g}); {fix}"
                )
        values = {}
        for p, v in (params or {}).items():
            if (
                isinstance(v, bool)
                or not isinstance(v, int | float | np.number)
                or not np.isfinite(v)
            ):
                raise OptionError(f"Experiment: params[{p!r}] = {v!r} must be a finite number")
            if p in inputs:
                raise OptionError(
                    f"Experiment: parameter {p!r} is in both params= and inputs=; give it one "
                    "value or one column"
                )
            values[str(p)] = float(v)
        state = {
            "_t": t,
            "_time": time_name,
            "_columns": cols,
            "_measured": tuple(measured),
            "_inputs": inputs,
            "_params": values,
            "_weights": self._weights(weights, measured, t.size),
            "_mask": masks,
            "_name": "experiment" if name is None else str(name),
        }
        self.__dict__.update(state)

    @staticmethod
    def _masks(mask: Any, measured: Sequence[str], size: int) -> dict[str, np.ndarray]:
        if mask is None:
            return {}
        given = dict(mask) if isinstance(mask, Mapping) else dict.fromkeys(measured, mask)
        out = {}
        for c, m in given.items():
            if c not in measured:
                raise _unknown("Experiment: mask", "measured column", c, measured)
            arr = np.asarray(m)
            if arr.dtype.kind != "b":
                raise OptionError(
                    f"Experiment: mask[{c!r}] must be booleans (True where the sample counts), "
                    f"not {arr.dtype}"
                )
            if arr.shape != (size,):
                raise OptionError(
                    f"Experiment: mask[{c!r}] has {arr.size} samples, the time has {size}"
                )
            arr = arr.copy()
            arr.flags.writeable = False
            out[c] = arr
        return out

    @staticmethod
    def _weights(weights: Any, measured: Sequence[str], size: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for c, w in (weights or {}).items():
            if c not in measured:
                raise _unknown("Experiment: weights", "measured column", c, measured)
            arr = numeric(c, np.atleast_1d(w), None, "the weight of column")
            if np.ndim(w) == 0:
                arr = float(arr[0])
            elif arr.size != size:
                raise OptionError(
                    f"Experiment: weights[{c!r}] has {arr.size} values, the time has {size}; give "
                    "one number or one per sample"
                )
            if not np.all(np.isfinite(arr)) or np.any(np.asarray(arr) < 0):
                raise OptionError(f"Experiment: weights[{c!r}] must be finite and >= 0")
            out[c] = arr
        return out

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(
            f"an Experiment is immutable: build a new one instead of setting {key}"
        )

    # -- what it holds -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def t(self) -> np.ndarray:
        """The sample times (read-only)."""
        return self._t

    @property
    def time_name(self) -> str:
        """The time column's name in the data it was built from."""
        return self._time

    @property
    def measured(self) -> tuple[str, ...]:
        return self._measured

    @property
    def inputs(self) -> dict[str, str]:
        """``{parameter: column}``."""
        return dict(self._inputs)

    @property
    def params(self) -> dict[str, float]:
        return dict(self._params)

    @property
    def weights(self) -> dict[str, Any]:
        return dict(self._weights)

    @property
    def mask(self) -> dict[str, np.ndarray]:
        return dict(self._mask)

    def __len__(self) -> int:
        return self._t.size

    def __getitem__(self, column: str) -> np.ndarray:
        if column in (self._time, "t"):
            return self._t
        if column not in self._columns:
            raise _unknown(f"Experiment {self._name!r}", "column", column, self._columns)
        return self._columns[column]

    def valid(self, column: str) -> np.ndarray:
        """Where ``column``'s samples count: its mask, or every sample."""
        return self._mask.get(column, np.ones(self._t.size, dtype=bool))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Experiment):
            return NotImplemented
        same = (self._name, self._measured, self._inputs, self._params) == (
            other._name,
            other._measured,
            other._inputs,
            other._params,
        )
        arrays = [(self._t, other._t)]
        for a, b in (
            (self._columns, other._columns),
            (self._mask, other._mask),
            (self._weights, other._weights),
        ):
            same = same and a.keys() == b.keys()
            arrays += [(a[k], b[k]) for k in a if k in b]
        return same and all(np.array_equal(x, y, equal_nan=True) for x, y in arrays)

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        t = self._t
        lines = [
            f"Experiment {self._name!r}: {t.size} samples, {self._time} = {t[0]:g} .. {t[-1]:g}"
        ]
        cells = []
        for c in self._measured:
            out = int(np.sum(~self.valid(c)))
            cells.append(c + (f" ({out} of {t.size} samples masked out)" if out else ""))
        lines.append("  measured: " + ", ".join(cells))
        if self._inputs:
            lines.append("  inputs:   " + ", ".join(f"{p} <- {c}" for p, c in self._inputs.items()))
        if self._params:
            lines.append(
                "  params:   " + ", ".join(f"{p} = {v:g}" for p, v in self._params.items())
            )
        if self._weights:
            lines.append(
                "  weights:  "
                + ", ".join(
                    f"{c} = {w:g}" if isinstance(w, float) else f"{c} per sample"
                    for c, w in self._weights.items()
                )
            )
        return "\n".join(lines)

    __repr__ = __str__

    # -- against a model ------------------------------------------------------------------
    def check(self, model: ac.Model, who: str = "Experiment.check") -> None:
        """Check the names against a compiled ``model``: measured columns are its variables
        (either name of a relabelled state, :meth:`~acausal.Model.names_of`), the keys of
        ``inputs`` and ``params`` its parameters; an error names the argument and the
        closest names."""
        where = f"{who}: experiment {self._name!r}"
        for c in self._measured:
            if c not in model:
                raise _unknown(f"{where}, measured column", "variable", c, model.names)
        for arg, names in (("inputs", self._inputs), ("params", self._params)):
            for p in names:
                if p not in model.parameters:
                    raise _unknown(f"{where}, {arg}", "parameter", p, model.parameters)

    def record(self) -> dict[str, np.ndarray]:
        """``{"t": t, measured column: values (nan where masked out), ...}``: the dict the
        simulation-based learners (:func:`~learning.fit`) have always taken."""
        out = {"t": self._t}
        for c in self._measured:
            out[c] = np.where(self.valid(c), self._columns[c], np.nan)
        return out
