"""Simulation results: every variable by its dotted name and unit, CSV, DataFrame, plot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from acausal import Model
from acausal.errors import OptionError, unknown_name

from .functions import DAEFunctions


class Result:
    """Trajectories on the output grid; ``result["C1.v"]`` is a numpy array over ``t``.

    From states ``x`` and Newton unknowns ``z``, or from the named ``values`` themselves (a
    run that switched state sets: ``state_switches`` lists (time, the new states)). A
    variable is read when asked for, alone: a state, Newton unknown or alias of one is a
    row of ``(x, z)`` times its sign plus its offset, any other is evaluated by a small
    function of what it depends on (:class:`~solvers.readout.Readout`); all of them at
    once (``to_csv``, ``to_dataframe``) by one function, kept for the next call."""

    def __init__(
        self,
        model: Model,
        t: np.ndarray,
        x: np.ndarray | None,
        z: np.ndarray | None,
        p: np.ndarray,
        sens: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
        events: list[tuple[float, dict[str, float]]] | None = None,
        functions: DAEFunctions | None = None,
        values: np.ndarray | None = None,
    ) -> None:
        self.model = model
        self.functions = functions if functions is not None else DAEFunctions(model)
        self.t = t
        self.x, self.z, self.p = x, z, p
        self._values = values
        self._solution: np.ndarray | None = None
        self._sens = sens or {}
        self.state_switches: list[tuple[float, tuple[str, ...]]] = []
        #: located events: (time, {mode: new value}) for the modes that changed there
        self.events = events or []

    @property
    def names(self) -> list[str]:
        """Every variable and derivative, aliases included."""
        return list(self.model.names)

    @property
    def params(self) -> dict[str, float]:
        """The parameter values this result was computed with."""
        return dict(zip(self.model.parameters, self.p.tolist()))

    def _rows(self, which: Sequence[int]) -> np.ndarray:
        """The named variables at positions ``which`` of ``model.names`` on the grid, a new
        array ``(len(which), len(t))``: from the named values when the run gave them, else
        read from the solution (:class:`~solvers.readout.Readout`)."""
        if self._values is not None:
            return self._values[list(which)]
        return self.functions.readout.evaluate(which, self._w(), self.p, self.t)

    def _w(self) -> np.ndarray:
        """The solution ``w = (x, z)`` on the grid, ``(nx + nz, len(t))`` (kept)."""
        if self._solution is None:
            self._solution = np.concatenate([self.x, self.z]) if self.z.size else self.x
        return self._solution

    def unit(self, name: str) -> str:
        """The declared unit of a variable, derivative or parameter (``"V"``, ``"V/s"``),
        ``"s"`` for ``time``, ``""`` where none was declared (:attr:`acausal.Model.units`)."""
        if name == "time":
            return "s"
        if not (isinstance(name, str) and name in self.model.defaults):
            self.model.check_name(name)
        return self.model.units[name]

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "time":
            return self.t
        if isinstance(name, str) and name in self.model.defaults:
            return np.full(len(self.t), self.params[name])
        return self._rows([self.model.check_name(name)])[0]

    def __contains__(self, name: str) -> bool:
        return name in self.model or name == "time"

    def residuals(self, top: int = 5) -> list[tuple[str, float]]:
        """The model's equations (after alias elimination, before index reduction) with
        the largest ``max_t |residual|`` on the output grid, worst first: e.g. how well a
        mechanism's loop closes over a long run."""
        model = self.model
        if self.x is None:  # from the named values
            values = self.functions.named_residuals.map(len(self.t))(
                self._values, self.p, self.t[None, :]
            ).full()
        else:
            values = self.functions.residuals.map(len(self.t))(
                self.x, self.z, self.p, self.t[None, :]
            ).full()
        worst = np.max(np.abs(values), axis=1) if values.size else np.zeros(0)
        order = np.argsort(-worst)[:top]
        return [(model.reduced.equations[k].origin, float(worst[k])) for k in order]

    def sensitivity(self, name: str, param: str) -> np.ndarray:
        """``d name / d param`` on the grid (request ``param`` in ``simulate(sensitivities=)``)."""
        if param not in self._sens:
            raise unknown_name("sensitivity parameter", param, self._sens)
        idx = self.model.check_name(name)
        dx, dz = self._sens[param]
        dp = np.zeros(len(self.p))
        dp[list(self.model.parameters).index(param)] = 1.0
        dw = np.concatenate([dx, dz])
        return self.functions.readout.derivative([idx], self._w(), self.p, self.t, dw, dp)[0]

    def _table(self, names: Sequence[str] | None) -> tuple[list[str], np.ndarray]:
        """Names and their values on the grid, ``(len(names), len(t))``: every variable by
        default, else the given variables, parameters or ``time``."""
        if names is None:
            return self.names, self._rows(range(len(self.model.names)))
        names = list(names)
        special = {k for k, n in enumerate(names) if n == "time" or n in self.model.defaults}
        plain = [k for k in range(len(names)) if k not in special]
        out = np.empty((len(names), len(self.t)))
        out[plain] = self._rows([self.model.check_name(names[k]) for k in plain])
        for k in special:
            out[k] = self[names[k]]
        return names, out

    def to_csv(self, path: str | Path, names: Sequence[str] | None = None) -> Path:
        """Write ``time`` and the named columns (all variables by default) as CSV; each
        header is the name and its unit, ``time [s]``, ``C1.v [V]`` (the name alone where
        no unit is declared): strip a trailing ``" [...]"`` to get the name back."""
        names, values = self._table(names)
        data = np.column_stack([self.t, values.T])
        path = Path(path)
        header = ",".join(_labelled(n, self.unit(n)) for n in ["time", *names])
        np.savetxt(path, data, delimiter=",", header=header, comments="", fmt="%.12g")
        return path

    def to_dataframe(self, names: Sequence[str] | None = None) -> Any:  # pandas.DataFrame
        """A pandas DataFrame indexed by time (needs pandas). Its columns are the plain
        dotted names (``df["C1.v"]``); their units are ``df.attrs["units"]``, a dict
        ``{"C1.v": "V", ...}`` (``""`` where none is declared; the index is in s)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_dataframe needs pandas: pip install pandas") from exc
        names, values = self._table(names)
        index = pd.Index(self.t, name="time")
        frame = pd.DataFrame(values.T, index=index, columns=names, copy=False)  # a new array
        frame.attrs["units"] = {n: self.unit(n) for n in names}
        return frame

    def plot(self, *names: str, path: str | Path | None = None, ax: Any = None) -> list[Any]:
        """Plot the named variables (the states by default) over time, one y axis per unit:
        subplots stacked over one shared time axis (labelled ``t [s]``), each labelled with
        its unit (``C1.v [V]`` for a single variable, ``[V]`` for several), in the order the
        units first appear; variables without a declared unit share one more axis. Saves to
        ``path`` when given (needs matplotlib). ``ax``: an axis to draw on (when all names
        share one unit) or a sequence of axes, one per unit. Returns the axes, top to
        bottom."""
        try:
            import matplotlib

            if path is not None and ax is None:
                matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("plot needs matplotlib: pip install matplotlib") from exc
        groups: dict[str, list[str]] = {}
        for n in names or self.model.states:
            groups.setdefault(self.unit(n), []).append(n)
        if ax is None:
            size = (8, 1.0 + 2.6 * len(groups))
            _, axes = plt.subplots(len(groups), 1, sharex=True, figsize=size, squeeze=False)
            axes = list(axes[:, 0])
        else:
            axes = list(ax) if isinstance(ax, (Sequence, np.ndarray)) else [ax]
            if len(axes) != len(groups):
                raise OptionError(
                    f"plot(): {len(groups)} units ({', '.join(u or 'none' for u in groups)}) "
                    f"need {len(groups)} axes, got {len(axes)}; pass one axis per unit or none"
                )
        for axis, (unit, members) in zip(axes, groups.items()):
            for n in members:
                axis.plot(self.t, self[n], label=n)
            axis.set_ylabel(_labelled(members[0] if len(members) == 1 else "", unit))
            axis.legend()
            axis.grid(True, alpha=0.3)
        axes[-1].set_xlabel("t [s]")
        if path is not None:
            axes[0].figure.tight_layout()
            axes[0].figure.savefig(path, dpi=120)
        return axes

    def __repr__(self) -> str:
        return (
            f"<Result {self.model.name}: {len(self.t)} times from {self.t[0]:g} to "
            f"{self.t[-1]:g}, {len(self.model.names)} variables>"
        )


def _labelled(name: str, unit: str) -> str:
    """``C1.v [V]``; ``[V]`` without a name; the name alone without a unit."""
    return f"{name} [{unit}]".strip() if unit else name
