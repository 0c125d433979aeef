"""Tests for the restricted program-of-thought evaluator: right answers, hostile programs refused fast."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from engine.answer import evaluator
from engine.answer.evaluator import (
    EvalResult,
    ProgramFailed,
    ProgramRejected,
    extract_program,
    run_program,
)
from engine.errors import EngineError


def _body(*lines: str) -> str:
    return "def solution():\n" + "".join(f"    {line}\n" for line in lines)


# --- ordinary finance programs ---------------------------------------------------------------------


def test_growth_rate_returns_value_and_trace() -> None:
    result = run_program(
        _body(
            "revenue_2022 = 1200.0",
            "revenue_2023 = 1380.0",
            "growth = (revenue_2023 - revenue_2022) / revenue_2022 * 100",
            "return round(growth, 2)",
        )
    )
    assert isinstance(result, EvalResult)
    assert result.value == 15.0
    assert result.variables["revenue_2023"] == 1380.0
    assert result.variables["growth"] == pytest.approx(15.0)
    assert result.steps > 0


def test_ratio_and_margin_with_module_constants() -> None:
    source = (
        "NET_INCOME = 2_500\nREVENUE = 20_000\n\n"
        "def solution() -> float:\n"
        '    """Net margin in percent."""\n'
        "    margin = NET_INCOME / REVENUE * 100\n"
        "    return round(margin, 1)\n"
    )
    assert run_program(source).value == 12.5


def test_average_with_sum_len_and_if_else() -> None:
    source = _body(
        "quarters = [110.5, 98.0, 120.25, 131.25]",
        "average = sum(quarters) / len(quarters)",
        "if average > 100:",
        "    label = 1",
        "else:",
        "    label = 0",
        "return average if label == 1 else -average",
    )
    result = run_program(source)
    assert result.value == pytest.approx(115.0)
    assert result.variables["quarters"] == [110.5, 98.0, 120.25, 131.25]


def test_for_loop_dicts_unpacking_and_builtins() -> None:
    source = _body(
        "segments = {'cloud': 400, 'devices': 250, 'services': 150}",
        "names = ('cloud', 'devices', 'services')",
        "total = 0",
        "for name in names:",
        "    total += segments[name]",
        "largest, smallest = max(segments['cloud'], segments['devices']), min([3, 1, 2])",
        "count = 0",
        "for i in range(1, 10, 2):",
        "    if i == 7:",
        "        break",
        "    count += 1",
        "cagr = (total / 500) ** (1 / 3) - 1",
        "return round(abs(cagr) * 100, 3) + int('0') + float(count - count) + largest * 0 + smallest * 0",
    )
    result = run_program(source)
    assert result.value == pytest.approx(round(((800 / 500) ** (1 / 3) - 1) * 100, 3))
    assert result.variables["total"] == 800
    assert result.variables["count"] == 3


def test_subscript_assignment_slices_and_bool_ops() -> None:
    source = _body(
        "values = [1, 2, 3, 4, 5]",
        "values[0] = 10",
        "by_year = {}",
        "by_year[2023] = 5",
        "tail = values[-2:]",
        "ok = (len(tail) == 2 and not (tail[0] < 0)) or False",
        "return sum(values[:3]) + by_year[2023] if ok else None",
    )
    assert run_program(source).value == 20


def test_no_return_and_container_return_fail() -> None:
    with pytest.raises(ProgramFailed, match="returned no value"):
        run_program(_body("x = 1"))
    with pytest.raises(ProgramFailed, match="returned no value"):
        run_program(_body("return None"))
    with pytest.raises(ProgramFailed, match="returned a list"):
        run_program(_body("return [1, 2]"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return 1 / 0", "division by zero"),
        ("return missing + 1", "name 'missing' is not defined"),
        ("return [1][5]", "IndexError"),
        ("return {'a': 1}['b']", "key 'b' not found"),
        ("return 'a' + 1", "TypeError"),
        ("return (-8) ** 0.5", "complex"),
        ("return 1e308 * 10", "float overflow"),
        ("return 10.0 ** 400", "overflow"),
        ("return int('x')", "ValueError"),
        ("return '%s' % 1", "string formatting"),
    ],
)
def test_runtime_errors_are_program_failed_with_line(body: str, message: str) -> None:
    with pytest.raises(ProgramFailed, match=re.escape(message)) as info:
        run_program(_body("x = 1", body))
    assert "(line 3)" in str(info.value)
    assert isinstance(info.value, EngineError)


def test_syntax_error_is_rejected_with_line() -> None:
    with pytest.raises(ProgramRejected, match=r"syntax error.*\(line 2\)"):
        run_program("def solution():\n    return (1 +\n")


def test_program_shape_is_enforced() -> None:
    with pytest.raises(ProgramRejected, match="exactly once"):
        run_program("X = 1\n")
    with pytest.raises(ProgramRejected, match="parameters"):
        run_program("def solution(x):\n    return x\n")
    with pytest.raises(ProgramRejected, match="function 'helper'"):
        run_program("def helper():\n    return 1\n" + _body("return 1"))
    with pytest.raises(ProgramRejected, match="module level"):
        run_program(_body("return 1") + "print(solution())\n")


# --- extraction --------------------------------------------------------------------------------------


def test_extract_from_fenced_markdown_with_prose() -> None:
    answer = (
        "To compute the operating margin we divide operating income by revenue.\n\n"
        "```python\n"
        "def solution():\n"
        "    operating_income = 4_200\n"
        "    revenue = 28_000\n"
        "    return round(operating_income / revenue * 100, 2)\n"
        "\n"
        "print(solution())\n"
        "```\n\n"
        "The margin is 15%. ```more prose```"
    )
    program = extract_program(answer)
    assert program.startswith("def solution():")
    assert "print" not in program and "prose" not in program
    assert run_program(program).value == 15.0


def test_extract_raw_text_and_main_guard() -> None:
    raw = "Sure! def solution():\n    return 2 + 3\nThat returns five.\n"
    assert extract_program(raw) == "def solution():\n    return 2 + 3\n"
    guarded = "```\ndef solution():\n    return 7\n\nif __name__ == '__main__':\n    print(solution())\n```"
    assert run_program(extract_program(guarded)).value == 7
    with pytest.raises(ProgramRejected, match="no 'def solution"):
        extract_program("The answer is 42.")


# --- security: each hostile program is refused quickly with a message naming the problem ------------

HOSTILE = [
    ("import os\n" + _body("return 1"), ProgramRejected, "import"),
    (_body("import os", "return 1"), ProgramRejected, "import is not allowed (line 2)"),
    (_body("return __import__('os')"), ProgramRejected, "'__import__'"),
    (_body("return ().__class__.__bases__[0].__subclasses__()"), ProgramRejected, "attribute access"),
    (_body("return open('/etc/passwd')"), ProgramRejected, "call to 'open'"),
    (_body("return getattr(1, 'real')"), ProgramRejected, "call to 'getattr'"),
    (_body("return eval('1')"), ProgramRejected, "call to 'eval'"),
    (_body("return type(1)"), ProgramRejected, "call to 'type'"),
    (_body("print(1)", "return 1"), ProgramRejected, "call to 'print'"),
    (_body("return 2**10**10"), ProgramFailed, "bit limit"),
    (_body("return 10**100000"), ProgramFailed, "bit limit"),
    (_body("return [1]*10**9"), ProgramFailed, "exceeds the limit of 1000"),
    (_body("return 'a'*10**10"), ProgramFailed, "exceeds the limit of 1000"),
    (_body("x = [0] * 1000", "x = x + x", "return 1"), ProgramFailed, "exceeds the limit"),
    (_body("x = 3", "for i in range(400):", "    x = x * x", "return 1"), ProgramFailed, "bit limit"),
    (_body("while True:", "    pass"), ProgramRejected, "while loop"),
    (_body("for i in range(10**12):", "    pass"), ProgramFailed, "range() of 1000000000000 items"),
    (_body("for i in range(2**200):", "    pass"), ProgramFailed, "range()"),
    (_body("return " + "(" * 5000 + "1" + ")" * 5000), ProgramRejected, "nested parentheses"),
    (_body("return " + "-" * 15_000 + "1"), ProgramRejected, "nested too deeply"),
    (_body("return " + "+".join(["1"] * 150)), ProgramRejected, "nesting deeper than 100"),
    (_body("return " + "[" * 150 + "]" * 150), ProgramRejected, "nesting deeper than 100"),
    (_body("f = lambda: 1", "return 1"), ProgramRejected, "lambda"),
    (_body("return sum([i for i in range(3)])"), ProgramRejected, "comprehension"),
    (_body("return sum(i for i in range(3))"), ProgramRejected, "generator expression"),
    (_body("def inner():", "    return 1", "return 1"), ProgramRejected, "nested function definition"),
    (_body("x = 1", "return x.real"), ProgramRejected, "attribute access is not allowed (line 3)"),
    (_body("__x = 1", "return 1"), ProgramRejected, "'__x'"),
    (_body("return __builtins__"), ProgramRejected, "'__builtins__'"),
    (_body("x = 1", "return f'{x}'"), ProgramRejected, "f-string"),
    (_body("global y", "return 1"), ProgramRejected, "global statement"),
    (_body("return (y := 1)"), ProgramRejected, "assignment expression"),
    (_body("try:", "    pass", "except Exception:", "    pass", "return 1"), ProgramRejected, "try"),
    (_body("return [*range(3)]"), ProgramRejected, "starred"),
    (_body("return {**{}}"), ProgramRejected, "dict unpacking"),
    (_body("return 1 << 10**6"), ProgramRejected, "LShift"),
    (_body("return b'x'"), ProgramRejected, "constant of type bytes"),
    (_body("return round(1.5, ndigits=1)"), ProgramRejected, "keyword arguments"),
    (_body("return abs"), ProgramFailed, "name 'abs' is not defined"),
    ("@decorator\n" + _body("return 1"), ProgramRejected, "decorator"),
    ("class A:\n    pass\n" + _body("return 1"), ProgramRejected, "class definition"),
    (_body("x = 0", "for i in range(1000):", "    for j in range(1000):", "        x += 1", "return x"),
     ProgramFailed, "step limit"),
    (_body("a = [0]", "for i in range(30):", "    a = [a]", "return a == a"), ProgramFailed, "nested"),
    (_body("a = [0] * 1000", "b = [a] * 1000", "c = [b] * 1000", "d = [[[0] * 1000] * 1000] * 1000",
           "return c == d"), ProgramFailed, "too large"),
    (_body("a = [0]", "a[0] = a", "b = [0]", "b[0] = b", "return a == b"), ProgramFailed, "compare"),
    (_body("return round(5, -10**9)"), ProgramFailed, "digit count"),
    (_body("return int('9' * 900)"), ProgramFailed, "bit limit"),
    (_body("return max()"), ProgramFailed, "max() got 0 arguments"),
    (_body("break"), ProgramFailed, "'break' outside a loop"),
    ("x" * 30_000, ProgramRejected, "characters long"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "error", "message"), HOSTILE)
def test_hostile_programs_refused_fast(source: str, error: type[Exception], message: str) -> None:
    start = time.perf_counter()
    with pytest.raises(error) as info:
        run_program(source)
    elapsed = time.perf_counter() - start
    assert message in str(info.value)
    assert elapsed < 1.0


def test_huge_power_fails_in_under_half_a_second() -> None:
    start = time.perf_counter()
    with pytest.raises(ProgramFailed, match="bit limit"):
        run_program(_body("return 2**10**10"))
    assert time.perf_counter() - start < 0.5


def test_wall_clock_limit() -> None:
    loops = ("for i in range(1000):", "    for j in range(1000):", "        x += 1")
    source = _body("x = 0", *loops, "return x")
    start = time.perf_counter()
    with pytest.raises(ProgramFailed, match="time limit"):
        run_program(source, max_steps=10**9, timeout_s=0.05)
    assert time.perf_counter() - start < 0.5


def test_limits_are_configurable() -> None:
    assert run_program(_body("return 2 ** 1000"), max_int_bits=2048).value == 2**1000
    assert run_program(_body("return len([0] * 5000)"), max_seq_len=5000).value == 5000
    with pytest.raises(ProgramFailed, match="step limit of 5"):
        run_program(_body("a = 1", "b = 2", "return a + b"), max_steps=5)


def test_module_never_calls_exec_or_eval() -> None:
    code = Path(evaluator.__file__).read_text(encoding="utf-8")
    assert "exec(" not in code and "eval(" not in code
