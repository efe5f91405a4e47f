"""CasADi SX expressions as sympy expressions, and the sign arguments feasibility proofs use.

:func:`to_sympy` replays the instructions of a CasADi function built from the expression
(shared subexpressions are converted once) with sympy operations; :func:`sign_of` proves an
expression positive or negative for every real value of its symbols (sympy's assumptions:
a sum of terms of one sign, even powers, ``exp``, ``sech^2``); :func:`real_zeros` and
:func:`negative_set` find where a univariate polynomial vanishes or is negative.
Everything here gives up (returns None) rather than run sympy on large expressions.
"""

from __future__ import annotations

from collections.abc import Callable

import casadi as cs
import sympy as sp

MAX_OPS = 400  # larger expressions are not handed to sympy's solvers
MAX_DEGREE = 8


def _indicator(cond: sp.Basic) -> sp.Expr:
    """A condition as CasADi uses it in arithmetic: 1 where it holds, else 0."""
    return sp.Piecewise((1, cond), (0, True))


def _condition(value: sp.Expr) -> sp.Basic:
    """The condition of an indicator, or ``value != 0``."""
    if isinstance(value, sp.Piecewise) and len(value.args) == 2:
        (one, cond), (zero, _) = value.args
        if one == 1 and zero == 0:
            return cond
    return sp.Ne(value, 0)


def _sech_sq(b: sp.Expr) -> sp.Expr | None:
    """``sech(z)^2`` for ``b = tanh(z)^2``, so that ``1 - tanh(z)^2`` (CasADi's derivative of
    tanh) stays one positive factor that sympy's sign rules see through."""
    if isinstance(b, sp.Pow) and b.exp == 2 and isinstance(b.base, sp.tanh):
        return sp.sech(b.base.args[0]) ** 2
    return None


_UNARY: dict[int, Callable] = {
    cs.OP_NEG: lambda a: -a,
    cs.OP_SQ: lambda a: a**2,
    cs.OP_TWICE: lambda a: 2 * a,
    cs.OP_INV: lambda a: 1 / a,
    cs.OP_EXP: sp.exp,
    cs.OP_LOG: sp.log,
    cs.OP_SQRT: sp.sqrt,
    cs.OP_SIN: sp.sin,
    cs.OP_COS: sp.cos,
    cs.OP_TAN: sp.tan,
    cs.OP_TANH: sp.tanh,
    cs.OP_SINH: sp.sinh,
    cs.OP_COSH: sp.cosh,
    cs.OP_ASIN: sp.asin,
    cs.OP_ACOS: sp.acos,
    cs.OP_ATAN: sp.atan,
    cs.OP_ASINH: sp.asinh,
    cs.OP_ACOSH: sp.acosh,
    cs.OP_ATANH: sp.atanh,
    cs.OP_FABS: sp.Abs,
    cs.OP_SIGN: sp.sign,
    cs.OP_FLOOR: sp.floor,
    cs.OP_CEIL: sp.ceiling,
    cs.OP_LOG1P: lambda a: sp.log(1 + a),
    cs.OP_EXPM1: lambda a: sp.exp(a) - 1,
    cs.OP_ERF: sp.erf,
    cs.OP_NOT: lambda a: 1 - a,
}
_BINARY: dict[int, Callable] = {
    cs.OP_ADD: lambda a, b: a + b,
    cs.OP_SUB: lambda a, b: _sech_sq(b) if a == 1 and _sech_sq(b) is not None else a - b,
    cs.OP_MUL: lambda a, b: a * b,
    cs.OP_DIV: lambda a, b: a / b,
    cs.OP_POW: lambda a, b: a**b,
    cs.OP_CONSTPOW: lambda a, b: a**b,
    cs.OP_FMIN: sp.Min,
    cs.OP_FMAX: sp.Max,
    cs.OP_ATAN2: sp.atan2,
    cs.OP_HYPOT: lambda a, b: sp.sqrt(a**2 + b**2),
    cs.OP_LT: lambda a, b: _indicator(sp.Lt(a, b)),
    cs.OP_LE: lambda a, b: _indicator(sp.Le(a, b)),
    cs.OP_EQ: lambda a, b: _indicator(sp.Eq(a, b)),
    cs.OP_NE: lambda a, b: _indicator(sp.Ne(a, b)),
    cs.OP_AND: lambda a, b: _indicator(sp.And(_condition(a), _condition(b))),
    cs.OP_OR: lambda a, b: _indicator(sp.Or(_condition(a), _condition(b))),
    cs.OP_IF_ELSE_ZERO: lambda c, a: sp.Piecewise((a, _condition(c)), (0, True)),
    cs.OP_COPYSIGN: lambda a, b: sp.Abs(a) * sp.sign(b),
}


class NotConvertible(Exception):
    """The expression uses an operation sympy has no counterpart for here."""


def number(value: float) -> sp.Expr:
    """An integer-valued float as a sympy Integer (exact), others as Float."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return sp.Integer(int(value))
    return sp.Float(value)


def to_sympy(expr: cs.SX, namer: Callable[[cs.SX], sp.Symbol]) -> sp.Expr | sp.Matrix:
    """``expr`` (scalar or matrix SX) in sympy; ``namer`` gives each SX symbol's sympy symbol."""
    expr = cs.SX(expr)
    syms = cs.symvar(expr)
    fun = cs.Function("to_sympy", [cs.vertcat(*syms)] if syms else [cs.SX(0, 1)], [expr])
    inputs = [namer(s) for s in syms]
    work: dict[int, sp.Expr] = {}
    rows, cols = expr.size1(), expr.size2()
    out = [sp.Integer(0)] * (rows * cols)
    sparsity = expr.sparsity()
    nz_rows, nz_cols = sparsity.get_triplet()
    for k in range(fun.n_instructions()):
        op = fun.instruction_id(k)
        args = fun.instruction_input(k)
        res = fun.instruction_output(k)
        if op == cs.OP_INPUT:
            work[res[0]] = inputs[args[1]]
        elif op == cs.OP_CONST:
            work[res[0]] = number(fun.instruction_constant(k))
        elif op == cs.OP_OUTPUT:
            nz = res[1]
            out[nz_cols[nz] * rows + nz_rows[nz]] = work[args[0]]
        elif op in _UNARY:
            work[res[0]] = _UNARY[op](work[args[0]])
        elif op in _BINARY:
            work[res[0]] = _BINARY[op](work[args[0]], work[args[1]])
        else:
            raise NotConvertible(f"CasADi operation {op} has no sympy counterpart here")
    if rows == 1 and cols == 1:
        return out[0]
    return sp.Matrix(cols, rows, out).T  # out is column-major


def tidy(expr: sp.Expr) -> sp.Expr:
    """``1 - tanh(z)^2`` as ``sech(z)^2``, which sympy knows is positive for real ``z``."""
    for t in expr.atoms(sp.tanh):
        expr = expr.subs(1 - t**2, sp.sech(t.args[0]) ** 2)
    return expr


def small(expr: sp.Expr) -> bool:
    return sp.count_ops(expr) <= MAX_OPS


def sign_of(expr: sp.Expr) -> int | None:
    """+1 if ``expr > 0``, -1 if ``expr < 0`` for every real value of its symbols (within
    their assumptions), 0 if it is identically zero, None when sympy cannot tell."""
    expr = tidy(sp.sympify(expr))
    if expr == 0:
        return 0
    for candidate in (expr, sp.expand(expr) if small(expr) else None):
        if candidate is None:
            continue
        if candidate.is_positive:
            return 1
        if candidate.is_negative:
            return -1
    return None


def is_nonnegative(expr: sp.Expr) -> bool | None:
    """True if ``expr >= 0`` for every real value of its symbols, None if unknown."""
    expr = tidy(sp.sympify(expr))
    for candidate in (expr, sp.expand(expr) if small(expr) else None):
        if candidate is not None and candidate.is_nonnegative:
            return True
    return None


def univariate_polynomial(expr: sp.Expr) -> sp.Symbol | None:
    """The one symbol of a univariate polynomial of modest degree, else None."""
    free = sorted(expr.free_symbols, key=str)
    if len(free) != 1 or not small(expr) or not expr.is_polynomial(free[0]):
        return None
    degree = sp.degree(sp.expand(expr), free[0])
    return free[0] if 0 < degree <= MAX_DEGREE else None


def real_zeros(expr: sp.Expr) -> tuple[sp.Symbol, list[sp.Expr]] | None:
    """``(symbol, real roots)`` of a univariate polynomial (exact where sympy finds them),
    None for other expressions."""
    var = univariate_polynomial(expr)
    if var is None:
        return None
    roots = sp.Poly(sp.expand(expr), var).real_roots()
    return var, sorted(set(roots), key=lambda r: float(r))


def negative_set(expr: sp.Expr) -> tuple[sp.Symbol, sp.Set] | None:
    """``(symbol, set where expr < 0)`` for a univariate polynomial, else None."""
    var = univariate_polynomial(expr)
    if var is None:
        return None
    region = sp.solve_univariate_inequality(sp.expand(expr) < 0, var, relational=False)
    return var, region


def solve_unique(eq: sp.Expr, var: sp.Symbol) -> sp.Expr | None:
    """The one solution of ``eq = 0`` for ``var`` when it is linear in ``var``, else None."""
    if not small(eq) or var not in eq.free_symbols:
        return None
    expanded = sp.expand(eq)
    if not expanded.is_polynomial(var) or sp.degree(expanded, var) != 1:
        return None
    coef = expanded.coeff(var, 1)
    if var in coef.free_symbols or coef == 0:
        return None
    return sp.cancel(-expanded.coeff(var, 0) / coef)


MAX_FACTOR_SYMBOLS = 2


def text(expr: sp.Expr, digits: int = 4) -> str:
    """Short text of an expression: factored when it is a polynomial in at most
    :data:`MAX_FACTOR_SYMBOLS` symbols, floats rounded. (Multivariate factoring, Wang's
    algorithm, can take minutes on a law with its weights, depending on the order sympy
    gives the symbols, which changes with Python's string hashing from run to run.)"""
    expr = tidy(sp.sympify(expr))
    symbols = expr.free_symbols
    if small(expr) and 0 < len(symbols) <= MAX_FACTOR_SYMBOLS and expr.is_polynomial(*symbols):
        try:
            expr = sp.factor(expr)
        except (sp.PolynomialError, ValueError):  # pragma: no cover - sympy corner cases
            pass
    floats = {f: sp.Float(f, digits) for f in expr.atoms(sp.Float)}
    return str(expr.xreplace(floats)) if floats else str(expr)


def value_text(value: sp.Expr, digits: int = 4) -> str:
    """A root: exact text when short (``sqrt(3)/3``), with its decimal value."""
    exact = str(value)
    approx = f"{float(value):.{digits}g}"
    return approx if len(exact) > 16 or exact == approx else f"{exact} = {approx}"


def set_text(region: sp.Set, digits: int = 4) -> str:
    """``(-1, 0) U (0, 1)`` for a union of open intervals, rounded."""

    def bound(b: sp.Expr) -> str:
        return str(b) if b.is_infinite else f"{float(b):.{digits}g}"

    parts = region.args if isinstance(region, sp.Union) else (region,)
    out = []
    for part in parts:
        if isinstance(part, sp.Interval):
            left = "[" if not part.left_open else "("
            right = "]" if not part.right_open else ")"
            out.append(f"{left}{bound(part.start)}, {bound(part.end)}{right}")
        else:
            out.append(str(part))
    return " U ".join(out) if out else "nowhere"
