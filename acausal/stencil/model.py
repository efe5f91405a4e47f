"""The stencil compile's entry (:func:`compile_stencil`) and the model it returns
(:class:`StencilModel`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import fields
from functools import cached_property

import casadi as cs

from ..errors import ModelError, unknown_name
from ..flat import FlatDAE
from ..flatten import flatten
from ..model import Model, assemble, compile_full
from ..pickling import detached_copy
from ..structure.alias import Reduced
from ..structure.blt import Block
from ..structure.causalize import SemiExplicit
from ..structure.index import IndexReduced
from ..structure.starts import FixedStart, InitialStarts, Start
from ..system import System
from ..table import Table
from .analysis import Small, TooFew, Unfit, agree
from .cells import Cells, cell_name
from .shape import SMALL, Shape, built, shape_of
from .synthesis import Pieces, synthesize


def compile_stencil(system: System) -> Model | None:
    """``system``'s model by the stencil compile, or None where the system has not the
    stencil's form (:func:`.shape.shape_of`, :class:`.analysis.Unfit`): then the full pipeline
    compiles it (and reports its errors)."""
    found = shape_of(system)
    if found is None:
        return None
    tic = time.perf_counter()
    shape, n = found
    for k in SMALL:
        try:
            a = _small(built(shape, k), k)
            plain = agree(a, _small(built(shape, k + 1), k + 1))
            break
        except TooFew:
            continue
        except Unfit:
            return None
    else:
        return None
    pieces = synthesize(a, plain, n)
    recipe = detached_copy(shape, system)  # (the plain components and templates, alone)
    return _model(system.name, a, pieces, recipe, n, {"stencil": time.perf_counter() - tic})


def _small(small: System, k: int) -> Small:
    """The model of the system ``small`` of ``k`` cells, analysed; :class:`Unfit` where
    the full pipeline fails on it or it warns (its errors are the full model's to
    report)."""
    try:
        flat = flatten(small)
        model = assemble(flat)
    except ModelError as exc:
        raise Unfit(str(exc)) from exc
    if flat.unconnected:
        raise Unfit("unconnected connectors")
    init = model.initial_starts
    if init.fixed_others or init.newton or init.modes:
        raise Unfit("fixed starts off the states")
    return Small(model, small, k)


def _model(name: str, small: Small, pieces: Pieces, recipe: Shape, n: int, timings: dict) -> Model:
    """The :class:`StencilModel` of ``pieces``."""
    out = object.__new__(StencilModel)
    values = cs.vertsplit(pieces.start_values)
    starts = tuple(
        None if s is None else Start(v, s[0], s[1]) for s, v in zip(pieces.starts, values)
    )
    # (no column of the index-reduced form, which is not made: the initialization reads a
    # fixed start's column only where it is redundant, and a state's own start is not)
    fixed = tuple(FixedStart(None, k, s) for k, s in enumerate(starts) if s is not None and s.fixed)
    dae = SemiExplicit(pieces.x, cs.SX(0, 1), pieces.ode, cs.SX(0, 1), cs.SX(0, 1), ())
    out.__dict__.update(
        dae=dae,
        names=tuple(pieces.names),
        outputs=pieces.outputs,
        defaults=Table(pieces.defaults),
        breakpoints=pieces.breakpoints,
        timings=Table(timings),
        p=pieces.p,
        t=small.model.t,
        ranges=small.model.ranges,
        alternatives=(),
        initial_starts=InitialStarts(starts, (), (), fixed, ()),
        _states=tuple(pieces.x_names),
        _modes=(),
        _name=name,
        _recipe=recipe,
        _n=n,
        _small_units=small.model.units,
        _plan=small.plan,
    )
    return out


class StencilModel(Model):
    """A model the stencil compile made (the module docstring). Its DAE (``dae``: states
    and their rates, no Newton unknowns), names and outputs, parameters and their values,
    start values and breakpoints are the stencil's, equal to the full pipeline's to
    rounding (the tests compare them); what the simulations read is these alone. The
    stage forms (``flat``, ``reduced``, ``ir``, :attr:`blocks`, the BLT, the dump) are
    the full pipeline's, compiled when first read from a copy of the small system grown
    back to its ``n`` cells: the same names, symbols of their own."""

    @cached_property
    def _full(self) -> Model:
        """The full pipeline's model of this one's system (compiled when first read)."""
        return compile_full(built(self._recipe, self._n))

    @property
    def full(self) -> Model:
        return self._full

    @property
    def flat(self) -> FlatDAE:
        return self._full.flat

    @property
    def reduced(self) -> Reduced:
        return self._full.reduced

    @property
    def ir(self) -> IndexReduced:
        return self._full.ir

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The BLT blocks of the full pipeline's model (see the class docstring)."""
        return self._full.blocks

    @property
    def name(self) -> str:
        return self._name

    @cached_property
    def _index_of(self) -> dict[str, int]:
        return dict(zip(self.names, range(len(self.names))))

    def display(self, expr: cs.SX | float) -> str:
        """An expression of this model's symbols (named by their dotted names) or of its
        forms' as text."""
        return self._full.flat.display(expr)

    def parameter_symbol(self, name: str) -> cs.SX:
        if name not in self._parameter_at:
            raise unknown_name("parameter", name, self.defaults)
        return self.p[self._parameter_at[name]]

    def unit(self, name: str) -> str:
        """The declared unit of ``name``: that of its counterpart in the small model (the
        same quantity of the cell it stands for; a plain component's own)."""
        got = self._cells.split(name)
        if got is not None:
            name = cell_name(got[1], self._plan.source(got[0], self._n))
        return self._small_units.get(name, "")

    @cached_property
    def _cells(self) -> Cells:
        return Cells(list(self._recipe.templates), self._n)

    @cached_property
    def _parameter_at(self) -> dict[str, int]:
        return dict(zip(self.defaults, range(len(self.defaults))))

    def symbol_name(self, sym: cs.SX) -> str:
        return sym.name()

    def with_parameters(self, params: Mapping[str, float]) -> Model:
        """This model with other default parameter values (its full model, if made, too)."""
        values = dict(zip(self.defaults, self.parameter_vector(params)))
        out = object.__new__(StencilModel)
        out.__dict__.update(self.__dict__)
        out.__dict__["defaults"] = Table(values)
        if "_full" in self.__dict__:
            out.__dict__["_full"] = self._full.with_parameters(params)
        return out

    def __getstate__(self) -> dict:
        forms = ("flat", "reduced", "ir")  # (the full pipeline's: made again when read)
        keep = [f.name for f in fields(Model) if f.name not in forms]
        keep += ["p", "t", "ranges", "alternatives", "initial_starts"]
        keep += ["_states", "_modes", "_name", "_recipe", "_n", "_small_units", "_plan"]
        return {k: self.__dict__[k] for k in keep}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
