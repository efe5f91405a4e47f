"""Simulation results: every variable by its dotted name, CSV, DataFrame, plot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from acausal import Model
from acausal.errors import unknown_name

from .functions import DAEFunctions


class Result:
    """Trajectories on the output grid; ``result["C1.v"]`` is a numpy array over ``t``.

    From states ``x`` and Newton unknowns ``z`` (the named variables computed when first
    asked for), or from the named ``values`` themselves (a run that switched state sets:
    ``state_switches`` lists (time, the new states))."""

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

    def _all(self) -> np.ndarray:
        if self._values is None:
            n = len(self.t)
            fun = self.functions.outputs.map(n)
            self._values = fun(self.x, self.z, self.p, self.t[None, :]).full()
        return self._values

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "time":
            return self.t
        if isinstance(name, str) and name in self.model.defaults:
            return np.full(len(self.t), self.params[name])
        return self._all()[self.model.check_name(name)]

    def __contains__(self, name: str) -> bool:
        return name in self.model or name == "time"

    def residuals(self, top: int = 5) -> list[tuple[str, float]]:
        """The model's equations (after alias elimination, before index reduction) with
        the largest ``max_t |residual|`` on the output grid, worst first: e.g. how well a
        mechanism's loop closes over a long run."""
        model = self.model
        if self.x is None:  # from the named values
            values = self.functions.named_residuals.map(len(self.t))(
                self._all(), self.p, self.t[None, :]
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
        model = self.model
        fun = self.functions.output_directions
        n = len(self.t)
        dp = np.zeros(len(self.p))
        dp[list(model.parameters).index(param)] = 1.0
        vals = fun.map(n)(self.x, self.z, self.p, self.t[None, :], dx, dz, dp)
        return vals.full()[idx]

    def to_csv(self, path: str | Path, names: Sequence[str] | None = None) -> Path:
        """Write ``time`` and the named columns (all variables by default) as CSV."""
        names = list(names) if names is not None else self.names
        data = np.column_stack([self.t] + [self[n] for n in names])
        path = Path(path)
        header = ",".join(["time"] + names)
        np.savetxt(path, data, delimiter=",", header=header, comments="", fmt="%.12g")
        return path

    def to_dataframe(self, names: Sequence[str] | None = None) -> Any:  # pandas.DataFrame
        """A pandas DataFrame indexed by time (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_dataframe needs pandas: pip install pandas") from exc
        names = list(names) if names is not None else self.names
        frame = pd.DataFrame({n: self[n] for n in names}, index=pd.Index(self.t, name="time"))
        return frame

    def plot(self, *names: str, path: str | Path | None = None, ax: Any = None) -> Any:
        """Plot the named variables over time; save to ``path`` when given (needs matplotlib)."""
        try:
            import matplotlib

            if path is not None and ax is None:
                matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("plot needs matplotlib: pip install matplotlib") from exc
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 4.5))
        for n in names or self.model.states:
            ax.plot(self.t, self[n], label=n)
        ax.set_xlabel("time [s]")
        ax.legend()
        ax.grid(True, alpha=0.3)
        if path is not None:
            ax.figure.tight_layout()
            ax.figure.savefig(path, dpi=120)
        return ax

    def __repr__(self) -> str:
        return (
            f"<Result {self.model.name}: {len(self.t)} times from {self.t[0]:g} to "
            f"{self.t[-1]:g}, {len(self.model.names)} variables>"
        )
