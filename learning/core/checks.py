"""Checks of the options every learner shares, each failing with an :class:`OptionError`
that names the function, the argument and its value and says what to give instead.

- :func:`check_count`: an integer ``n >= minimum`` (epochs, a batch, a horizon, a stride);
  a bool or a float such as ``8.7`` is refused, never truncated.
- :func:`check_positive`: a finite number ``x > 0``, optionally ``x <= at_most`` (a
  learning rate in ``(0, inf)``, a decay factor in ``(0, 1]``).
- :func:`check_layers`: the widths of a network's hidden layers, a tuple of integers >= 1.
- :func:`no_params`: ``params=`` means parameter values everywhere (as in ``simulate``); the
  learners name what they fit with ``fitted=``, and an old call gets the new one shown.

The mini-batch Adam loop's options are checked by
:meth:`learning.optimization.optimizers.AdamOptions.checked` with these.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from acausal.errors import OptionError


def _is_integer(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _refuse(where: str, name: str, value: object, need: str, hint: str) -> OptionError:
    return OptionError(f"{where}: {name}={value!r} must be {need}" + (f"; {hint}" if hint else ""))


def check_count(where: str, name: str, value: object, minimum: int = 1, hint: str = "") -> int:
    """``value`` as an ``int`` when it is an integer ``>= minimum``; else an error."""
    if not (_is_integer(value) and value >= minimum):  # type: ignore[operator]
        raise _refuse(where, name, value, f"an integer >= {minimum}", hint)
    return int(value)  # type: ignore[call-overload]


def check_positive(
    where: str, name: str, value: object, at_most: float | None = None, hint: str = ""
) -> float:
    """``value`` as a ``float`` when it is a finite number ``> 0`` (and ``<= at_most``)."""
    number = _is_integer(value) or isinstance(value, float | np.floating)
    ok = number and np.isfinite(value) and value > 0  # type: ignore[operator, arg-type]
    if not ok or (at_most is not None and value > at_most):  # type: ignore[operator]
        interval = "(0, inf)" if at_most is None else f"(0, {at_most:g}]"
        raise _refuse(where, name, value, f"a number in {interval}", hint)
    return float(value)  # type: ignore[arg-type]


def check_layers(
    where: str, hidden: object, name: str = "hidden", empty: bool = True
) -> tuple[int, ...]:
    """The hidden layers' widths ``hidden`` as a tuple of ints: a sequence (a tuple or a
    list) of integers >= 1, nonempty unless ``empty`` (no hidden layer: a linear map)."""
    example = f"e.g. {name}=(8,) for one layer of 8 units, (16, 16) for two"
    if _is_integer(hidden):
        raise OptionError(
            f"{where}: {name}={hidden!r} is one number; give the widths of the hidden layers "
            f"as a tuple, {name}=({hidden},) for one layer of {hidden} units"
        )
    if not isinstance(hidden, Sequence) or isinstance(hidden, str):
        raise OptionError(f"{where}: {name}={hidden!r} must be a tuple of layer widths, {example}")
    bad = [h for h in hidden if not (_is_integer(h) and h >= 1)]
    if bad or not (hidden or empty):
        what = f"{bad[0]!r} is not" if bad else "no layer is"
        raise OptionError(
            f"{where}: {name}={tuple(hidden)!r}: {what} a layer width (an integer >= 1); {example}"
        )
    return tuple(int(h) for h in hidden)


def no_params(where: str, params: object) -> None:
    """Nothing, or an error showing the new call for ``params=`` given to a learner (it once
    named the parameters to fit; ``params=`` now means values everywhere, as in
    ``simulate(params={...})`` and ``ln.Experiment(params={...})``)."""
    if params is None:
        return
    if isinstance(params, Sequence) and not isinstance(params, str):
        raise OptionError(
            f"{where}: params= means parameter values (as in simulate); name the parameters "
            f"to fit with fitted={list(params)!r}"
        )
    raise OptionError(
        f"{where}: params={params!r:.80}: name the parameters to fit with fitted=[...]; values "
        "to start from go in x0={...}, an experiment's own values in ln.Experiment(params=...)"
    )
