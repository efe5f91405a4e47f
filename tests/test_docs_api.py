"""Every public name has its entry in the API reference's sources (docs/api/*.rst).

Public names: each name in the ``__all__`` of ``acausal``, ``acausal.structure``,
``solvers`` and ``learning``, and each component class a library module exposes
(``components.electrical.Resistor``, ...). An entry is a Sphinx object directive naming it
by its public path (``.. autofunction:: learning.fit``, ``.. py:data:: acausal.time``), so a
name added to ``__all__`` without documentation fails here, without building the site.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import acausal as ac
import learning
import solvers
from components import electrical, planar, rotational, thermal, translational

API = Path(__file__).resolve().parents[1] / "docs" / "api"
DIRECTIVE = re.compile(r"^\.\. (?:auto\w+|py:\w+):: ([\w.]+)\s*$", re.MULTILINE)


def documented() -> set[str]:
    """The dotted names the API pages' directives document."""
    return {m.group(1) for page in API.glob("*.rst") for m in DIRECTIVE.finditer(page.read_text())}


def public_names() -> list[str]:
    names = [
        f"{pkg.__name__}.{n}"
        for pkg in (ac, ac.structure, solvers, learning)
        for n in pkg.__all__
        if not inspect.ismodule(getattr(pkg, n))
    ]
    for module in (electrical, translational, rotational, planar, thermal):
        names += [
            f"{module.__name__}.{n}"
            for n, obj in vars(module).items()
            if not n.startswith("_") and inspect.isclass(obj) and issubclass(obj, ac.Component)
        ]
    return names


def test_the_public_surface_is_found():
    names = public_names()
    # the packages' own lists, not an empty scan: a few names every user meets
    for name in (
        "acausal.compile",
        "solvers.simulate",
        "learning.fit",
        "components.electrical.Resistor",
    ):
        assert name in names


def test_every_public_name_has_an_api_entry():
    missing = [name for name in public_names() if name not in documented()]
    assert not missing, f"no entry in docs/api/*.rst (add a directive for each): {missing}"


def test_api_entries_name_public_objects():
    # an entry whose name was removed or renamed would be an empty section in the built site
    public = set(public_names())
    modules = {"acausal", "acausal.structure", "solvers", "learning", "components"}
    modules |= {f"components.{m}" for m in ("electrical", "translational", "rotational")}
    modules |= {"components.planar", "components.thermal", "components.friction"}
    stale = sorted(documented() - public - modules)
    assert not stale, f"API entries for names that are not public: {stale}"
