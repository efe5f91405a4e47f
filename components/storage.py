"""A check shared by the energy-storing components (capacitors, inductors, masses, ...).

A negative capacitance, inductance, mass or inertia is allowed (negative impedance
converters exist, and a fit may explore one), but it is rarely meant: it gets a warning
that names the component.
"""

from __future__ import annotations

import warnings

import acausal as ac


def warn_if_negative(comp: ac.Component, name: str, value: float, what: str) -> float:
    """``value`` unchanged; a :class:`UserWarning` naming ``comp.name`` when it is < 0."""
    if isinstance(value, (int, float)) and value < 0:
        warnings.warn(
            f"{comp.full_name}.{name} = {value:g}: a negative {what} (allowed, e.g. for a "
            "negative impedance converter, but check the sign)",
            stacklevel=3,
        )
    return value
