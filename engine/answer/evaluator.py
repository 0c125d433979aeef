"""Restricted evaluator for model-written ``def solution(): ...`` programs ("program of thought").

Model output is untrusted, so it never reaches Python's compiler: the source is parsed with
:func:`ast.parse`, checked against a whitelist of node types, and then interpreted node by node here,
under limits on steps, wall-clock time, integer size, sequence length and nesting depth. Anything not
whitelisted raises :class:`ProgramRejected` before a single node runs; errors and exhausted limits at
run time raise :class:`ProgramFailed`. Both messages name the construct or limit and the source line.
"""

from __future__ import annotations

import ast
import logging
import math
import operator
import re
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.errors import EngineError

logger = logging.getLogger(__name__)

MAX_SOURCE_CHARS = 20_000
MAX_AST_DEPTH = 100
MAX_VALUE_DEPTH = 20  # nesting of lists/tuples/dicts built at run time
MAX_ROUND_DIGITS = 100
ALLOWED_CALLS = frozenset({"round", "abs", "min", "max", "sum", "len", "float", "int", "range"})

_SCALARS = (int, float, str, bool, type(None))
_NUMBERS = (int, float)  # bool is an int
_SEQUENCES = (list, tuple, str)
_ALLOWED_NODES = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.For,
    ast.Return, ast.Pass, ast.Break, ast.Continue, ast.Expr, ast.Constant, ast.Name, ast.Tuple, ast.List,
    ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice,
    ast.Call, ast.Load, ast.Store, ast.And, ast.Or, ast.Not, ast.UAdd, ast.USub,
)  # fmt: skip
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}  # fmt: skip
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}  # fmt: skip
_CONSTRUCT_NAMES: dict[type, str] = {
    ast.Import: "import", ast.ImportFrom: "import", ast.Attribute: "attribute access",
    ast.Lambda: "lambda", ast.ListComp: "comprehension", ast.SetComp: "comprehension",
    ast.DictComp: "comprehension", ast.GeneratorExp: "generator expression", ast.While: "while loop",
    ast.FunctionDef: "nested function definition", ast.AsyncFunctionDef: "async function",
    ast.ClassDef: "class definition", ast.Global: "global statement", ast.Nonlocal: "nonlocal statement",
    ast.JoinedStr: "f-string", ast.FormattedValue: "f-string", ast.Starred: "starred expression",
    ast.NamedExpr: "assignment expression (:=)", ast.Try: "try statement", ast.With: "with statement",
    ast.Raise: "raise statement", ast.Assert: "assert statement", ast.Delete: "del statement",
    ast.Yield: "yield", ast.YieldFrom: "yield", ast.Await: "await", ast.Set: "set literal",
    ast.Match: "match statement", ast.AsyncFor: "async for", ast.AsyncWith: "async with",
}  # fmt: skip
_ARITY = {"round": (1, 2), "sum": (1, 2), "range": (1, 3), "min": (1, 10**6), "max": (1, 10**6)}
_FENCE = re.compile(r"```[ \t]*(?:python3?|py)?[ \t]*\r?\n(.*?)(?:```|\Z)", re.S | re.I)
_DRIVER_LINE = re.compile(r"(print\(.*\)|(\w+\s*=\s*)?solution\(\))\s*(#.*)?")


class ProgramRejected(EngineError):
    """The program does not parse or uses a construct outside the whitelist; nothing was run."""


class ProgramFailed(EngineError):
    """The program was accepted but failed while running: an error, or a step, time or size limit."""


@dataclass(frozen=True)
class EvalResult:
    """The outcome of running ``solution()``.

    Attributes:
        value: What ``solution()`` returned (never a container).
        variables: Final local variables of ``solution()`` holding simple values, for the audit trace.
        steps: Number of AST nodes evaluated.
    """

    value: float | int | str | bool | None
    variables: dict[str, object]
    steps: int


class _Return(Exception):
    def __init__(self, value: object) -> None:
        self.value = value


class _Jump(Exception):
    """``break`` or ``continue`` unwinding to the enclosing loop."""

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword


def extract_program(text: str) -> str:
    """Pull the program out of a model answer.

    Prefers the first fenced code block that defines ``solution``; otherwise takes the raw text from
    ``def solution`` to the end of its indented body. Top-level driver lines the model often adds
    (``print(solution())``, ``answer = solution()``, an ``if __name__ == "__main__":`` block) are dropped,
    since they would only be rejected.

    Args:
        text: Raw model output, possibly markdown with prose around the code.

    Returns:
        The program source.

    Raises:
        ProgramRejected: No ``def solution`` was found.
    """
    for block in _FENCE.findall(text):
        if "def solution" in block:
            return _strip_driver(textwrap.dedent(block))
    start = text.find("def solution")
    if start < 0:
        raise ProgramRejected("no 'def solution():' found in the model output")
    lines = text[start:].splitlines()  # the def line, then its body up to the first unindented line
    end = next((i for i, ln in enumerate(lines[1:], 1) if ln.strip() and not ln[0].isspace()), len(lines))
    return "\n".join(lines[:end]).rstrip() + "\n"


def _strip_driver(code: str) -> str:
    kept: list[str] = []
    in_main = False
    for line in code.splitlines():
        top_level = bool(line.strip()) and not line[0].isspace()
        if top_level:
            in_main = line.startswith("if __name__")
        if in_main or (top_level and _DRIVER_LINE.fullmatch(line.strip())):
            logger.debug("dropping driver line %r", line)
            continue
        kept.append(line)
    return "\n".join(kept).strip() + "\n"


def run_program(
    source: str,
    *,
    max_steps: int = 20_000,
    timeout_s: float = 1.0,
    max_int_bits: int = 256,
    max_seq_len: int = 1000,
) -> EvalResult:
    """Validate and interpret ``source``, then call its ``solution()``.

    Args:
        source: Program text: ``def solution():`` plus optional module-level constant assignments.
        max_steps: Most AST nodes to evaluate.
        timeout_s: Wall-clock limit in seconds.
        max_int_bits: Largest integer allowed, in bits; checked before ``**`` and sequence repetition.
        max_seq_len: Longest list, tuple, string, dict or range allowed.

    Returns:
        The returned value, the final simple-valued locals and the step count.

    Raises:
        ProgramRejected: The source does not parse or uses a construct outside the whitelist.
        ProgramFailed: Running it raised an error, exceeded a limit or returned no scalar value.
    """
    if len(source) > MAX_SOURCE_CHARS:
        raise ProgramRejected(f"program is {len(source)} characters long, over the {MAX_SOURCE_CHARS} limit")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise ProgramRejected(f"syntax error: {exc.msg} (line {exc.lineno})") from exc
    except (RecursionError, MemoryError) as exc:  # the parser itself gives up on pathological nesting
        raise ProgramRejected("program is nested too deeply to parse") from exc
    except ValueError as exc:  # e.g. null bytes
        raise ProgramRejected(f"program could not be parsed: {exc}") from exc
    _validate(tree)
    interp = _Interpreter(max_steps, timeout_s, max_int_bits, max_seq_len)
    try:
        for stmt in tree.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.Expr)):
                interp.exec_stmt(stmt, interp.globals)
        func = next(s for s in tree.body if isinstance(s, ast.FunctionDef))
        try:
            interp.exec_block(func.body, interp.locals)
            value: object = None
        except _Return as ret:
            value = ret.value
    except _Jump as jump:
        raise ProgramFailed(f"'{jump.keyword}' outside a loop (line {interp.line})") from None
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError, MemoryError) as exc:
        raise ProgramFailed(f"{_describe_error(exc)} (line {interp.line})") from exc
    if value is None:
        raise ProgramFailed("solution() returned no value")
    if not isinstance(value, _SCALARS):
        raise ProgramFailed(f"solution() returned a {type(value).__name__}, expected a number")
    variables = {k: v for k, v in ((k, _simple(v)) for k, v in interp.locals.items()) if v is not _SKIP}
    logger.debug("solution() returned %r after %d steps", value, interp.steps)
    return EvalResult(value=value, variables=variables, steps=interp.steps)


_SKIP = object()
_ERROR_TEXT: dict[type[BaseException], str] = {
    ZeroDivisionError: "division by zero", KeyError: "key {exc} not found",
    OverflowError: "numeric overflow: {exc}", RecursionError: "value nested too deeply",
}  # fmt: skip


def _simple(value: object) -> object:
    """Return a copy of ``value`` fit for the audit trace, or ``_SKIP`` if it is not a simple value."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, _SCALARS) for v in value):
        return type(value)(value)
    if isinstance(value, dict) and all(isinstance(v, _SCALARS) for v in value.values()):
        return dict(value)
    return _SKIP


def _describe_error(exc: BaseException) -> str:
    for kind, text in _ERROR_TEXT.items():
        if isinstance(exc, kind):
            return text.format(exc=exc)
    return f"{type(exc).__name__}: {exc}"


def _reject(what: str, line: int) -> ProgramRejected:
    return ProgramRejected(f"{what} is not allowed (line {line})")


def _validate(tree: ast.Module) -> None:
    """Reject anything outside the whitelist, walking iteratively so deep trees cannot overflow."""
    defs = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            a = stmt.args
            if stmt.name != "solution":
                raise _reject(f"defining function {stmt.name!r} (only 'def solution():')", stmt.lineno)
            if a.posonlyargs or a.args or a.vararg or a.kwonlyargs or a.kwarg:
                raise _reject("giving solution() parameters", stmt.lineno)
            if stmt.decorator_list:
                raise _reject("a decorator", stmt.lineno)
        elif not isinstance(stmt, (ast.Assign, ast.AnnAssign)) and not _is_docstring(stmt):
            what = _CONSTRUCT_NAMES.get(type(stmt), type(stmt).__name__)
            raise _reject(f"{what} at module level (only constants and 'def solution():')", stmt.lineno)
    if len(defs) != 1:
        raise ProgramRejected("the program must define 'def solution():' exactly once")
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 1)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > MAX_AST_DEPTH:
            raise _reject(f"nesting deeper than {MAX_AST_DEPTH} levels", line)
        if isinstance(node, ast.FunctionDef) and depth > 1 or not isinstance(node, _ALLOWED_NODES):
            if type(node) in _BINOPS or type(node) in _CMPOPS:
                continue
            raise _reject(_CONSTRUCT_NAMES.get(type(node), f"{type(node).__name__} node"), line)
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise _reject(f"name {node.id!r} (names starting with '_')", line)
        if isinstance(node, ast.Constant) and not isinstance(node.value, _SCALARS):
            raise _reject(f"constant of type {type(node.value).__name__}", line)
        if isinstance(node, ast.Dict) and None in node.keys:
            raise _reject("dict unpacking (**)", line)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                raise _reject("attribute access", line)
            if not isinstance(node.func, ast.Name):
                raise _reject("calling an expression", line)
            if node.func.id not in ALLOWED_CALLS:
                raise _reject(f"call to {node.func.id!r}", line)
            if node.keywords:
                raise _reject("keyword arguments", line)
        stack.extend((child, depth + 1, line) for child in reversed(list(ast.iter_child_nodes(node))))


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


class _Interpreter:
    """Walks a validated tree; every node costs a step and every result passes the size checks."""

    def __init__(self, max_steps: int, timeout_s: float, max_int_bits: int, max_seq_len: int) -> None:
        self.max_steps, self.timeout_s = max_steps, timeout_s
        self.max_int_bits, self.max_seq_len = max_int_bits, max_seq_len
        self.deadline = time.monotonic() + timeout_s
        self.steps, self.line = 0, 1
        self.globals: dict[str, object] = {}
        self.locals: dict[str, object] = {}

    def tick(self, node: ast.AST) -> None:
        self.steps += 1
        self.line = getattr(node, "lineno", self.line)
        if self.steps > self.max_steps:
            raise ProgramFailed(f"exceeded the step limit of {self.max_steps} (line {self.line})")
        if time.monotonic() > self.deadline:
            raise ProgramFailed(f"exceeded the time limit of {self.timeout_s} s (line {self.line})")

    def fail(self, what: str) -> ProgramFailed:
        return ProgramFailed(f"{what} (line {self.line})")

    def check(self, value: Any) -> Any:
        """Enforce the size limits on a freshly computed value."""
        if isinstance(value, int) and value.bit_length() > self.max_int_bits:
            raise self.fail(f"integer exceeds the {self.max_int_bits}-bit limit")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail("float overflow: result is not finite")
        if isinstance(value, (*_SEQUENCES, dict)):
            self.check_len(len(value))
        elif not isinstance(value, (*_SCALARS, range)):
            raise self.fail(f"result of type {type(value).__name__} is not supported")
        return value

    def check_len(self, size: float) -> None:
        if size > self.max_seq_len:
            raise self.fail(f"sequence of {size} items exceeds the limit of {self.max_seq_len}")

    def measure(self, value: object) -> None:
        """Bound the work of deep operations (comparison, min/max) whatever aliasing built the value."""
        budget, stack = 10 * self.max_seq_len, [(value, 0)]
        while stack:
            item, depth = stack.pop()
            budget -= 1 + (len(item) if isinstance(item, (range, dict)) else 0)
            if budget < 0 or depth > MAX_VALUE_DEPTH:
                raise self.fail("value too large or too deeply nested to compare")
            if isinstance(item, (list, tuple, dict)):
                stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))

    # --- statements -------------------------------------------------------------------------------
    def exec_block(self, body: list[ast.stmt], scope: dict[str, object]) -> None:
        for stmt in body:
            self.exec_stmt(stmt, scope)

    def exec_stmt(self, node: ast.stmt, scope: dict[str, object]) -> None:
        self.tick(node)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is not None:
                value = self.evaluate(node.value, scope)
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    self.assign(target, value, scope)
        elif isinstance(node, ast.AugAssign):
            target = node.target
            if isinstance(target, ast.Subscript):  # evaluate container and key once, as Python does
                container, key = self.evaluate(target.value, scope), self.evaluate(target.slice, scope)
                new = self.binop(node.op, self.subscript(container, key), self.evaluate(node.value, scope))
                self.store_item(container, key, new)
            else:
                assert isinstance(target, ast.Name)  # _validate admits names and subscripts as targets only
                current = self.lookup(target.id, scope)
                self.assign(target, self.binop(node.op, current, self.evaluate(node.value, scope)), scope)
        elif isinstance(node, ast.If):
            self.exec_block(node.body if self.evaluate(node.test, scope) else node.orelse, scope)
        elif isinstance(node, ast.For):
            items = self.evaluate(node.iter, scope)
            if not isinstance(items, (list, tuple, range, str, dict)):
                raise self.fail(f"cannot loop over a {type(items).__name__}")
            for item in tuple(items):
                self.assign(node.target, item, scope)
                try:
                    self.exec_block(node.body, scope)
                except _Jump as jump:
                    if jump.keyword == "break":
                        break
            else:
                self.exec_block(node.orelse, scope)
        elif isinstance(node, ast.Return):
            raise _Return(None if node.value is None else self.evaluate(node.value, scope))
        elif isinstance(node, (ast.Break, ast.Continue)):
            raise _Jump("break" if isinstance(node, ast.Break) else "continue")
        elif isinstance(node, ast.Expr) and not _is_docstring(node):
            self.evaluate(node.value, scope)
        elif not isinstance(node, (ast.Pass, ast.Expr)):
            raise _reject(_CONSTRUCT_NAMES.get(type(node), type(node).__name__), self.line)

    def assign(self, target: ast.expr, value: object, scope: dict[str, object]) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (list, tuple)) or len(value) != len(target.elts):
                raise self.fail(f"cannot unpack {type(value).__name__} into {len(target.elts)} names")
            for elt, item in zip(target.elts, value):
                self.assign(elt, item, scope)
        elif isinstance(target, ast.Subscript):
            self.store_item(self.evaluate(target.value, scope), self.evaluate(target.slice, scope), value)
        else:
            raise _reject(f"assigning to {type(target).__name__}", self.line)

    def store_item(self, container: object, key: object, value: object) -> None:
        if isinstance(container, list) and isinstance(key, int):
            container[key] = value
        elif isinstance(container, dict) and isinstance(key, _SCALARS):
            self.check_len(len(container) + (key not in container))
            container[key] = value
        else:
            raise self.fail(f"cannot assign to an item of a {type(container).__name__}")

    # --- expressions ------------------------------------------------------------------------------
    def lookup(self, name: str, scope: dict[str, object]) -> Any:
        for namespace in (scope, self.globals):
            if name in namespace:
                return namespace[name]
        raise self.fail(f"name {name!r} is not defined")

    def evaluate(self, node: ast.expr, scope: dict[str, object]) -> Any:
        self.tick(node)
        if isinstance(node, ast.Constant):
            return self.check(node.value)
        if isinstance(node, ast.Name):
            return self.lookup(node.id, scope)
        if isinstance(node, (ast.Tuple, ast.List)):
            self.check_len(len(node.elts))
            items = [self.evaluate(elt, scope) for elt in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            self.check_len(len(node.keys))
            pairs = [(self.evaluate(k, scope), self.evaluate(v, scope))  # type: ignore[arg-type]
                     for k, v in zip(node.keys, node.values)]  # fmt: skip
            if not all(isinstance(k, _SCALARS) for k, _ in pairs):
                raise self.fail("dict keys must be numbers, strings, booleans or None")
            return dict(pairs)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.evaluate(node.left, scope), self.evaluate(node.right, scope))
        if isinstance(node, ast.UnaryOp):
            operand = self.evaluate(node.operand, scope)
            if isinstance(node.op, ast.Not):
                return not operand
            if not isinstance(operand, _NUMBERS):
                raise self.fail(f"bad operand type for unary minus or plus: {type(operand).__name__}")
            return -operand if isinstance(node.op, ast.USub) else +operand
        if isinstance(node, ast.BoolOp):
            value = None
            for operand_node in node.values:
                value = self.evaluate(operand_node, scope)
                if bool(value) == isinstance(node.op, ast.Or):
                    break
            return value
        if isinstance(node, ast.Compare):
            left = self.evaluate(node.left, scope)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.evaluate(right_node, scope)
                self.measure(left)
                self.measure(right)
                if not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.evaluate(node.body if self.evaluate(node.test, scope) else node.orelse, scope)
        if isinstance(node, ast.Subscript):
            container = self.evaluate(node.value, scope)
            if isinstance(node.slice, ast.Slice):
                bounds = [None if n is None else self.evaluate(n, scope) for n in
                          (node.slice.lower, node.slice.upper, node.slice.step)]  # fmt: skip
                if not all(b is None or isinstance(b, int) for b in bounds):
                    raise self.fail("slice bounds must be integers")
                key: object = slice(*bounds)
            else:
                key = self.evaluate(node.slice, scope)
            return self.subscript(container, key)
        if isinstance(node, ast.Call):
            name = node.func.id  # type: ignore[attr-defined]  # validation guarantees a Name
            if name in scope or name in self.globals:
                raise self.fail(f"{name!r} is a variable, not a function")
            return self.check(self.call(name, [self.evaluate(arg, scope) for arg in node.args]))
        raise _reject(_CONSTRUCT_NAMES.get(type(node), type(node).__name__), self.line)

    def subscript(self, container: object, key: object) -> Any:
        if isinstance(container, dict) and isinstance(key, _SCALARS):
            return container[key]
        if isinstance(container, (*_SEQUENCES, range)) and isinstance(key, (int, slice)):
            return container[key]
        raise self.fail(f"cannot index a {type(container).__name__} with a {type(key).__name__}")

    def binop(self, op: ast.operator, a: Any, b: Any) -> Any:
        if type(op) not in _BINOPS:
            raise _reject(f"operator {type(op).__name__}", self.line)
        if isinstance(op, ast.Pow) and isinstance(a, int) and isinstance(b, int):
            if abs(a) > 1 and b > self.max_int_bits:  # |a|**b >= 2**b: refuse before computing
                raise self.fail(f"integer power {a}**{b} exceeds the {self.max_int_bits}-bit limit")
        elif isinstance(op, ast.Mod) and isinstance(a, str):
            raise self.fail("string formatting with % is not allowed")
        elif isinstance(op, ast.Mult):
            seq, times = (a, b) if isinstance(a, _SEQUENCES) else (b, a)
            if isinstance(seq, _SEQUENCES) and isinstance(times, int):
                self.check_len(len(seq) * max(times, 0))
        elif isinstance(op, ast.Add) and isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES):
            self.check_len(len(a) + len(b))
        result = _BINOPS[type(op)](a, b)
        if isinstance(result, complex):
            raise self.fail("power gives a complex number")
        return self.check(result)

    def call(self, name: str, args: list[Any]) -> Any:
        """Run one whitelisted builtin after checking its arguments."""
        lo, hi = _ARITY.get(name, (1, 1))
        if not lo <= len(args) <= hi:
            raise self.fail(f"{name}() got {len(args)} arguments")

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise self.fail(f"{name}() needs {what}")

        first = args[0]
        if name in ("round", "abs"):
            need(isinstance(first, _NUMBERS), "a number")
            if len(args) == 2:
                need(isinstance(args[1], int) and abs(args[1]) <= MAX_ROUND_DIGITS, "an int digit count")
            return round(*args) if name == "round" else abs(first)
        if name in ("min", "max"):
            items = first if len(args) == 1 else args
            need(isinstance(items, (list, tuple, range, str, dict)), "a list, tuple or range")
            self.measure(items)
            return min(items) if name == "min" else max(items)
        if name == "sum":
            need(isinstance(first, (list, tuple, range)), "a list, tuple or range")
            need(all(isinstance(v, _NUMBERS) for v in (*first, *args[1:])), "numbers")
            return sum(first, *args[1:])
        if name == "len":
            need(isinstance(first, (*_SEQUENCES, dict, range)), "a list, tuple, str, dict or range")
            return len(first)
        if name in ("float", "int"):
            need(isinstance(first, (*_NUMBERS, str)), "a number or a string")
            return float(first) if name == "float" else int(first)
        need(all(isinstance(v, int) for v in args), "integer arguments")
        span = range(*args)
        size = (span.stop - span.start + span.step - (1 if span.step > 0 else -1)) // span.step
        if size > self.max_seq_len:  # computed by hand: len() overflows beyond sys.maxsize
            raise self.fail(f"range() of {size} items exceeds the limit of {self.max_seq_len}")
        return span
