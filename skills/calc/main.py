#!/usr/bin/env python3
"""calc: evaluate an arithmetic expression safely.

Reads one JSON object on stdin: {"expression": "2 * (3 + 4) ** 2"}.
Writes one JSON object on stdout: {"result": <number>, "expression": "<the expression>"}.

The expression is parsed with ``ast`` and walked node by node; nothing is ever passed to eval or
exec. Allowed: int and float literals, + - * / // % **, unary + and -, parentheses, the
functions sqrt log exp sin cos tan abs round min max and the constants pi, e and tau. Limits:
200 characters, exponents up to 1000 in magnitude, results up to 1e308 in magnitude.
Exit 0 on success, 2 on bad input (including division by zero), 1 on any other failure.
"""

from __future__ import annotations

import ast
import math
import operator
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, serve

MAX_EXPRESSION = 200
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e308
MAX_POW_BITS = 4096
"""Largest integer power computed exactly (bits); bigger ones would only hit MAX_MAGNITUDE."""

Number = int | float

BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}
# name -> (function, min args, max args or None for any)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "sqrt": (math.sqrt, 1, 1),
    "log": (math.log, 1, 2),
    "exp": (math.exp, 1, 1),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
    "abs": (abs, 1, 1),
    "round": (round, 1, 2),
    "min": (min, 1, None),
    "max": (max, 1, None),
}


def check(value: Any) -> Number:
    """Return ``value`` if it is a finite number within the magnitude cap."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SkillError(f"unsupported value of type {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise SkillError("result is not a finite number")
    if abs(value) > MAX_MAGNITUDE:
        raise SkillError("result is too large (limit 1e308)")
    return value


def power(base: Number, exponent: Number) -> Number:
    """Raise ``base`` to ``exponent`` within the exponent and size caps."""
    if abs(exponent) > MAX_EXPONENT:
        raise SkillError(f"exponent {exponent} is too large (limit {MAX_EXPONENT})")
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
        if abs(base).bit_length() * exponent > MAX_POW_BITS:
            raise SkillError("result is too large (limit 1e308)")
    result = base**exponent
    if isinstance(result, complex):
        raise SkillError("result is a complex number (negative base with a fractional exponent)")
    return check(result)


def call(node: ast.Call) -> Number:
    """Evaluate a call to one of the allowed math functions."""
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        allowed = ", ".join(sorted(FUNCTIONS))
        raise SkillError(f"unknown function; allowed: {allowed}")
    if node.keywords:
        raise SkillError(f"{node.func.id}() takes no keyword arguments")
    function, least, most = FUNCTIONS[node.func.id]
    args = [evaluate(arg) for arg in node.args]
    if len(args) < least or (most is not None and len(args) > most):
        wanted = str(least) if least == most else f"{least}..{most or 'n'}"
        raise SkillError(f"{node.func.id}() takes {wanted} argument(s), got {len(args)}")
    if node.func.id == "round" and len(args) == 2:
        if not isinstance(args[1], int) or abs(args[1]) > 100:
            raise SkillError("round() digits must be an integer between -100 and 100")
    if node.func.id in ("min", "max") and len(args) == 1:
        return args[0]
    return check(function(*args))


def evaluate(node: ast.AST) -> Number:
    """Evaluate one node of an allowed arithmetic expression."""
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise SkillError(f"only numbers are allowed, not {node.value!r}")
        return check(node.value)
    if isinstance(node, ast.Name):
        if node.id not in CONSTANTS:
            raise SkillError(f"unknown name {node.id!r}; constants: pi, e, tau")
        return CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return check(UNARY[type(node.op)](evaluate(node.operand)))
    if isinstance(node, ast.BinOp):
        left, right = evaluate(node.left), evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            return power(left, right)
        if type(node.op) in BINARY:
            return check(BINARY[type(node.op)](left, right))
        if isinstance(node.op, ast.BitXor):
            raise SkillError("'^' is not a power operator here; use '**'")
        raise SkillError(f"operator {type(node.op).__name__} is not allowed")
    if isinstance(node, ast.Call):
        return call(node)
    raise SkillError(f"{type(node).__name__} is not allowed in an arithmetic expression")


def calculate(expression: str) -> Number:
    """Parse and evaluate ``expression``."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise SkillError(f"not a valid expression: {exc.msg}") from None
    except ValueError as exc:  # e.g. a NUL character
        raise SkillError(f"not a valid expression: {exc}") from None
    try:
        return evaluate(tree)
    except ZeroDivisionError:
        raise SkillError("division by zero") from None
    except OverflowError:
        raise SkillError("result is too large (limit 1e308)") from None
    except ValueError as exc:
        raise SkillError(f"math error: {exc}") from None
    except RecursionError:
        raise SkillError("expression is nested too deeply") from None


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the payload and compute the result."""
    expression = payload.get("expression")
    if not isinstance(expression, str) or not expression.strip():
        raise SkillError('"expression" must be a non-empty string')
    if len(expression) > MAX_EXPRESSION:
        raise SkillError(f"expression is longer than {MAX_EXPRESSION} characters")
    return {"result": calculate(expression), "expression": expression.strip()}


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))
