"""The compiler's stages, each a function from one immutable form to the next.

``ac.compile(system)`` is their composition::

    flat = flatten(system)                 # FlatDAE: symbol table, residuals, origins
    red = eliminate_aliases(flat)          # Reduced: aliases and constants removed
    ir = reduce_index(red)                 # IndexReduced: Pantelides + dummy derivatives
    blocks = sort_blt(ir)                  # BLT blocks (strong components)
    dae = causalize(ir, blocks)            # SemiExplicit: x' = f(x, z, p, t), 0 = g(...)

and ``acausal.model.assemble(flat)`` runs the stages after ``flatten`` into a ``Model``.

Every form prints as a compiler's dump (``print(red)``) and pickles.
"""

from ..flat import FlatDAE
from ..flatten import flatten
from .alias import Reduced, eliminate_aliases
from .blt import Block, sort_blt
from .causalize import SemiExplicit, causalize
from .index import IndexReduced, reduce_index

__all__ = [
    "flatten",
    "eliminate_aliases",
    "reduce_index",
    "sort_blt",
    "causalize",
    "FlatDAE",
    "Reduced",
    "IndexReduced",
    "Block",
    "SemiExplicit",
]
