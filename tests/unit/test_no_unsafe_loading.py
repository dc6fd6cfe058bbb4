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
# ``.executescript(...)`` in shared_core/ledger (its backend folders included) must be a
# *static* expression: one whose value can only come from the source text, never from a
# caller's data. Values travel as parameters. Static is, recursively:
#   - a str / int / bool / None literal;
#   - an f-string or ``+`` concatenation of static parts;
#   - ``literal * anything`` (how ``"?" * len(chunk)`` builds placeholder marks: only the count
#     varies, never the text), and ``static.join(static)`` of such marks;
#   - ``a if cond else b`` with static branches (the condition only picks one);
#   - a list / tuple / dict literal of static elements (values), an item of a static collection
#     (``schema.MIGRATIONS[version]``: the key only picks), a comprehension whose element is
#     static given that its loop variable iterates over a static value;
#   - an UPPER_CASE constant of a ledger module, by its name there or through an import
#     (``sql.FACT_SELECT``, ``from ...codecs import FACT_COLUMNS``), itself static by this rule in
#     the module that defines it, or ``OPEN`` / ``EARLIEST`` of shared_core.clock;
#   - ``self.NAME`` (UPPER_CASE): a SQL constant a class chooses for itself (each backend sets
#     the statements of the shared SQL base from its own dialect's module) when every class-body
#     assignment of NAME in the ledger package, and every ``self.NAME = ...`` anywhere in it, is
#     static;
#   - a local variable all of whose assignments (tuple targets element by element),
#     augmented assignments and ``.append`` / ``.insert`` / ``.extend`` calls in the function are
#     static (a ``for`` loop variable counts as assigned from the collection it iterates);
#   - a parameter of a private helper (``_one(sql, ...)``) when every call of a helper of that
#     name in the module, in the modules it imports from and in those that import from it (a
#     base class calls its subclasses' helpers and the reverse) passes a static value for it;
#   - a call of a function of the same module every ``return`` of which is static whatever its
#     arguments (``_marks(ids)``: placeholders);
#   - psycopg's composition ``sql.SQL(static).format(sql.Identifier(any), ...)``: an identifier
#     (a PostgreSQL schema name) is quoted by psycopg, whatever its value.
# No other call is static: ``.replace`` / ``.format`` / ``%`` never build a statement.
#
# And the SQL of each dialect is written once, for that dialect: every UPPER_CASE constant of a
# backend folder's ``sql.py`` and ``schema.py`` (and the column lists of codecs.py) is a
# *literal*: string literals joined by f-strings or ``+`` with other literal constants (of the
# same module, or imported by name), OPEN, or tuples / dicts of them; no call, no attribute, no
# subscript, so never derived from another dialect's text.
EXECUTE = {"execute", "executemany", "executescript"}
GROWING = {"append", "insert", "extend"}
CLOCK_CONSTANTS = {"OPEN", "EARLIEST"}
PSYCOPG_SQL = {"sql.SQL", "psycopg.sql.SQL"}
PSYCOPG_IDENTIFIERS = {"sql.Identifier", "psycopg.sql.Identifier"}
PACKAGE = "shared_core.ledger"
DIALECT_MODULES = ("sqlite.sql", "sqlite.schema", "postgres.sql", "postgres.schema", "codecs")

Function = ast.FunctionDef | ast.AsyncFunctionDef


class Package:
    """The ledger package's modules (dotted name -> tree), what each defines and imports."""

    def __init__(self, modules: dict[str, ast.Module]) -> None:
        self.modules = modules
        self.constants = {name: _module_constants(tree) for name, tree in modules.items()}
        self.imports = {name: self._imports(name, tree) for name, tree in modules.items()}
        self.functions = {name: list(_functions(tree).values()) for name, tree in modules.items()}
        self.class_attributes: dict[str, list[tuple[str, ast.expr]]] = {}
        for name, tree in modules.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    for statement in node.body:
                        for target, value in _assignments(statement):
                            if isinstance(target, ast.Name) and target.id.isupper():
                                self._attribute(target.id, name, value)
                for target, value in _assignments(node):
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in {"self", "cls"}
                        and target.attr.isupper()
                    ):
                        self._attribute(target.attr, name, value)

    def related(self, module: str) -> list[str]:
        """The module, those it imports from and those that import from it (a subclass calls
        its base class's helpers, a base class its subclasses')."""
        return [
            other
            for other, imports in self.imports.items()
            if other == module
            or any(source == module for source, _ in imports.values())
            or any(source == other for source, _ in self.imports[module].values())
        ]

    def _attribute(self, attr: str, module: str, value: ast.expr) -> None:
        self.class_attributes.setdefault(attr, []).append((module, value))

    def _imports(self, module: str, tree: ast.Module) -> dict[str, tuple[str, str | None]]:
        """Local name -> (package module, its constant; None: the module itself)."""
        found: dict[str, tuple[str, str | None]] = {}
        for node in tree.body:
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            source = node.module.removeprefix(PACKAGE).removeprefix(".")
            if not node.module.startswith(PACKAGE):
                continue
            for alias in node.names:
                inner = f"{source}.{alias.name}" if source else alias.name
                local = alias.asname or alias.name
                if inner in self.modules:
                    found[local] = (inner, None)
                elif source in self.modules:
                    found[local] = (source, alias.name)
        return found


def _assignments(node: ast.AST) -> Iterator[tuple[ast.expr, ast.expr]]:
    """(target, value) of an assignment statement (not of nested ones)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            yield target, node.value
    elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
        yield node.target, node.value


def _functions(tree: ast.Module) -> dict[str, Function]:
    return {f.name: f for f in ast.walk(tree) if isinstance(f, Function)}


def _module_constants(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """UPPER_CASE module-level names and their defining expressions."""
    found: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        for target, value in _assignments(node):
            if isinstance(target, ast.Name) and target.id.isupper():
                found.setdefault(target.id, []).append(value)
    return found


class StaticSql:
    """Decides whether an expression of one module is static SQL (see the rule above)."""

    def __init__(self, package: Package, module: str) -> None:
        self.package = package
        self.module = module
        self.tree = package.modules[module]
        self.functions = _functions(self.tree)
        self.module_functions = {
            f.name: f for f in self.tree.body if isinstance(f, ast.FunctionDef)
        }

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
            return self._call(node, scope, seen)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, seen)
        if isinstance(node, ast.Name):
            if f"loop:{node.id}" in seen or node.id in CLOCK_CONSTANTS:
                return True
            if node.id in self.package.constants[self.module]:
                return self.constant(self.module, node.id, seen)
            imported = self.package.imports[self.module].get(node.id)
            if imported is not None and imported[1] is not None:
                return self.constant(imported[0], imported[1], seen)
            return scope is not None and self._local(node.id, scope, seen)
        return False

    def _call(self, node: ast.Call, scope: ast.AST | None, seen: frozenset[str]) -> bool:
        ok = lambda child: self.static(child, scope, seen)  # noqa: E731
        func = node.func
        psycopg = "sql" not in self.package.imports[self.module]  # ``sql`` is not ours here
        if psycopg and _dotted(func) in PSYCOPG_SQL:
            return all(ok(a) for a in node.args) and not node.keywords
        if (
            psycopg
            and isinstance(func, ast.Attribute)
            and func.attr == "format"
            and isinstance(func.value, ast.Call)
            and _dotted(func.value.func) in PSYCOPG_SQL
        ):
            identifiers = [*node.args, *(k.value for k in node.keywords)]
            return ok(func.value) and all(
                isinstance(a, ast.Call) and _dotted(a.func) in PSYCOPG_IDENTIFIERS
                for a in identifiers
            )
        if isinstance(func, ast.Attribute) and func.attr == "join":
            return ok(func.value) and all(ok(a) for a in node.args) and not node.keywords
        if isinstance(func, ast.Name) and func.id in self.module_functions:
            key = f"call:{self.module}:{func.id}"
            if key in seen:
                return True
            function = self.module_functions[func.id]
            returns = [r.value for r in ast.walk(function) if isinstance(r, ast.Return)]
            return bool(returns) and all(
                r is not None and self.static(r, None, seen | {key}) for r in returns
            )
        return False

    def _attribute(self, node: ast.Attribute, seen: frozenset[str]) -> bool:
        owner = node.value
        if not isinstance(owner, ast.Name) or not node.attr.isupper():
            return False
        if owner.id in {"self", "cls"}:
            key = f"attribute:{node.attr}"
            if key in seen:
                return True
            definitions = self.package.class_attributes.get(node.attr, [])
            return bool(definitions) and all(
                StaticSql(self.package, module).static(value, None, seen | {key})
                for module, value in definitions
            )
        imported = self.package.imports[self.module].get(owner.id)
        if imported is None or imported[1] is not None:
            return False
        return self.constant(imported[0], node.attr, seen)

    def constant(self, module: str, name: str, seen: frozenset[str]) -> bool:
        key = f"constant:{module}:{name}"
        if key in seen:
            return True
        values = self.package.constants[module].get(name)
        if not values:
            return False
        checker = StaticSql(self.package, module)
        return all(checker.static(value, None, seen | {key}) for value in values)

    def _local(self, name: str, scope: ast.AST, seen: frozenset[str]) -> bool:
        key = f"{id(scope)}:{name}"
        if key in seen:
            return True
        seen = seen | {key}
        sources: list[ast.AST] = []
        for node in ast.walk(scope):
            for target, value in _assignments(node):
                sources += _assigned(target, value, name)
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                if node.target.id == name:
                    sources.append(node.iter)  # an element of a static collection is static
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
            (call, module, caller)
            for module in self.package.related(self.module)
            for caller in self.package.functions[module]
            for call in ast.walk(caller)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute | ast.Name)
            and (call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id)
            == scope.name
        ]
        for call, module, caller in calls:
            keyword = _keyword(call, name)
            argument = (
                keyword
                if keyword is not None
                else (call.args[position] if position < len(call.args) else None)
            )
            checker = StaticSql(self.package, module)
            if argument is None or not checker.static(argument, caller, seen):
                return False
        return bool(calls)


def _assigned(target: ast.expr, value: ast.expr, name: str) -> list[ast.AST]:
    """What an assignment ``target = value`` puts into the local ``name`` (a tuple target takes
    the matching element of a tuple value; of anything else, the whole value, which then has to
    be static as a whole)."""
    if isinstance(target, ast.Name):
        return [value] if target.id == name else []
    if isinstance(target, ast.Tuple | ast.List):
        elements = value.elts if isinstance(value, ast.Tuple | ast.List) else None
        found: list[ast.AST] = []
        for i, part in enumerate(target.elts):
            if elements is not None and len(elements) == len(target.elts):
                found += _assigned(part, elements[i], name)
            elif _names(part, name):
                found.append(ast.Call(func=ast.Name(id="unpacked"), args=[], keywords=[]))
        return found
    return []


def _names(target: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


def literal(
    package: Package, module: str, node: ast.AST, seen: frozenset[str] = frozenset()
) -> bool:
    """Whether a constant of a dialect module is a literal (see the rule above)."""
    ok = lambda child: literal(package, module, child, seen)  # noqa: E731
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | int | bool) or node.value is None
    if isinstance(node, ast.JoinedStr):
        return all(
            isinstance(v, ast.Constant)
            or (
                isinstance(v, ast.FormattedValue)
                and isinstance(v.value, ast.Name)
                and v.conversion == -1
                and v.format_spec is None
                and ok(v.value)
            )
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return ok(node.left) and ok(node.right)
    if isinstance(node, ast.Tuple | ast.List):
        return all(ok(e) for e in node.elts)
    if isinstance(node, ast.Starred):
        return ok(node.value)
    if isinstance(node, ast.Dict):
        return all(k is not None and ok(k) for k in node.keys) and all(ok(v) for v in node.values)
    if isinstance(node, ast.Name):
        if node.id in CLOCK_CONSTANTS:
            return True
        key = f"{module}:{node.id}"
        if key in seen:
            return True
        defining, name = module, node.id
        if node.id not in package.constants[module] and not node.id.startswith("_"):
            imported = package.imports[module].get(node.id)
            if imported is None or imported[1] is None:
                return False
            defining, name = imported[0], imported[1]
        values = package.constants[defining].get(name) or _private(package, defining, name)
        return bool(values) and all(literal(package, defining, v, seen | {key}) for v in values)
    return False


def _private(package: Package, module: str, name: str) -> list[ast.expr]:
    """A private module-level name's defining expressions (``_TEXT``, ``_V2``)."""
    return [
        value
        for node in package.modules[module].body
        for target, value in _assignments(node)
        if isinstance(target, ast.Name) and target.id == name
    ]


def _ledger_package() -> Package:
    return Package(
        {
            ".".join(path.relative_to(LEDGER).with_suffix("").parts): tree
            for path, tree in _sources(LEDGER)
        }
    )


def dynamic_sql(package: Package, module: str) -> list[tuple[int, str]]:
    """Every execute of ``module`` whose SQL is not static: (line, the SQL expression)."""
    checker = StaticSql(package, module)
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


def _snippet(source: str) -> list[tuple[int, str]]:
    return dynamic_sql(Package({"snippet": ast.parse(source)}), "snippet")


def test_every_ledger_execute_passes_values_as_parameters() -> None:
    package = _ledger_package()
    assert {"sqlite.backend", "postgres.backend", "sql_backend"} <= set(package.modules)
    executes = 0
    problems: list[str] = []
    for module, tree in package.modules.items():
        executes += sum(
            1
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in EXECUTE
        )
        problems += [f"{module}:{line}: {sql}" for line, sql in dynamic_sql(package, module)]
    assert executes > 20  # the scan really saw the SQL ledgers
    assert problems == []


def test_each_dialects_sql_is_written_out_as_literals() -> None:
    package = _ledger_package()
    names: list[str] = []
    for module in DIALECT_MODULES:
        for name, values in package.constants[module].items():
            names.append(f"{module}.{name}")
            assert all(literal(package, module, v) for v in values), f"{module}.{name}"
    assert {"sqlite.sql.FACT_SELECT", "postgres.sql.FACT_SELECT", "postgres.schema.SCHEMA"} <= set(
        names
    )
    for dialect, other in (("sqlite", "postgres"), ("postgres", "sqlite")):
        for module, imports in package.imports.items():
            if module.startswith(f"{dialect}."):
                assert not any(source.startswith(f"{other}.") for source, _ in imports.values())


def test_the_believed_sentinel_written_into_the_sql_is_open() -> None:
    import re

    from shared_core.clock import OPEN
    from shared_core.ledger.postgres import schema as postgres_schema
    from shared_core.ledger.postgres import sql as postgres_sql
    from shared_core.ledger.sqlite import schema as sqlite_schema
    from shared_core.ledger.sqlite import sql as sqlite_sql

    texts = [
        str(value)
        for module in (sqlite_sql, sqlite_schema, postgres_sql, postgres_schema)
        for name, value in vars(module).items()
        if name.lstrip("_").isupper()
    ]
    written = {int(n) for text in texts for n in re.findall(r"retired_at [=<] (\d+)", text)}
    assert written == {OPEN}


def test_the_shared_sql_base_gets_each_statement_from_the_backends_own_dialect() -> None:
    package = _ledger_package()
    base = next(
        n
        for n in ast.walk(package.modules["sql_backend"])
        if isinstance(n, ast.ClassDef) and n.name == "SQLBackend"
    )
    wanted = {
        s.target.id
        for s in base.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.target.id.isupper()
    }
    assert "COUNT_RETIRED_AT" in wanted
    for dialect, name in (("sqlite", "SQLiteBackend"), ("postgres", "PostgresBackend")):
        module = f"{dialect}.backend"
        backend = next(
            n
            for n in ast.walk(package.modules[module])
            if isinstance(n, ast.ClassDef) and n.name == name
        )
        chosen = {
            t.id: v
            for s in backend.body
            for t, v in _assignments(s)
            if isinstance(t, ast.Name) and t.id.isupper()
        }
        assert wanted <= set(chosen), f"{name} leaves out {wanted - set(chosen)}"
        for attribute in wanted:
            value = chosen[attribute]
            assert isinstance(value, ast.Attribute)
            assert isinstance(value.value, ast.Name)
            assert package.imports[module][value.value.id] == (f"{dialect}.sql", None)


BAD_SQL = [
    "def f(conn, name):\n    conn.execute(f\"SELECT * FROM t WHERE name = '{name}'\")",
    'def f(conn, name):\n    conn.execute("SELECT * FROM t WHERE name = " + name)',
    'def f(conn, name):\n    sql = "SELECT %s" % name\n    conn.execute(sql)',
    'def f(conn, names):\n    conn.execute("SELECT " + ", ".join(names))',
    'def f(conn, q):\n    where = ["a = ?"]\n    where.append(q.text)\n'
    '    conn.execute(" AND ".join(where))',
    "def _one(conn, sql):\n    conn.execute(sql)\ndef g(conn, x):\n    _one(conn, x)",
    "def f(conn, sql):\n    conn.execute(sql)",
    'def f(conn, q):\n    sql, params = "SELECT 1", ()\n    sql, params = q.text, ()\n'
    "    conn.execute(sql, params)",
    "def f(conn, q):\n    sql, params = q\n    conn.execute(sql, params)",
    'PLAIN = "SELECT * FROM t WHERE a = ?"\n'
    'def f(conn):\n    conn.execute(PLAIN.replace("?", "%s"))',
    # the new shape: a SQL constant a class chooses for itself
    "class Backend:\n    COUNT = 'SELECT count(*) FROM ' + table_of_the_day()\n"
    "    def count(self):\n        return self._conn.execute(self.COUNT)",
    "class Backend:\n    COUNT = 'SELECT count(*) FROM t'\n"
    "    def __init__(self, table):\n        self.COUNT = f'SELECT count(*) FROM {table}'\n"
    "    def count(self):\n        return self._conn.execute(self.COUNT)",
    "class Base:\n    def count(self):\n        return self._all(self.COUNT, ())\n"
    "class Dialect(Base):\n    COUNT = 'SELECT count(*) FROM t WHERE a = ?'\n"
    "    def _all(self, sql, params):\n        return self._conn.execute(sql, params)\n"
    "    def other(self, q):\n        return self._all(q.text, ())",
    "class Backend:\n    def count(self):\n        return self._conn.execute(self.UNDEFINED)",
]
GOOD_SQL = [
    'def f(conn, name):\n    conn.execute("SELECT * FROM t WHERE name = ?", (name,))',
    'def f(conn, ids):\n    marks = ", ".join("?" * len(ids))\n'
    '    conn.execute(f"SELECT 1 WHERE x IN ({marks})", ids)',
    'def f(conn, full):\n    conn.execute("PRAGMA synchronous=FULL" if full else "PRAGMA x")',
    'def _one(conn, sql):\n    conn.execute(sql)\ndef g(conn):\n    _one(conn, "SELECT 1")',
    "class Base:\n    def count(self):\n        return self._all(self.COUNT, ())\n"
    "class Dialect(Base):\n    COUNT = 'SELECT count(*) FROM t WHERE a = ?'\n"
    "    def _all(self, sql, params):\n        return self._conn.execute(sql, params)",
    'def _marks(ids):\n    return "(" + ", ".join("?" * len(ids)) + ")"\n'
    'def f(conn, ids):\n    conn.execute("SELECT 1 WHERE x IN " + _marks(ids), ids)',
]


@pytest.mark.parametrize("source", BAD_SQL)
def test_the_sql_rule_refuses_interpolated_values(source: str) -> None:
    assert _snippet(source) != []


@pytest.mark.parametrize("source", GOOD_SQL)
def test_the_sql_rule_accepts_parameterised_sql(source: str) -> None:
    assert _snippet(source) == []


NOT_LITERAL = [
    'OTHER = "SELECT 1 WHERE a = ?"\nSQL = OTHER.replace("?", "%s")',
    'COLUMNS = ("a", "b")\nSQL = "SELECT " + ", ".join(COLUMNS)',
    'SQL = "UPDATE {table} SET a = 1".format(table="t")',
    "from shared_core.ledger.sqlite import sql\nSQL = sql.FACT_SELECT",
    'TEMPLATE = "SELECT %s"\nSQL = TEMPLATE % "a"',
    "SQL = f\"SELECT {', '.join(['a', 'b'])}\"",
]


@pytest.mark.parametrize("source", NOT_LITERAL)
def test_the_literal_rule_refuses_sql_derived_from_other_text(source: str) -> None:
    package = Package({"snippet": ast.parse(source), "sqlite.sql": ast.parse("FACT_SELECT = 'x'")})
    assert not literal(package, "snippet", package.constants["snippet"]["SQL"][0])


def test_the_literal_rule_accepts_sql_written_out() -> None:
    source = (
        'COLUMNS = "a, b"\nBELIEVED = "retired_at = 9223372036854775807"\n'
        'SQL = f"SELECT {COLUMNS} FROM t WHERE {BELIEVED}" + " LIMIT 1"\n'
        "ALL = (SQL, *(COLUMNS,))\nBY_KIND = {(1, True): SQL}"
    )
    package = Package({"snippet": ast.parse(source)})
    for name in ("SQL", "ALL", "BY_KIND"):
        assert literal(package, "snippet", package.constants["snippet"][name][0]), name


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
