"""``modelDescription.xml`` of an exported model (FMI 2.0).

Variables, in this order: the parameters (causality ``parameter``, variability ``tunable``,
their values as start values; value references ``0 .. np - 1``), then every named variable
(causality ``local``, variability ``continuous``, ``discrete`` for the modes; computed: no
start value), which reads value
slot ``s`` at value reference ``np + s`` (aliases share one). A state's derivative carries
``derivative=`` (the index of the state's variable); ``ModelStructure`` lists the
derivatives and, as initial unknowns, the states and derivatives. Units are declared as the
components declare them (``<Unit name="V"/>``), without base-unit exponents.
"""

from __future__ import annotations

import datetime as _dt
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from acausal import Model

from .variables import Variables

GENERATOR = "acausal (solvers.export_fmu)"


@dataclass(frozen=True)
class Identity:
    """What names an FMU: its C identifier, GUID, kind and the notes of its description."""

    identifier: str
    guid: str
    kind: str  # "model-exchange" or "co-simulation"
    notes: tuple[str, ...] = ()
    start_time: float = 0.0
    sources: tuple[str, ...] = ()


def _real(parent: ET.Element, attrs: dict[str, str], unit: str) -> None:
    if unit:
        attrs["unit"] = unit
    ET.SubElement(parent, "Real", attrs)


def description(model: Model, variables: Variables, ident: Identity) -> bytes:
    """The XML text of ``modelDescription.xml``."""
    params = list(model.defaults.items())
    text = f"{model.name}, exported by {GENERATOR}"
    root = ET.Element(
        "fmiModelDescription",
        {
            "fmiVersion": "2.0",
            "modelName": model.name,
            "guid": ident.guid,
            "description": "; ".join((text, *ident.notes)),
            "generationTool": GENERATOR,
            "generationDateAndTime": _dt.datetime.now(_dt.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            ),
            "variableNamingConvention": "flat",
            "numberOfEventIndicators": str(model.dae.zero.numel()),
        },
    )
    tag = "ModelExchange" if ident.kind == "model-exchange" else "CoSimulation"
    kind = ET.SubElement(root, tag, _capabilities(ident))
    files = ET.SubElement(kind, "SourceFiles")
    for name in ident.sources:
        ET.SubElement(files, "File", {"name": name})
    units = sorted({model.unit(n) for n in (*variables.names, *model.defaults)} - {""})
    if units:
        defs = ET.SubElement(root, "UnitDefinitions")
        for u in units:
            ET.SubElement(defs, "Unit", {"name": u})
    cats = ET.SubElement(root, "LogCategories")
    for name in ("logEvents", "logStatusWarning", "logStatusError"):
        ET.SubElement(cats, "Category", {"name": name})
    ET.SubElement(root, "DefaultExperiment", {"startTime": repr(float(ident.start_time))})
    _variables(ET.SubElement(root, "ModelVariables"), model, variables, params)
    _structure(ET.SubElement(root, "ModelStructure"), variables, len(params))
    ET.indent(root)
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)


def _capabilities(ident: Identity) -> dict[str, str]:
    caps = {
        "modelIdentifier": ident.identifier,
        "canNotUseMemoryManagementFunctions": "false",
        "canGetAndSetFMUstate": "false",
        "canSerializeFMUstate": "false",
        "providesDirectionalDerivative": "false",
    }
    if ident.kind == "co-simulation":
        caps |= {"canHandleVariableCommunicationStepSize": "true", "canInterpolateInputs": "false"}
    return caps


def _variables(
    parent: ET.Element, model: Model, variables: Variables, params: list[tuple[str, float]]
) -> None:
    for vr, (name, value) in enumerate(params):
        attrs = {
            "name": name,
            "valueReference": str(vr),
            "causality": "parameter",
            "variability": "tunable",
        }
        var = ET.SubElement(parent, "ScalarVariable", attrs)
        _real(var, {"start": repr(float(value))}, model.unit(name))
    of_derivative = dict(zip(variables.derivatives, variables.states))
    modes = set(model.modes)
    first = len(params) + 1  # ModelVariables' indices count from 1
    for k, (name, slot) in enumerate(zip(variables.names, variables.slots)):
        attrs = {
            "name": name,
            "valueReference": str(len(params) + slot),
            "causality": "local",
            "variability": "discrete" if name in modes else "continuous",
        }
        var = ET.SubElement(parent, "ScalarVariable", attrs)
        real = {}
        if k in of_derivative:
            real["derivative"] = str(first + of_derivative[k])
        _real(var, real, model.unit(name))


def _structure(parent: ET.Element, variables: Variables, n_params: int) -> None:
    first = n_params + 1
    derivatives = ET.SubElement(parent, "Derivatives")
    for k in variables.derivatives:
        ET.SubElement(derivatives, "Unknown", {"index": str(first + k)})
    unknowns = sorted({*variables.states, *variables.derivatives})
    if unknowns:
        initial = ET.SubElement(parent, "InitialUnknowns")
        for k in unknowns:
            ET.SubElement(initial, "Unknown", {"index": str(first + k)})
