"""Connector types (potential and flow variables) and connector instances.

At a connection the potentials of all connectors are equal and their flows sum to zero
(Kirchhoff's laws); a flow is positive when it enters the component through the connector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as cs

from .errors import ConnectError, OptionError

if TYPE_CHECKING:
    from .component import Component
    from .symbols import Quantity


class ConnectorType:
    """A kind of connector: names of its potential and flow variables.

    >>> Pin = ConnectorType("Pin", potentials=("v",), flows=("i",), units={"v": "V", "i": "A"})

    ``units`` maps a variable's name to its unit (a string pint parses); variables it
    leaves out have no declared unit.
    """

    def __init__(
        self,
        name: str,
        potentials: tuple[str, ...],
        flows: tuple[str, ...],
        units: dict[str, str] | None = None,
    ) -> None:
        if len(potentials) != len(flows):
            raise OptionError(
                f"connector type {name}: {len(potentials)} potentials but {len(flows)} flows; "
                "an acausal connector pairs each potential with one flow"
            )
        clash = set(potentials) & set(flows)
        if clash:
            raise OptionError(f"connector type {name}: {sorted(clash)} is both potential and flow")
        self.name = name
        self.potentials = tuple(potentials)
        self.flows = tuple(flows)
        units = dict(units or {})
        unknown = set(units) - set(self.potentials) - set(self.flows)
        if unknown:
            raise OptionError(
                f"connector type {name}: units given for {sorted(unknown)}, which are not among "
                f"its variables {self.potentials + self.flows}"
            )
        self.units = units

    def __repr__(self) -> str:
        return f"ConnectorType({self.name}: potentials {self.potentials}, flows {self.flows})"


Pin = ConnectorType("Pin", potentials=("v",), flows=("i",), units={"v": "V", "i": "A"})
Flange = ConnectorType("Flange", potentials=("s",), flows=("f",), units={"s": "m", "f": "N"})
RotFlange = ConnectorType(
    "RotFlange", potentials=("phi",), flows=("tau",), units={"phi": "rad", "tau": "N*m"}
)
HeatPort = ConnectorType("HeatPort", potentials=("T",), flows=("Q",), units={"T": "K", "Q": "W"})
Frame = ConnectorType(
    "Frame",
    potentials=("x", "y", "phi"),
    flows=("fx", "fy", "tau"),
    units={"x": "m", "y": "m", "phi": "rad", "fx": "N", "fy": "N", "tau": "N*m"},
)


class Connector:
    """A connector of a component; its variables are attributes (``pin.v``, ``pin.i``)."""

    def __init__(self, owner: Component, local: str, ctype: ConnectorType) -> None:
        self.owner = owner
        self.local = local
        self.ctype = ctype
        self.quantities: dict[str, Quantity] = {}

    def __getattr__(self, item: str) -> cs.SX:
        quantities = self.__dict__.get("quantities")
        if quantities is None:  # not initialized yet (copying, unpickling)
            raise AttributeError(item)
        if item in quantities:
            return quantities[item].sym
        raise AttributeError(
            f"connector {self.name} ({self.ctype.name}) has no variable {item!r}; "
            f"it has {', '.join(quantities)}"
        )

    @property
    def name(self) -> str:
        """Full dotted name, e.g. ``motor.R.p``."""
        return f"{self.owner.full_name}.{self.local}"

    def __repr__(self) -> str:
        return f"<{self.ctype.name} {self.name}>"


def check_same_type(items: tuple) -> None:
    """A :class:`ConnectError` unless the connectors (or connector arrays) ``items`` of one
    ``connect`` call all have the first one's type."""
    first = items[0]
    for c in items[1:]:
        if c.ctype is not first.ctype:
            raise ConnectError(
                f"cannot connect {first.name} ({first.ctype.name}) with {c.name} "
                f"({c.ctype.name}): connectors must have the same type"
            )
