"""One name per concept, Modelica's: no library module binds one component class to two
names (``rot.StepTorque`` was a second name of ``rot.TorqueStep``)."""

import inspect

import pytest

import acausal as ac
from components import electrical as el
from components import planar as pl
from components import rotational as rot
from components import thermal as th
from components import translational as tr


@pytest.mark.parametrize("module", [el, tr, rot, th, pl], ids=lambda m: m.__name__)
def test_no_component_class_has_two_names(module):
    names = {}
    for name, cls in inspect.getmembers(module, inspect.isclass):
        if issubclass(cls, ac.Component):
            names.setdefault(cls, []).append(name)
    assert not {cls.__name__: n for cls, n in names.items() if len(n) > 1}
    # and each is called by its own class name
    assert all(n == [cls.__name__] for cls, n in names.items() if cls is not ac.Component)


def test_the_modelica_names_remain_and_the_second_names_are_gone():
    assert rot.TorqueStep.__name__ == "TorqueStep" and not hasattr(rot, "StepTorque")
    assert tr.ForceStep.__name__ == "ForceStep" and not hasattr(tr, "StepForce")
    assert th.PrescribedHeatFlow.__name__ == "PrescribedHeatFlow"
    assert not hasattr(th, "HeatFlow")
