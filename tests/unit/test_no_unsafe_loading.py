"""Nothing stored is unpickled or evaluated; all SQL is parameterised; Chroma filters are typed.

Three static guarantees, checked on the source with ``ast`` (so they fail on the next commit that
breaks them, not on the next exploit), and one property test of the Chroma ``where`` builder.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared_core.filters import AllOf, AnyOf, Condition, Filter, Op, all_of, any_of, where
from shared_core.index.chroma_records import ATTRIBUTE, filter_where

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("shared_core", "langchain_temporal", "llamaindex_temporal")
LEDGER = ROOT / "shared_core" / "ledger"


def _sources(*folders: Path) -> Iterator[tuple[Path, ast.Module]]:
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain, '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


# --------------------------------------------------------------------------- unsafe loading
UNSAFE_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle"}
UNSAFE_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "pickle.load",
    "pickle.loads",
    "pickle.Unpickler",
    "marshal.load",
    "marshal.loads",
    "shelve.open",
    "yaml.unsafe_load",
    "yaml.full_load",
    "numpy.load",  # allow_pickle must be passed False explicitly (checked below)
    "np.load",
    "joblib.load",
    "pandas.read_pickle",
    "pd.read_pickle",
}


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_const(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def unsafe_loading(tree: ast.Module) -> list[tuple[int, str]]:
    """Every place that could turn stored bytes into code: (line, what)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, f"import {a.name}") for a in node.names if a.name in UNSAFE_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and node.module in UNSAFE_MODULES:
            found.append((node.lineno, f"from {node.module} import ..."))
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in UNSAFE_CALLS:
                numpy = name.endswith(".load") and name.split(".")[0] in {"np", "numpy"}
                if numpy and _is_const(_keyword(node, "allow_pickle"), False):
                    continue
                found.append((node.lineno, f"{name}(...)"))
            elif name == "yaml.load" and "SafeLoader" not in ast.unparse(node):
                found.append((node.lineno, "yaml.load without SafeLoader"))
            elif name == "torch.load" and not _is_const(_keyword(node, "weights_only"), True):
                found.append((node.lineno, "torch.load without weights_only=True"))
            elif name.endswith("from_pretrained") and _is_const(
                _keyword(node, "trust_remote_code"), True
            ):
                found.append((node.lineno, "from_pretrained(trust_remote_code=True)"))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_unpickles_or_evaluates(package: str) -> None:
    problems = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path, tree in _sources(ROOT / package)
        for line, what in unsafe_loading(tree)
    ]
    assert problems == []


@pytest.mark.parametrize(
    "source",
    [
        "import pickle",
        "from marshal import loads",
        "eval(text)",
        "exec(code)",
        "yaml.load(stream)",
        "torch.load(path)",
        "torch.load(path, weights_only=False)",
        "np.load(path)",
        "np.load(path, allow_pickle=True)",
        "pd.read_pickle(path)",
        "AutoModel.from_pretrained(p, trust_remote_code=True)",
    ],
)
def test_the_loading_scanner_catches_each_pattern(source: str) -> None:
    assert unsafe_loading(ast.parse(source)) != []


@pytest.mark.parametrize(
    "source",
    [
        "model.eval()",
        "json.loads(text)",
        "yaml.load(stream, Loader=yaml.SafeLoader)",
        "torch.load(path, weights_only=True)",
        "np.load(path, allow_pickle=False)",
    ],
)
def test_the_loading_scanner_allows_safe_calls(source: str) -> None:
    assert unsafe_loading(ast.parse(source)) == []


# --------------------------------------------------------------------------- parameterised SQL
# The rule, precisely. The SQL argument of every ``.execute(...)`` / ``.executemany(...)`` /
# ``.executescript(...)`` in shared_core/ledger must be a *static* expression: one whose value
# can only come from the source text, never from a caller's data. Values travel as parameters.
# Static is, recursively:
#   - a str / int / bool / None literal;
#   - an f-string or ``+`` concatenation of static parts;
#   - ``literal * anything`` (how ``"?" * len(chunk)`` builds placeholder marks: only the count
#     varies, never the text);
#   - ``a if cond else b`` with static branches (the condition only picks one);
#   - a list / tuple / dict literal of static elements (values), an item of a static collection
#     (``schema.MIGRATIONS[version]``: the key only picks), a comprehension whose element is
#     static given that its loop variable iterates over a static value;
#   - a str method (join, format, strip, split, replace, upper, lower) called on a static
#     receiver with static arguments;
#   - an UPPER_CASE module constant of the ledger package (``schema.FACT_SELECT``, ``OPEN``, ...),
#     itself static by this rule (checked too), or one imported from shared_core.clock;
#   - a local variable all of whose assignments, augmented assignments and
#     ``.append`` / ``.insert`` / ``.extend`` calls in the function are static (a ``for`` loop
#     variable counts as assigned from the collection it iterates);
#   - a parameter of a private helper (``_one(sql, ...)``) when every call of a helper of that
#     name in the module, and in the ledger modules that import from it (a subclass calls its
#     base class's helpers), passes a static value for it;
#   - psycopg's composition ``sql.SQL(static).format(sql.Identifier(any), ...)``: an identifier
#     (a PostgreSQL schema name) is quoted by psycopg, whatever its value.
STR_METHODS = {"join", "format", "strip", "split", "replace", "upper", "lower"}
GROWING = {"append", "insert", "extend"}
EXECUTE = {"execute", "executemany", "executescript"}
CLOCK_CONSTANTS = {"OPEN", "EARLIEST"}
PSYCOPG_SQL = {"sql.SQL", "psycopg.sql.SQL"}
PSYCOPG_IDENTIFIERS = {"sql.Identifier", "psycopg.sql.Identifier"}


class StaticSql:
    """Decides whether an expression of one module is static SQL (see the rule above)."""

    def __init__(
        self,
        module: ast.Module,
        constants: dict[str, list[ast.expr]],
        importers: list[ast.Module] = (),  # type: ignore[assignment]
    ) -> None:
        self.module = module
        self.constants = constants  # "NAME" and "schema.NAME" -> its defining expressions
        self.functions = _functions(module)
        # every function that may call a private helper: the module's and its importers'
        self.callers = [f for tree in [module, *importers] for f in _functions(tree).values()]

    def static(
        self, node: ast.AST, scope: ast.AST | None, seen: frozenset[str] = frozenset()
    ) -> bool:
        ok = lambda child: self.static(child, scope, seen)  # noqa: E731
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str | int | bool) or node.value is None
        if isinstance(node, ast.JoinedStr):
            return all(ok(v) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            return ok(node.value) and (node.format_spec is None or ok(node.format_spec))
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                return ok(node.left) and ok(node.right)
            if isinstance(node.op, ast.Mult):
                return isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
            return False
        if isinstance(node, ast.IfExp):
            return ok(node.body) and ok(node.orelse)
        if isinstance(node, ast.Subscript):  # the key only picks one of static values
            return ok(node.value)
        if isinstance(node, ast.Dict):
            return all(ok(v) for v in node.values)
        if isinstance(node, ast.Starred):
            return ok(node.value)
        if isinstance(node, ast.List | ast.Tuple):
            return all(ok(e) for e in node.elts)
        if isinstance(node, ast.GeneratorExp | ast.ListComp):
            loops = {g.target.id for g in node.generators if isinstance(g.target, ast.Name)}
            return all(ok(g.iter) for g in node.generators) and self.static(
                node.elt, scope, seen | {f"loop:{name}" for name in loops}
            )
        if isinstance(node, ast.Call):
            func = node.func
            if _dotted(func) in PSYCOPG_IDENTIFIERS:
                return True
            if _dotted(func) in PSYCOPG_SQL:
                return all(ok(a) for a in node.args) and not node.keywords
            if isinstance(func, ast.Attribute) and func.attr in STR_METHODS:
                return (
                    ok(func.value)
                    and all(ok(a) for a in node.args)
                    and all(ok(k.value) for k in node.keywords)
                )
            return False
        if isinstance(node, ast.Attribute):
            name = _dotted(node)
            return name in self.constants and self._constant(name, seen)
        if isinstance(node, ast.Name):
            if f"loop:{node.id}" in seen:
                return True
            if node.id in self.constants or node.id in CLOCK_CONSTANTS:
                return node.id in CLOCK_CONSTANTS or self._constant(node.id, seen)
            return scope is not None and self._local(node.id, scope, seen)
        return False

    def _constant(self, name: str, seen: frozenset[str]) -> bool:
        if name in seen:
            return True
        return all(self.static(e, None, seen | {name}) for e in self.constants[name])

    def _local(self, name: str, scope: ast.AST, seen: frozenset[str]) -> bool:
        key = f"{id(scope)}:{name}"
        if key in seen:
            return True
        seen = seen | {key}
        sources: list[ast.AST] = []
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                sources.append(node.value)
            elif isinstance(node, ast.For) and (
                isinstance(node.target, ast.Name) and node.target.id == name
            ):
                sources.append(node.iter)  # an element of a static collection is static
            elif isinstance(node, ast.AugAssign | ast.AnnAssign) and (
                isinstance(node.target, ast.Name) and node.target.id == name
            ):
                if node.value is not None:
                    sources.append(node.value)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in GROWING
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == name
            ):
                sources.extend(node.args[-1:])  # insert(i, x): only x goes into the text
        if sources:
            return all(self.static(s, scope, seen) for s in sources)
        return self._parameter(name, scope, seen)

    def _parameter(self, name: str, scope: ast.AST, seen: frozenset[str]) -> bool:
        if not isinstance(scope, ast.FunctionDef) or not scope.name.startswith("_"):
            return False  # a public function's parameter is caller data
        params = [a.arg for a in scope.args.args]
        if name not in params:
            return False
        position = params.index(name) - (params[:1] == ["self"])
        calls = [
            (call, caller)
            for caller in self.callers
            for call in ast.walk(caller)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute | ast.Name)
            and (call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id)
            == scope.name
        ]
        for call, caller in calls:
            keyword = _keyword(call, name)
            argument = (
                keyword
                if keyword is not None
                else (call.args[position] if position < len(call.args) else None)
            )
            if argument is None or not self.static(argument, caller, seen):
                return False
        return bool(calls)


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {
        f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _module_constants(tree: ast.Module, prefix: str = "") -> dict[str, list[ast.expr]]:
    """UPPER_CASE module-level names, bare and as ``prefix.NAME`` (a name defined in several
    ledger modules must be static in all of them)."""
    found: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else (
                [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
            )
        )
        for target in targets:
            if isinstance(target, ast.Name) and target.id.isupper():
                for name in {target.id, prefix + target.id}:
                    found.setdefault(name, []).append(node.value)  # type: ignore[arg-type]
    return found


def _ledger_constants() -> dict[str, list[ast.expr]]:
    constants: dict[str, list[ast.expr]] = {}
    for path, tree in _sources(LEDGER):
        for name, values in _module_constants(tree, f"{path.stem}.").items():
            constants.setdefault(name, []).extend(values)
    return constants


def dynamic_sql(
    tree: ast.Module,
    constants: dict[str, list[ast.expr]],
    importers: list[ast.Module] = (),  # type: ignore[assignment]
) -> list[tuple[int, str]]:
    """Every execute whose SQL is not static: (line, the SQL expression); ``importers``: the
    modules that import from this one, whose calls of its private helpers count too."""
    checker = StaticSql(tree, {**_module_constants(tree), **constants}, importers)
    problems: list[tuple[int, str]] = []
    for function in checker.functions.values():
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in EXECUTE
                and node.args
                and not checker.static(node.args[0], function)
            ):
                problems.append((node.lineno, ast.unparse(node.args[0])))
    return problems


def test_every_ledger_execute_passes_values_as_parameters() -> None:
    constants = _ledger_constants()
    executes = 0
    problems: list[str] = []
    sources = list(_sources(LEDGER))
    for path, tree in sources:
        module = f"shared_core.ledger.{path.stem}"
        importers = [
            other
            for _, other in sources
            if any(isinstance(n, ast.ImportFrom) and n.module == module for n in ast.walk(other))
        ]
        executes += sum(
            1
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in EXECUTE
        )
        found = dynamic_sql(tree, constants, importers)
        problems += [f"{path.name}:{line}: {sql}" for line, sql in found]
    assert executes > 20  # the scan really saw the SQLite ledger
    assert problems == []


def test_schema_sql_constants_are_static() -> None:
    constants = _ledger_constants()
    checker = StaticSql(ast.Module(body=[], type_ignores=[]), constants)
    sql_names = [n for n in constants if n.startswith("schema.") and n != "schema.N_VERSION"]
    assert "schema.FACT_SELECT" in sql_names
    assert [n for n in sql_names if not checker._constant(n, frozenset())] == []


BAD_SQL = [
    "def f(conn, name):\n    conn.execute(f\"SELECT * FROM t WHERE name = '{name}'\")",
    'def f(conn, name):\n    conn.execute("SELECT * FROM t WHERE name = " + name)',
    'def f(conn, name):\n    sql = "SELECT %s" % name\n    conn.execute(sql)',
    'def f(conn, names):\n    conn.execute("SELECT " + ", ".join(names))',
    'def f(conn, q):\n    where = ["a = ?"]\n    where.append(q.text)\n'
    '    conn.execute(" AND ".join(where))',
    "def _one(conn, sql):\n    conn.execute(sql)\ndef g(conn, x):\n    _one(conn, x)",
    "def f(conn, sql):\n    conn.execute(sql)",
]
GOOD_SQL = [
    'def f(conn, name):\n    conn.execute("SELECT * FROM t WHERE name = ?", (name,))',
    'def f(conn, ids):\n    marks = ", ".join("?" * len(ids))\n'
    '    conn.execute(f"SELECT 1 WHERE x IN ({marks})", ids)',
    "def f(conn, full):\n    conn.execute(f\"PRAGMA synchronous={'FULL' if full else 'NORMAL'}\")",
    'def _one(conn, sql):\n    conn.execute(sql)\ndef g(conn):\n    _one(conn, "SELECT 1")',
]


@pytest.mark.parametrize("source", BAD_SQL)
def test_the_sql_rule_refuses_interpolated_values(source: str) -> None:
    assert dynamic_sql(ast.parse(source), {}) != []


@pytest.mark.parametrize("source", GOOD_SQL)
def test_the_sql_rule_accepts_parameterised_sql(source: str) -> None:
    assert dynamic_sql(ast.parse(source), {}) == []


# --------------------------------------------------------------------------- Chroma filters
OPERATORS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"}
hostile_text = st.text(max_size=12) | st.sampled_from(
    ["$or", "$where", "$and", "$ne", "'; DROP TABLE versions; --", "\x00", "\ud800", "m.x"]
)
scalars = st.one_of(
    hostile_text,
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)
conditions = st.one_of(
    st.builds(
        where,
        st.text(min_size=1, max_size=10),
        st.sampled_from([Op.EQ, Op.NE]),
        scalars,
    ),
    st.builds(
        where,
        st.text(min_size=1, max_size=10),
        st.sampled_from(["<", "<=", ">", ">="]),
        st.integers(-(2**40), 2**40) | st.floats(allow_nan=False, allow_infinity=False),
    ),
    st.builds(
        where,
        st.text(min_size=1, max_size=10),
        st.sampled_from(["in", "nin"]),
        st.lists(hostile_text, min_size=1, max_size=4) | st.lists(st.integers(), min_size=1),
    ),
)
filters: st.SearchStrategy[Filter] = st.recursive(
    conditions,
    lambda inner: st.lists(inner, min_size=1, max_size=3).flatmap(
        lambda parts: st.sampled_from([all_of(*parts), any_of(*parts)])
    ),
    max_leaves=8,
)


def _check_where(clause: Any, condition: Filter) -> None:
    assert isinstance(clause, dict)
    assert len(clause) == 1
    ((key, value),) = clause.items()
    if isinstance(condition, AllOf | AnyOf):
        if len(condition.filters) == 1:
            _check_where(clause, condition.filters[0])
            return
        assert key == ("$and" if isinstance(condition, AllOf) else "$or")
        assert isinstance(value, list)
        assert len(value) == len(condition.filters)
        for part, sub in zip(value, condition.filters, strict=True):
            _check_where(part, sub)
        return
    assert isinstance(condition, Condition)
    assert (
        key == ATTRIBUTE + condition.field
    )  # the field is data under a fixed prefix, never an operator
    assert isinstance(value, dict)
    assert len(value) == 1
    ((op, operand),) = value.items()
    assert op in OPERATORS
    if op in {"$in", "$nin"}:
        assert isinstance(operand, list)
        assert operand
        assert all(type(v) in {str, float, bool} for v in operand)
    else:
        assert type(operand) in {str, float, bool}
        if isinstance(operand, float):
            assert operand == operand
            assert abs(operand) != float("inf")


@settings(max_examples=150, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(filters)
def test_chroma_where_holds_only_known_operators_and_typed_scalars(condition: Filter) -> None:
    _check_where(filter_where(condition), condition)


@pytest.mark.parametrize(
    "value", [{"$ne": 1}, [1], None, float("nan"), float("inf"), object(), b"x"]
)
def test_untyped_filter_values_are_refused_before_chroma(value: object) -> None:
    from shared_core.errors import InvalidInputError

    with pytest.raises(InvalidInputError):
        where("field", "==", value)
