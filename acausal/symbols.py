"""Scalar quantities of a model and the symbolic operations on them.

A symbol is identified by its *name*, never by a table: a component's variable, parameter
or discrete mode is a CasADi ``SX`` symbol named ``@<kind><token>:<local>``, where the kind
letter is ``v`` (variable), ``p`` (parameter) or ``m`` (discrete mode) and ``token`` is the
owning component's random token; ``der(x)`` is the symbol named ``der(<name of x>)``.
Two symbols with one name are one quantity: flattening (:mod:`acausal.flatten`) gathers
them by name and gives each its dotted name (``C1.v``, ``der(C1.v)``) in its symbol table,
so a copied or unpickled component keeps its meaning, and nothing here keeps a registry.

``der(e)`` of an expression follows the chain rule,
``d/dt e(q, p, t) = sum_k (de/dq_k) der(q_k) + de/dt`` with parameters and modes constant.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence
from numbers import Real
from typing import TYPE_CHECKING

import casadi as cs
import numpy as np

from .errors import EquationError, ParameterError

if TYPE_CHECKING:
    from .component import Component

#: The independent variable of every model (forms carry their own ``t`` after compiling).
time = cs.SX.sym("time")

KIND_LETTERS = {"variable": "v", "parameter": "p", "discrete": "m"}
_CONSTANT_LETTERS = ("p", "m")


def new_token() -> str:
    """A random token for a component's symbols: unique across processes and copies."""
    return secrets.token_hex(5)


def new_tokens(n: int) -> list[str]:
    """``n`` tokens as :func:`new_token` makes them, from one draw of random bytes."""
    text = secrets.token_hex(5 * n)
    return [text[k : k + 10] for k in range(0, 10 * n, 10)]


#: CasADi's serialization of a dense column of ``n`` distinct symbols (version 3 of its
#: format): a header, the column's sparsity as ``n + 4`` integers (``n``, 1, the column
#: pointers 0 and ``n``, the row of each entry; or, as CasADi also writes and reads a
#: dense one, the three ``n``, 1, 1), ``n`` again, then each entry's node as its
#: operation (a parameter: a symbol), its name's length (4 bytes) and its name.
_HEADER = b"y\xdf\r\x86Hp\x00\x00\x03" + bytes(8) + b"d"
_NODE = b"d" + (int(cs.OP_PARAMETER).to_bytes(8, "little"))

#: CasADi's text stream writes each byte as two letters, ``a + low nibble`` then ``a +
#: high nibble``: here, by byte, those two letters as one little-endian 16-bit word
#: (a byte array encoded by one indexing, written out as the letters' bytes).
_LETTERS = (97 + (np.arange(256) & 15) + ((97 + (np.arange(256) >> 4)) << 8)).astype("<u2")

#: :func:`symbols_around` deserializes at most about this many symbols at a time: the
#: text (some 90 letters a symbol) and CasADi's two copies of it then stay in the
#: processor's cache (one column of 800,000 symbols: 1.3 s, in parts: 0.9 s).
_CHUNK = 1 << 15


def _letters(data: bytes | np.ndarray) -> np.ndarray:
    """Bytes (an array of ``uint8``, or ``bytes``) as CasADi's text stream writes them:
    two letters each, as :data:`_LETTERS`' words."""
    return _LETTERS[np.frombuffer(data, dtype=np.uint8)]


def _serialized(
    around: Sequence[tuple[str, str]], tokens: Sequence[str], compact: bool = True
) -> str:
    """The serialization of :func:`symbols_around`'s column, written in bulk (numpy): one
    row of letters per token, the nodes of its names, its token's letters written into
    each; its sparsity the three integers of a dense one (``compact``: a sixth less text
    to read than the row of each entry) or as CasADi writes a column's."""
    width = len(tokens[0])
    if any(len(t) != width for t in tokens):
        raise ValueError("symbols_around: tokens of different lengths")
    pieces, slots, at = [], [], 0
    for a, b in around:
        a, b = a.encode(), b.encode()
        node = _NODE + (len(a) + width + len(b)).to_bytes(4, "little") + a
        pieces.append(node + bytes(width) + b)
        slots.append(at + len(node))
        at += len(pieces[-1])
    row = _letters(b"".join(pieces))
    body = np.empty((len(tokens), row.size), dtype=row.dtype)
    body[:] = row
    text = _letters("".join(tokens).encode()).reshape(len(tokens), width)
    for slot in slots:
        body[:, slot : slot + width] = text
    n = len(tokens) * len(around)
    if compact:
        sparsity = np.array([3, n, 1, 1, n], dtype="<i8")
    else:
        sparsity = np.concatenate([[n + 4, n, 1, 0, n], np.arange(n), [n]]).astype("<i8")
    out = np.concatenate([_letters(_HEADER), _letters(sparsity.view(np.uint8)), body.ravel()])
    return str(out.view(np.uint8), "ascii")


def named_around(around: Sequence[tuple[str, str]], tokens: Sequence[str]) -> list[str]:
    """The names ``a + token + b``, for each token each ``(a, b)`` of ``around``."""
    return [f"{a}{t}{b}" for t in tokens for a, b in around]


def _writes_as_casadi() -> bool:
    """Whether :func:`_serialized` writes what CasADi's own serializer writes, and CasADi
    reads its compact form as that dense column of those symbols."""
    around, tokens = [("@v", ":p.v"), ("der(@v", ":x)")], ["0123456789", "abcdef0123"]
    names = named_around(around, tokens)
    if _serialized(around, tokens, False) != cs.vertcat(*map(cs.SX.sym, names)).serialize():
        return False
    read = cs.SX.deserialize(_serialized(around, tokens))
    return read.shape == (4, 1) and read.is_dense() and [s.name() for s in read.elements()] == names


#: (checked once, at import: a constant of the installed CasADi)
_BULK = _writes_as_casadi()


def symbols_around(around: Sequence[tuple[str, str]], tokens: Sequence[str]) -> cs.SX:
    """A column of new symbols named ``a + token + b``, for each token (all of one length)
    each ``(a, b)`` of ``around`` (each its own node, as ``cs.SX.sym(name)`` makes one):
    made by deserializations of some :data:`_CHUNK` symbols each instead of one binding
    call per symbol (3-4 us each); each by ``cs.SX.sym`` if this CasADi writes another
    format."""
    if not tokens or not around:
        return cs.SX(0, 1)
    if not _BULK:
        return cs.vertcat(*map(cs.SX.sym, named_around(around, tokens)))
    step = max(1, _CHUNK // len(around))
    parts = [
        cs.SX.deserialize(_serialized(around, tokens[at : at + step]))
        for at in range(0, len(tokens), step)
    ]
    return parts[0] if len(parts) == 1 else _written(parts)


def derivative_name(name: str, order: int = 1) -> str:
    """``der(der(name))`` for ``order`` 2."""
    return "der(" * order + name + ")" * order


def derivative_names(names: list[str], order: int = 1) -> list[str]:
    """:func:`derivative_name` of each of ``names`` (in bulk: no call per name)."""
    a, z = "der(" * order, ")" * order
    return [f"{a}{name}{z}" for name in names]


def split_derivative(name: str) -> tuple[str, int]:
    """``("x", 2)`` for ``der(der(x))``."""
    order = 0
    while name.startswith("der(") and name.endswith(")"):
        name, order = name[4:-1], order + 1
    return name, order


def is_constant_name(name: str) -> bool:
    """Parameters and discrete modes (constant between events) by their symbol's name."""
    return len(name) > 1 and name[0] == "@" and name[1] in _CONSTANT_LETTERS


class Quantity:
    """A scalar unknown, parameter or discrete mode declared by a component.

    ``kind`` is ``"variable"``, ``"parameter"`` or ``"discrete"``; ``sym`` is its symbol,
    named from the owner's token and the local name (see the module docstring); ``unit``
    its declared unit (``""`` when none was declared).
    """

    __slots__ = (
        "owner",
        "local",
        "kind",
        "key",
        "sym",
        "start",
        "fixed",
        "value",
        "state_priority",
        "unit",
    )

    def __init__(
        self,
        owner: Component,
        local: str,
        kind: str,
        *,
        start: object = None,
        fixed: bool = False,
        value: float | None = None,
        state_priority: int = 0,
        unit: str = "",
        sym: cs.SX | None = None,
    ) -> None:
        self.owner = owner
        self.local = local
        self.kind = kind
        self.key = f"@{KIND_LETTERS[kind]}{owner.token}:{local}"  # the symbol's name
        # (``sym``: the symbol of that name made already, by an array of components)
        self.sym = cs.SX.sym(self.key) if sym is None else sym
        self.start = start
        self.fixed = fixed
        self.value = value
        self.state_priority = state_priority
        self.unit = unit  # a unit string pint parses ("V", "N*m", "1"); "" = undeclared

    @property
    def is_constant(self) -> bool:
        """Parameters, and discrete modes between events: their time derivative is zero."""
        return self.kind in ("parameter", "discrete")

    @property
    def name(self) -> str:
        """Full dotted name, e.g. ``motor.R.p.v``."""
        return f"{self.owner.full_name}.{self.local}"

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


def as_sx(value: cs.SX | float) -> cs.SX:
    """``value`` as an SX: itself if it is one. (CasADi's copy constructor ``cs.SX(sx)``
    costs some 70 us through the Python binding, as much as a hundred arithmetic
    operations; on every equation of a large model that adds up to seconds.)"""
    return value if isinstance(value, cs.SX) else cs.SX(value)


#: :func:`vstack` writes at most this many parts one by one; more go to ``cs.vertcat``.
FEW_PARTS = 16


def vstack(parts: Sequence[cs.SX]) -> cs.SX:
    """``cs.vertcat(*parts)`` of SX column vectors: for a few dense parts, each written
    into its slice of the nonzeros of one dense vector (:func:`_written`). CasADi's
    ``vertcat`` copies every entry three times (through two transposes), which costs
    0.25 s for 300,000 symbols against 0.03 s for the writes. (Any other parts:
    ``cs.vertcat`` itself, which keeps a part's structural zeros.)"""
    if len(parts) > FEW_PARTS or not all(
        isinstance(p, cs.SX) and p.size2() == 1 and p.is_dense() for p in parts
    ):
        return cs.vertcat(*parts)
    return _written(parts)


def _written(parts: Sequence[cs.SX]) -> cs.SX:
    """Dense SX columns stacked: each written into its slice of the nonzeros of one dense
    vector (a dense vector of zeros to write into, and writes through its rows, would
    cost as much again as CasADi's ``vertcat``)."""
    sizes = [p.size1() for p in parts]
    out, at = cs.SX(cs.Sparsity.dense(sum(sizes), 1)), 0  # (every entry written below)
    for p, n in zip(parts, sizes):
        if n:
            out.nz[at : at + n] = p
        at += n
    return out


def scalars(column: cs.SX) -> list[cs.SX]:
    """The entries of an SX column, each a 1 x 1 SX, as ``cs.vertsplit`` gives them; for
    a dense column by ``elements()``, which makes the same scalars in two thirds of the
    time (a large model's symbols and residuals are millions of them)."""
    return column.elements() if column.is_dense() else cs.vertsplit(column)


def column_entries(column: cs.SX, rows: Sequence[int]) -> cs.SX:
    """The entries ``rows`` of a column vector, as a column: one indexing, half the cost of
    ``column[rows, 0]`` (CasADi indexes a 1 x 1 by a list as a row, 1 x 0 for an empty
    one, hence the ``vec``); of a dense one, its nonzeros ``rows`` (the same entries, in
    half the time again)."""
    if column.is_dense():
        picked = column.nz[rows]  # (a row where the column is 1 x 1 or a row)
        return picked if picked.size2() == 1 else cs.vec(picked)
    return cs.vec(column[rows])


def der(expr: cs.SX | float) -> cs.SX:
    """Time derivative of an expression of variables, parameters and ``time``."""
    expr = as_sx(expr)
    if not expr.is_scalar():
        return cs.vertcat(*[der(expr[k]) for k in range(expr.numel())])
    if expr.is_symbolic():
        name = expr.name()
        if name == "time":
            return cs.SX(1)
        if is_constant_name(name):
            return cs.SX(0)
        if not (name.startswith("@") or name.startswith("der(")):
            raise EquationError(
                f"der(): symbol {name!r} was not declared by a component; create variables "
                "with Component.variable()"
            )
        return cs.SX.sym(derivative_name(name))
    syms = cs.symvar(expr)
    if not syms:
        return cs.SX(0)
    rates = cs.vertcat(*[der(s) for s in syms])
    return cs.jtimes(expr, cs.vertcat(*syms), rates)


def check_value(owner: str, name: str, value: object) -> float:
    """A parameter value as a finite float, or a :class:`ParameterError` naming it."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ParameterError(
            f"parameter {owner}.{name} = {value!r} is not a number; give a finite float"
        )
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError(
            f"parameter {owner}.{name} = {value!r} is not a finite number; give a finite float"
        )
    return value


# Math on symbols: CasADi's elementwise functions work on SX and on floats alike.
exp, log, sin, cos, tan, tanh, sinh, cosh = (
    cs.exp,
    cs.log,
    cs.sin,
    cs.cos,
    cs.tan,
    cs.tanh,
    cs.sinh,
    cs.cosh,
)
sqrt, atan, atan2, asin, acos, fabs, sign = (
    cs.sqrt,
    cs.atan,
    cs.atan2,
    cs.asin,
    cs.acos,
    cs.fabs,
    cs.sign,
)
fmin, fmax = cs.fmin, cs.fmax


def if_else(cond: cs.SX, if_true: cs.SX | float, if_false: cs.SX | float) -> cs.SX:
    """``if_true`` where ``cond`` holds, else ``if_false`` (both branches are evaluated)."""
    return cs.if_else(cond, if_true, if_false)
