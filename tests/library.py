"""The component library enumerated for the tests that walk all of it: every class a user
imports from the library modules, and the options that make each declare all it can."""

import inspect

import acausal as ac
from components import electrical as el
from components import planar as pl
from components import rotational as rot
from components import thermal as th
from components import translational as tr

LIBRARY = (el, tr, rot, th, pl)


def library_classes():
    """Every component class a user imports from the library modules; the bases that need
    more than a name to build (their subclasses are built instead) are left out."""
    seen = {}
    for module in LIBRARY:
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, ac.Component) and cls is not ac.Component:
                params = list(inspect.signature(cls).parameters.values())[1:]
                if all(p.default is not p.empty or p.kind is p.VAR_KEYWORD for p in params):
                    seen[f"{module.__name__.split('.')[-1]}.{name}"] = cls
    return sorted(seen.items())


def with_every_option(cls):
    """Keywords giving every optional start value (None -> 1.0) and switching every option
    on (False -> True), so that the quantities they add are declared too."""
    options = {}
    for p in list(inspect.signature(cls).parameters.values())[1:]:
        if p.default is None:
            options[p.name] = 1.0
        elif p.default is False:
            options[p.name] = True
    return options


CLASSES = library_classes()

# path parameters: a friction's or hard stop's sa (acceleration while moving, force or torque
# while stuck) and an ideal diode's or switch's s (current when on, voltage when off) have a
# unit that depends on the mode, so they declare none (components.friction.path_parameter)
MODE_DEPENDENT = {"sa"}
MODE_DEPENDENT_IN = {el.IdealDiode: {"s"}, el.IdealSwitch: {"s"}}
