# -*- test-case-name: tests.apiextensions.test_cel -*-
"""
Validation rules of custom resources (C{x-kubernetes-validations}): upstream
C{k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel} (C{compilation.go},
C{validation.go}, C{maplist.go}), the CEL side of C{pkg/apis/apiextensions/validation}
(compile errors and estimated cost of a CRD's rules) and the type mapping of
C{k8s.io/apiserver/pkg/cel/common} (C{schemas.go}, C{values.go}, C{escaping.go}).

Schemas are the wire form of C{openAPIV3Schema} (C{JSONSchemaProps} dicts, structural).  A
schema node maps to a CEL type as upstream: C{integer} -> int, C{number} -> double,
C{boolean} -> bool, C{string} -> string (C{format: byte} bytes, C{duration} duration,
C{date}/C{date-time} timestamp), arrays -> lists, C{additionalProperties} -> maps,
C{x-kubernetes-int-or-string} -> dyn.  Objects with properties become maps whose keys are
the declared (escaped) property names only; the type checker additionally reports
C{undefined field 'x'} for a field the schema does not declare, as cel-go does for
upstream's object types.  Rules run on cel-cpp (C{cel-expr-python}); costs are computed by
C{kubetwist.apiextensions.schema.cel_cost}.
"""

from __future__ import annotations

import base64
import datetime
import re
import threading
from typing import Any

from cel_expr_python import cel

from kubetwist.cel import cost as cel_cost
from kubetwist.cel import strip_status as _strip_status
from kubetwist.cel.library import ENV_CONFIG_YAML, FUNCTION_IMPLS
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    go_quote,
    internal,
    invalid,
    not_supported,
    required,
)

__all__ = [
    "PER_CALL_LIMIT",
    "RUNTIME_CEL_COST_BUDGET",
    "STATIC_ESTIMATED_COST_LIMIT",
    "STATIC_ESTIMATED_CRD_COST_LIMIT",
    "CELValidator",
    "compile_rules",
    "escape",
    "rule_errors",
    "valid_field_path",
]

#: Upstream C{celconfig.PerCallLimit}: the most one rule evaluation may cost.
PER_CALL_LIMIT = 1000000
#: Upstream C{celconfig.RuntimeCELCostBudget}: all the rules of one custom resource.
RUNTIME_CEL_COST_BUDGET = 10000000
#: Upstream C{StaticEstimatedCostLimit}: one rule's estimate times its cardinality.
STATIC_ESTIMATED_COST_LIMIT = 10000000
#: Upstream C{StaticEstimatedCRDCostLimit}: the sum over a CRD version's schema.
STATIC_ESTIMATED_CRD_COST_LIMIT = 100000000
#: Upstream C{celconfig.MaxRequestSizeBytes}.
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
#: Upstream C{celconfig.MaxEvaluatedMessageExpressionSizeBytes}.
MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024

_SELF, _OLD_SELF = "self", "oldSelf"
_OLD_VALUE, _OLD_PRESENT = "__oldSelfValue__", "__oldSelfPresent__"
_SUPPORTED_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid",
                      "FieldValueRequired"]

T = cel.Type

# ---------------------------------------------------------------------------------------
# escaping (upstream pkg/cel/escaping.go)

_RESERVED = frozenset((
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
    "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
    "void", "while",
))
_IDENT_CHARS = re.compile(r"^[A-Za-z0-9_./-]*$")
_EXPAND = re.compile(r"__|[-./]")
_EXPANSIONS = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape(name: str) -> str | None:
    """
    A property name as CEL sees it (upstream C{cel.Escape}): reserved words become
    C{__word__}; C{__ . - /} become C{__underscores__ __dot__ __dash__ __slash__}.
    C{None} when the name cannot be accessed from CEL (empty, leading digit, other
    characters).
    """
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    if not _IDENT_CHARS.match(name) or not name.isascii():
        return None
    return _EXPAND.sub(lambda m: _EXPANSIONS[m.group(0)], name)


# ---------------------------------------------------------------------------------------
# schema helpers


def _props(s: dict) -> dict:
    return s.get("properties") or {}


def _additional(s: dict) -> dict | None:
    ap = s.get("additionalProperties")
    return ap if isinstance(ap, dict) else None


def _with_type_and_object_meta(s: dict) -> dict:
    """Upstream C{WithTypeAndObjectMeta}: the root as CEL sees it."""
    props = dict(_props(s))
    props["kind"] = {"type": "string"}
    props["apiVersion"] = {"type": "string"}
    props["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}},
    }
    return {**s, "properties": props}


def _cel_type(s: dict | None, is_root: bool) -> Any:
    """The CEL type of a schema node (upstream C{SchemaDeclType}); None if it has none."""
    if s is None:
        return None
    if s.get("x-kubernetes-int-or-string"):
        return T.DYN
    t = s.get("type")
    if t == "array":
        items = s.get("items")
        if not isinstance(items, dict):
            return None
        it = _cel_type(items, bool(items.get("x-kubernetes-embedded-resource")))
        return None if it is None else T.List(it)
    if t == "object":
        ap = _additional(s)
        if ap is not None and not (is_root or s.get("x-kubernetes-embedded-resource")):
            vt = _cel_type(ap, bool(ap.get("x-kubernetes-embedded-resource")))
            return None if vt is None else T.Map(T.STRING, vt)
        return T.Map(T.STRING, T.DYN)
    if t == "string":
        return {"byte": T.BYTES, "duration": T.DURATION, "date": T.TIMESTAMP,
                "date-time": T.TIMESTAMP}.get(s.get("format"), T.STRING)
    return {"boolean": T.BOOL, "number": T.DOUBLE, "integer": T.INT}.get(t)


def _is_object_with_fields(s: dict, is_root: bool) -> bool:
    """Whether CEL sees this node as an object type (fields checked), not a map or dyn."""
    if s.get("x-kubernetes-int-or-string") or s.get("type") != "object":
        return False
    return is_root or bool(s.get("x-kubernetes-embedded-resource")) or _additional(s) is None


def _fields_of(s: dict, is_root: bool) -> dict:
    """Escaped field name -> (schema, is embedded resource) of an object node."""
    if is_root or s.get("x-kubernetes-embedded-resource"):
        s = _with_type_and_object_meta(s)
    out = {}
    for name, sub in _props(s).items():
        esc = escape(name)
        if esc is not None and _cel_type(sub, bool(sub.get("x-kubernetes-embedded-resource"))):
            out[esc] = sub
    return out


# ---------------------------------------------------------------------------------------
# values (upstream UnstructuredToVal)

_DURATION_RE = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h|d|w)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1,
                   "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _parse_duration(text: str) -> datetime.timedelta:
    """kube-openapi's C{strfmt.ParseDuration} (Go durations plus C{d} and C{w})."""
    sign, rest = 1, text.strip()
    if rest[:1] in "+-" and rest:
        sign, rest = (-1 if rest[0] == "-" else 1), rest[1:]
    pos, total = 0, 0.0
    for m in _DURATION_RE.finditer(rest):
        if m.start() != pos or not m.group(1) or m.group(1) == ".":
            raise ValueError(text)
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(rest) or not rest:
        raise ValueError(text)
    return datetime.timedelta(seconds=sign * total)


def _parse_timestamp(text: str, fmt: str) -> datetime.datetime:
    if fmt == "date":
        d = datetime.date.fromisoformat(text)
        return datetime.datetime(d.year, d.month, d.day, tzinfo=datetime.UTC)
    t = text.replace("Z", "+00:00").replace("z", "+00:00")
    value = datetime.datetime.fromisoformat(t)
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    return value


def _to_cel(value: Any, s: dict, is_root: bool = False) -> Any:
    """A JSON value as the CEL runtime should see it under schema C{s}."""
    if value is None or s.get("x-kubernetes-int-or-string"):
        return value
    t = s.get("type")
    if t == "object" and isinstance(value, dict):
        if _is_object_with_fields(s, is_root):
            fields = _fields_of(s, is_root)
            out = {}
            for k, v in value.items():
                esc = escape(k)
                if esc in fields:
                    sub = fields[esc]
                    out[esc] = _to_cel(v, sub, bool(sub.get("x-kubernetes-embedded-resource")))
            return out
        ap = _additional(s) or {}
        emb = bool(ap.get("x-kubernetes-embedded-resource"))
        return {k: _to_cel(v, ap, emb) for k, v in value.items()}
    if t == "array" and isinstance(value, list):
        items = s.get("items") or {}
        emb = bool(items.get("x-kubernetes-embedded-resource"))
        return [_to_cel(v, items, emb) for v in value]
    if t == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if t == "string" and isinstance(value, str):
        fmt = s.get("format")
        try:
            if fmt == "byte":
                return base64.b64decode(value)
            if fmt == "duration":
                return _parse_duration(value)
            if fmt in ("date", "date-time"):
                return _parse_timestamp(value, fmt)
        except ValueError:
            return value
    return value


# ---------------------------------------------------------------------------------------
# static bounds (upstream SchemaDeclType's MaxElements and MinSerializedSize)


def _bound(s: dict, is_root: bool) -> tuple[cel_cost.Bound, int]:
    """C{(Bound, minimum serialized size)} of a schema node, for the static estimate."""
    limit = MAX_REQUEST_SIZE_BYTES - 2
    if s.get("x-kubernetes-int-or-string"):
        return cel_cost.Bound(limit), 1
    t = s.get("type")
    if t == "array":
        item, min_size = _bound(s.get("items") or {}, False)
        n = s.get("maxItems")
        n = max(n, 0) if n is not None else limit // (min_size + 1)
        return cel_cost.Bound(n, item), 2
    if t == "object":
        ap = _additional(s)
        if ap is not None and not (is_root or s.get("x-kubernetes-embedded-resource")):
            item, min_size = _bound(ap, False)
            n = s.get("maxProperties")
            n = max(n, 0) if n is not None else limit // (min_size + 6)
            return cel_cost.Bound(n, item), 2
        required_ = set(s.get("required") or ())
        fields, min_size = {}, 2
        src = _with_type_and_object_meta(s) if (
            is_root or s.get("x-kubernetes-embedded-resource")) else s
        for name, sub in _props(src).items():
            b, m = _bound(sub, bool(sub.get("x-kubernetes-embedded-resource")))
            esc = escape(name)
            if esc is not None:
                fields[esc] = b
            if name in required_ and "default" not in sub:
                min_size += len(name) + m + 4
        return cel_cost.Bound(1, None, fields), min_size
    if t == "string":
        fmt = s.get("format")
        if fmt == "duration":
            return cel_cost.Bound(64), 4
        if fmt == "date":
            return cel_cost.Bound(12), 12
        if fmt == "date-time":
            return cel_cost.Bound(34), 24
        if s.get("maxLength") is not None:
            n = max(s["maxLength"], 0)
            return cel_cost.Bound(n if fmt == "byte" else n * 4), 2
        if s.get("enum") and fmt != "byte":
            return cel_cost.Bound(max(len(e) for e in s["enum"] if isinstance(e, str))), 2
        return cel_cost.Bound(limit), 2
    return cel_cost.Bound(1), {"boolean": 4, "number": 1, "integer": 1}.get(t, 1)


# ---------------------------------------------------------------------------------------
# environments

_env_lock = threading.Lock()
_env_cache: dict[tuple, Any] = {}
_config = None


def _env(self_type: Any, mode: str) -> Any:
    """
    A CEL environment declaring C{self} (and C{oldSelf}).  C{mode}: C{"plain"} declares
    C{oldSelf} like C{self}; C{"check-optional"} declares it dyn (type checking of an
    C{optionalOldSelf} rule); C{"run-optional"} declares the hidden value and presence
    variables the optional C{oldSelf} is bound from.
    """
    global _config
    key = (self_type.name() if hasattr(self_type, "name") else str(self_type), mode)
    with _env_lock:
        env = _env_cache.get(key)
        if env is None:
            if _config is None:
                _config = cel.NewEnvConfigFromYaml(ENV_CONFIG_YAML)
            variables = {_SELF: self_type}
            if mode == "plain":
                variables[_OLD_SELF] = self_type
            elif mode == "check-optional":
                variables[_OLD_SELF] = T.DYN
            else:
                variables[_OLD_VALUE] = self_type
                variables[_OLD_PRESENT] = T.BOOL
            env = cel.NewEnv(config=_config, variables=variables, function_impls=FUNCTION_IMPLS)
            _env_cache[key] = env
        return env


def _snippet(source: str, offset: int, message: str) -> str:
    """cel-go's issue text: C{ERROR: <input>:L:C: msg} and the source line with a caret."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    line = source[line_start : line_end if line_end >= 0 else len(source)]
    line_no = source.count("\n", 0, offset) + 1
    col = offset - line_start
    return f"ERROR: <input>:{line_no}:{col + 1}: {message}\n | {line}\n | {'.' * col}^"


def _undefined_fields(ast: cel_cost.CheckedAST, source: str, s: dict, is_root: bool) -> list:
    """cel-go's C{undefined field} errors, which map-typed objects do not produce."""
    errors: list[str] = []
    root = (s, is_root)

    def schema_of(e: cel_cost.Expr, scope: dict) -> tuple | None:
        if e.kind == "ident":
            return scope.get(e.name)
        if e.kind == "select":
            parent = schema_of(e.operand, scope)
            if parent is None:
                return None
            ps, proot = parent
            if _is_object_with_fields(ps, proot):
                sub = _fields_of(ps, proot).get(e.name)
                if sub is None:
                    pos = ast.positions.get(e.id, 0)
                    errors.append(_snippet(source, pos, f"undefined field '{e.name}'"))
                    return None
                return (sub, bool(sub.get("x-kubernetes-embedded-resource")))
            ap = _additional(ps)
            if ps.get("type") == "object" and ap is not None:
                return (ap, bool(ap.get("x-kubernetes-embedded-resource")))
            return None
        if e.kind == "call" and e.name == "_[_]" and len(e.args) == 2:
            parent = schema_of(e.args[0], scope)
            walk(e.args[1], scope)
            if parent is None:
                return None
            ps, _ = parent
            if ps.get("type") == "array" and isinstance(ps.get("items"), dict):
                it = ps["items"]
                return (it, bool(it.get("x-kubernetes-embedded-resource")))
            ap = _additional(ps)
            if ps.get("type") == "object" and ap is not None:
                return (ap, bool(ap.get("x-kubernetes-embedded-resource")))
            return None
        walk(e, scope)
        return None

    def walk(e: cel_cost.Expr | None, scope: dict) -> None:
        if e is None:
            return
        if e.kind in ("ident", "select") or (e.kind == "call" and e.name == "_[_]"):
            schema_of(e, scope)
            return
        if e.kind == "comprehension":
            rng = schema_of(e.iter_range, scope)
            inner = {k: v for k, v in scope.items()
                     if k not in (e.iter_var, e.iter_var2, e.accu_var)}
            if rng is not None:
                rs, _ = rng
                if rs.get("type") == "array" and isinstance(rs.get("items"), dict):
                    it = rs["items"]
                    target = e.iter_var2 or e.iter_var
                    inner[target] = (it, bool(it.get("x-kubernetes-embedded-resource")))
                elif rs.get("type") == "object" and _additional(rs) is not None and e.iter_var2:
                    ap = _additional(rs)
                    inner[e.iter_var2] = (ap, bool(ap.get("x-kubernetes-embedded-resource")))
            for sub in (e.accu_init, e.loop_condition, e.loop_step, e.result):
                walk(sub, inner)
            return
        if e.target is not None:
            walk(e.target, scope)
        for a in e.args:
            walk(a, scope)

    walk(ast.expr, {_SELF: root, _OLD_SELF: root})
    return errors


def _result_type(e: cel_cost.Expr, s: dict, is_root: bool) -> Any:
    """
    The CEL type of an expression that is a plain path from C{self} (C{self.spec.x},
    C{self.items[0]}), which map-typed objects leave dyn; None when not such a path.
    """
    if e.kind == "ident":
        return _cel_type(s, is_root) if e.name in (_SELF, _OLD_SELF) else None
    chain = []
    while e.kind == "select" and not e.test_only or (e.kind == "call" and e.name == "_[_]"):
        if e.kind == "select":
            chain.append(e.name)
            e = e.operand
        else:
            chain.append(None)
            e = e.args[0]
    if e.kind != "ident" or e.name != _SELF or not chain:
        return None
    node, root = s, is_root
    for name in reversed(chain):
        if name is not None and _is_object_with_fields(node, root):
            node = _fields_of(node, root).get(name)
        elif node.get("type") == "array" and name is None:
            node = node.get("items")
        elif node.get("type") == "object" and _additional(node) is not None:
            node = _additional(node)
        else:
            return None
        if not isinstance(node, dict):
            return None
        root = bool(node.get("x-kubernetes-embedded-resource"))
    return _cel_type(node, root)


# ---------------------------------------------------------------------------------------
# compilation (upstream compilation.go)


class _Compiled:
    """One compiled rule (upstream C{CompilationResult})."""

    __slots__ = (
        "ast",
        "error",
        "error_type",
        "field_path",
        "max_cost",
        "message_ast",
        "message_error",
        "message_max_cost",
        "message_program",
        "optional_old_self",
        "program",
        "rule",
        "uses_old_self",
    )

    def __init__(self, rule: dict) -> None:
        self.rule = rule
        self.program = self.ast = self.message_program = self.message_ast = None
        self.error = self.message_error = None
        self.error_type = "Invalid"
        self.uses_old_self = False
        self.optional_old_self = bool(rule.get("optionalOldSelf"))
        self.max_cost = self.message_max_cost = 0
        self.field_path = ""


def _compile(env: Any, source: str) -> tuple[Any, str | None]:
    try:
        return env.compile(source), None
    except RuntimeError as e:
        return None, _strip_status(str(e))


def _compile_rule(rule: dict, s: dict, is_root: bool, self_type: Any,
                  static_scope: dict) -> _Compiled:
    result = _Compiled(rule)
    text = rule.get("rule") or ""
    if not text.strip():
        return result
    check_env = _env(self_type, "check-optional" if result.optional_old_self else "plain")
    expr, err = _compile(check_env, text)
    if err is not None:
        result.error = "compilation failed: " + err
        return result
    ast = cel_cost.decode_checked(expr.serialize())
    undefined = _undefined_fields(ast, text, s, is_root)
    if undefined:
        result.error = "compilation failed: " + "\n".join(undefined)
        return result
    rtype = expr.return_type()
    if rtype == T.DYN:
        rtype = _result_type(ast.expr, s, is_root) or T.DYN
    if rtype not in (T.BOOL, T.DYN):
        result.error = "cel expression must evaluate to a bool"
        return result
    result.uses_old_self = _OLD_SELF in ast.references
    if result.optional_old_self:
        wrapped = (f"cel.bind({_OLD_SELF}, {_OLD_PRESENT} ? optional.of({_OLD_VALUE}) : "
                   f"optional.none(), {text})")
        program, err = _compile(_env(self_type, "run-optional"), wrapped)
        if err is not None:
            result.error = "program instantiation failed: " + err
            return result
    else:
        program = expr
    result.program, result.ast = program, ast
    result.max_cost = cel_cost.cost_of(ast, static_scope)
    message = rule.get("messageExpression") or ""
    if message:
        mexpr, err = _compile(check_env, message)
        if err is not None:
            result.message_error = "messageExpression compilation failed: " + err
            return result
        mast = cel_cost.decode_checked(mexpr.serialize())
        undefined = _undefined_fields(mast, message, s, is_root)
        if undefined:
            result.message_error = "messageExpression compilation failed: " + "\n".join(
                undefined)
            return result
        mtype = mexpr.return_type()
        if mtype == T.DYN:
            mtype = _result_type(mast.expr, s, is_root) or T.DYN
        if mtype not in (T.STRING, T.DYN):
            result.message_error = "messageExpression must evaluate to a string"
            return result
        if result.optional_old_self:
            mexpr, err = _compile(_env(self_type, "run-optional"), (
                f"cel.bind({_OLD_SELF}, {_OLD_PRESENT} ? optional.of({_OLD_VALUE}) : "
                f"optional.none(), {message})"))
            if err is not None:
                result.message_error = "messageExpression instantiation failed: " + err
                return result
        result.message_program, result.message_ast = mexpr, mast
        result.message_max_cost = cel_cost.cost_of(mast, static_scope)
    if rule.get("fieldPath"):
        try:
            result.field_path = valid_field_path(rule["fieldPath"], s)
        except ValueError:
            pass
    return result


def _compile_node(s: dict, is_root: bool) -> tuple[list[_Compiled], str | None]:
    rules = s.get("x-kubernetes-validations") or []
    if not rules:
        return [], None
    self_type = _cel_type(s, is_root)
    if self_type is None:
        return [], "failed to convert to declType for CEL validation rules"
    bound, _ = _bound(s, is_root)
    scope = {_SELF: bound, _OLD_SELF: bound}
    return [_compile_rule(r, s, is_root, self_type, scope) for r in rules], None


# ---------------------------------------------------------------------------------------
# fieldPath (upstream ValidFieldPath)

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "'": "'", "\\": "\\"}


def _unescape_single_quote(s: str) -> str:
    def repl(m: re.Match) -> str:
        ch = m.group(0)[1]
        if ch not in _ESCAPES:
            raise ValueError(f"invalid escape char {m.group(0)}")
        return _ESCAPES[ch]

    return re.sub(r"\\.", repl, s)


def _tokens(path: str) -> list[str]:
    out, i = [], 0
    while i < len(path):
        if path[i] == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            out.append(path[i : j + 1])
            i = j + 1
        elif path[i] in ".[]":
            out.append(path[i])
            i += 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[]":
                j += 1
            out.append(path[i:j])
            i = j
    return out


def valid_field_path(json_path: str, schema: dict) -> str:
    """
    Upstream C{ValidFieldPath}: the normalized form (C{spec.a[b]}) of a rule's
    C{fieldPath} such as C{.spec.a['b']}, checked against C{schema}.

    @raise ValueError: when the path does not name a field of the schema.
    """
    parts: list[str] = []
    s = schema
    toks = _tokens(json_path)
    i = 0

    def append(name: str) -> None:
        nonlocal s
        if s.get("properties") is not None:
            if name not in s["properties"]:
                raise ValueError("does not refer to a valid field")
            parts.append(("." if parts else "") + name)
            s = s["properties"][name]
        elif _additional(s) is not None:
            parts.append(f"[{name}]")
            s = _additional(s)
        else:
            raise ValueError("does not refer to a valid field")

    while i < len(toks):
        tok = toks[i]
        if tok == "[":
            if i + 2 >= len(toks):
                raise ValueError("unexpected end of JSON path")
            lit = toks[i + 1]
            if len(lit) < 2 or lit[0] != "'" or lit[-1] != "'":
                raise ValueError(f"expected single quoted string but got {lit}")
            append(_unescape_single_quote(lit[1:-1]))
            if toks[i + 2] != "]":
                raise ValueError(f"expected ] but got {toks[i + 2]}")
            i += 3
        elif tok == ".":
            if i + 1 >= len(toks):
                raise ValueError("unexpected end of JSON path")
            append(toks[i + 1])
            i += 2
        else:
            raise ValueError(f"expected [ or . but got: {tok}")
    return "".join(parts)


# ---------------------------------------------------------------------------------------
# CRD-time compilation (upstream pkg/apis/apiextensions/validation, the CEL part)


class _GoValueError(FieldError):
    """A field error whose bad value is printed as Go's C{%#v} of a struct."""

    def __init__(self, type: str, path: Path | str, go_value: str, detail: str) -> None:
        self._go_value = go_value
        super().__init__(type, path, go_value, detail)

    def body(self) -> str:
        return f"Invalid value: {self._go_value}: {self.detail}"


def _go_rule(rule: dict) -> str:
    """Upstream prints the offending rule as Go's C{%#v} of C{apiextensions.ValidationRule}."""
    reason = ("(*apiextensions.FieldValueErrorReason)(nil)" if rule.get("reason") is None
              else "(*apiextensions.FieldValueErrorReason)(0xc000000000)")
    optional = ("(*bool)(nil)" if rule.get("optionalOldSelf") is None
                else "(*bool)(0xc000000000)")
    return (
        f"apiextensions.ValidationRule{{Rule:{go_quote(rule.get('rule') or '')}, "
        f"Message:{go_quote(rule.get('message') or '')}, "
        f"MessageExpression:{go_quote(rule.get('messageExpression') or '')}, "
        f"Reason:{reason}, FieldPath:{go_quote(rule.get('fieldPath') or '')}, "
        f"OptionalOldSelf:{optional}}}"
    )


def _cost_message(name: str, cost: int, limit: int) -> str:
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding "
            "maxItems, maxProperties, and maxLength where arrays, maps, and strings are "
            "declared)")


def _max_elements(s: dict, key: str) -> int | None:
    n = s.get(key)
    return max(n, 0) if n is not None else None


def compile_rules(schema: dict, path: Path) -> list[FieldError]:
    """
    Compile every C{x-kubernetes-validations} rule of a CRD version's C{openAPIV3Schema}
    (structural, already valid) and check its estimated cost, as upstream's CRD validation
    does after the schema itself validated.

    @param schema: the C{openAPIV3Schema} dict.
    @param path: the path of that schema in the CRD
        (C{spec.versions[0].schema.openAPIV3Schema}).
    @return: field errors, in upstream's order and words:
        C{<path>.properties[spec].x-kubernetes-validations[0].rule: Invalid value:
        apiextensions.ValidationRule{...}: compilation failed: ERROR: <input>:1:6: ...};
        C{...rule: Forbidden: estimated rule cost exceeds budget by factor of ...};
        C{...messageExpression: Invalid value: ...: messageExpression compilation failed: ...};
        C{...rule: Invalid value: "<rule>": oldSelf cannot be used on the uncorrelatable
        portion of the schema within <path>}; C{...optionalOldSelf: Invalid value: true: may
        not be set if oldSelf is not used in rule}; and when the whole schema's estimate
        exceeds 100M, C{Forbidden: contributed to estimated rule cost total exceeding cost
        limit for entire OpenAPIv3 schema} on the four most expensive rules and a
        C{Forbidden} on C{path}.
    """
    errors: list[FieldError] = []
    costs: list[tuple[int, Path]] = []

    def visit(s: dict, p: Path, is_root: bool, cardinality: int | None,
              uncorrelatable: Path | None) -> None:
        if not isinstance(s, dict):
            return
        _check_node(s, p, is_root, cardinality, uncorrelatable)
        ap = _additional(s)
        if ap is not None:
            visit(ap, p.child("additionalProperties"), False,
                  _mul(cardinality, _max_elements(s, "maxProperties")), uncorrelatable)
        map_type = s.get("x-kubernetes-map-type")
        for name, sub in _props(s).items():
            unc = uncorrelatable
            if unc is None and map_type not in (None, "granular", "atomic"):
                unc = p
            visit(sub, p.child("properties").key(name), False, cardinality, unc)
        items = s.get("items")
        if isinstance(items, dict):
            unc = uncorrelatable
            if unc is None and s.get("x-kubernetes-list-type") != "map":
                unc = p
            visit(items, p.child("items"), False,
                  _mul(cardinality, _max_elements(s, "maxItems")), unc)

    def _check_node(s: dict, p: Path, is_root: bool, cardinality: int | None,
                    uncorrelatable: Path | None) -> None:
        rules = s.get("x-kubernetes-validations") or []
        if not rules:
            return
        compiled, err = _compile_node(s, is_root)
        vpath = p.child("x-kubernetes-validations")
        if err is not None:
            errors.append(internal(vpath, err))
            return
        _, min_size = _bound(s, is_root)
        fallback = MAX_REQUEST_SIZE_BYTES // (min_size + 1)
        card = cardinality if cardinality is not None else fallback
        for i, cr in enumerate(compiled):
            rpath = vpath.index(i)
            rule = rules[i]
            cost = _mul(cr.max_cost, card) if cr.max_cost else 0
            if cost > STATIC_ESTIMATED_COST_LIMIT:
                errors.append(forbidden(rpath.child("rule"), _cost_message(
                    "estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT)))
            costs.append((cost, rpath.child("rule")))
            if cr.error is not None:
                errors.append(_GoValueError("Invalid", rpath.child("rule"), _go_rule(rule),
                                            cr.error))
            if cr.message_error is not None:
                errors.append(_GoValueError("Invalid", rpath.child("messageExpression"),
                                            _go_rule(rule), cr.message_error))
            elif cr.message_program is not None:
                mcost = cr.message_max_cost
                if mcost > STATIC_ESTIMATED_COST_LIMIT:
                    errors.append(forbidden(rpath.child("messageExpression"), _cost_message(
                        "estimated messageExpression cost", mcost,
                        STATIC_ESTIMATED_COST_LIMIT)))
                costs.append((mcost, rpath.child("messageExpression")))
            if cr.uses_old_self:
                if uncorrelatable is not None:
                    errors.append(invalid(
                        rpath.child("rule"), rule.get("rule"),
                        "oldSelf cannot be used on the uncorrelatable portion of the schema "
                        f"within {uncorrelatable}"))
            elif rule.get("optionalOldSelf") is not None and cr.program is not None:
                errors.append(invalid(rpath.child("optionalOldSelf"),
                                      rule["optionalOldSelf"],
                                      "may not be set if oldSelf is not used in rule"))

    visit(schema, path, True, 1, None)
    total = sum(c for c, _ in costs)
    if total > STATIC_ESTIMATED_CRD_COST_LIMIT:
        top = sorted((c for c in costs if c[0] > 0), key=lambda c: -c[0])[:4]
        for _, p in top:
            errors.append(forbidden(p, "contributed to estimated rule cost total exceeding "
                                       "cost limit for entire OpenAPIv3 schema"))
        errors.append(forbidden(path, _cost_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            total, STATIC_ESTIMATED_CRD_COST_LIMIT)))
    return errors


def _mul(a: int | None, b: int | None) -> int | None:
    if a is None or b is None:
        return None
    return min(a * b, 2**64 - 1)


def rule_errors(rules: list, schema: dict, path: Path) -> list[FieldError]:
    """
    The checks upstream makes on each rule's fields before compiling (C{rule} required,
    C{message} and C{fieldPath} well formed, C{reason} supported), for the CRD validator.

    @param rules: the node's C{x-kubernetes-validations} list.
    @param schema: the node's schema (for C{fieldPath}).
    @param path: the node's path (C{...properties[spec]}).
    """
    errors: list[FieldError] = []
    newline = re.compile(r"[\n\r]+")
    for i, rule in enumerate(rules):
        p = path.child("x-kubernetes-validations").index(i)
        text = (rule.get("rule") or "").strip()
        message = rule.get("message") or ""
        if not text:
            errors.append(required(p.child("rule"), "rule is not specified"))
        elif message and not message.strip():
            errors.append(invalid(p.child("message"), message,
                                  "message must be non-empty if specified"))
        elif newline.search(message.strip()):
            errors.append(invalid(p.child("message"), message,
                                  "message must not contain line breaks"))
        elif newline.search(text) and not message.strip():
            errors.append(required(p.child("message"),
                                   "message must be specified if rule contains line breaks"))
        mexpr = rule.get("messageExpression") or ""
        if mexpr and not mexpr.strip():
            errors.append(required(p.child("messageExpression"),
                                   "messageExpression must be non-empty if specified"))
        reason = rule.get("reason")
        if reason is not None and reason not in _SUPPORTED_REASONS:
            errors.append(not_supported(p.child("reason"), reason, _SUPPORTED_REASONS))
        fp = rule.get("fieldPath")
        if fp is not None and fp != "":
            if not fp.strip():
                errors.append(invalid(p.child("fieldPath"), fp,
                                      "fieldPath must be non-empty if specified"))
            if newline.search(fp):
                errors.append(invalid(p.child("fieldPath"), fp,
                                      "fieldPath must not contain line breaks"))
            try:
                valid_field_path(fp, schema)
            except ValueError:
                errors.append(invalid(p.child("fieldPath"), fp, "fieldPath must be a valid path"))
    return errors


# ---------------------------------------------------------------------------------------
# evaluation (upstream validation.go)

_MISSING = object()


def _runtime_error(text: str) -> str:
    """A cel-cpp evaluation error in cel-go's words."""
    text = _strip_status(text)
    m = re.match(r'^Key not found in map ?: ?"?(.*?)"?$', text)
    if m:
        return f"no such key: {m.group(1)}"
    if text.startswith(("No matching overloads found", "No overload found")):
        return "no such overload"
    if text == "divide by zero":
        return "division by zero"
    if text == "modulus by zero":
        return "modulus by zero"
    m = re.match(r"^Index error: index=(-?\d+)", text)
    if m:
        return f"index out of bounds: {m.group(1)}"
    return text


def _error_for_reason(path: Path | str, type_name: str, detail: str,
                      reason: str | None) -> FieldError:
    """Upstream C{fieldErrorForReason}."""
    if reason == "FieldValueForbidden":
        return forbidden(path, detail)
    if reason == "FieldValueRequired":
        return required(path, detail)
    if reason == "FieldValueDuplicate":
        return duplicate(path, type_name)
    return invalid(path, type_name, detail)


def _rule_error_string(rule: dict) -> str:
    message = (rule.get("message") or "").strip()
    return message or (rule.get("rule") or "").strip()


def _rule_message_or_default(rule: dict) -> str:
    message = (rule.get("message") or "").strip()
    return message or f"failed rule: {_rule_error_string(rule)}"


def _map_list_key(item: Any, keys: list) -> Any:
    """The identity of a C{x-kubernetes-list-type: map} item (upstream C{maplist.go})."""
    if not isinstance(item, dict):
        return None
    return tuple(_hashable(item.get(k)) for k in keys)


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool)) or v is None else repr(v)


class _Node:
    """The validator of one schema node (upstream C{Validator})."""

    __slots__ = (
        "additional",
        "all_of",
        "compiled",
        "error",
        "is_root",
        "items",
        "properties",
        "schema",
        "self_type",
    )

    def __init__(self, schema: dict, is_root: bool) -> None:
        self.schema = schema
        self.is_root = is_root
        self.compiled: list[_Compiled] = []
        self.error: str | None = None
        self.properties: dict[str, _Node] = {}
        self.items: _Node | None = None
        self.additional: _Node | None = None
        self.all_of: list[_Node] = []
        self.self_type = None


def _has_rules(s: Any) -> bool:
    if not isinstance(s, dict):
        return False
    if s.get("x-kubernetes-validations"):
        return True
    if _has_rules(s.get("items")) or _has_rules(_additional(s)):
        return True
    if any(_has_rules(p) for p in _props(s).values()):
        return True
    return any(_has_rules(a) for a in s.get("allOf") or ())


def _build(validation: dict, node: dict, is_root: bool) -> _Node | None:
    """Upstream C{validator()}: rules from C{validation}, types from C{node}."""
    compiled, error = _compile_node({**node, "x-kubernetes-validations":
                                     validation.get("x-kubernetes-validations")}, is_root)
    v = _Node(node, is_root)
    v.compiled, v.error = compiled, error
    v.self_type = _cel_type(node, is_root)
    items_v, items_n = validation.get("items"), node.get("items")
    if isinstance(items_v, dict) and isinstance(items_n, dict):
        v.items = _build(items_v, items_n, bool(items_n.get("x-kubernetes-embedded-resource")))
    for name, pv in _props(validation).items():
        pn = _props(node).get(name)
        if pn is None or _cel_type(pn, bool(pn.get("x-kubernetes-embedded-resource"))) is None:
            continue
        sub = _build(pv, pn, bool(pn.get("x-kubernetes-embedded-resource")))
        if sub is not None:
            v.properties[name] = sub
    ap_v, ap_n = _additional(validation), _additional(node)
    if ap_v is not None and ap_n is not None:
        v.additional = _build(ap_v, ap_n, bool(ap_n.get("x-kubernetes-embedded-resource")))
    for a in validation.get("allOf") or ():
        if isinstance(a, dict):
            sub = _build(a, node, is_root)
            if sub is not None:
                v.all_of.append(sub)
    if compiled or error or v.items or v.additional or v.properties or v.all_of:
        return v
    return None


class _Run:
    """One validation pass: the error list, the warnings, and the remaining budget."""

    __slots__ = ("budget", "errors", "limit", "ratcheting", "warnings")

    def __init__(self, budget: int, warnings: list | None, ratcheting: bool,
                 limit: int) -> None:
        self.limit = limit
        self.errors: list[FieldError] = []
        self.warnings = warnings
        self.budget = budget
        self.ratcheting = ratcheting


class CELValidator:
    """
    The C{x-kubernetes-validations} rules of one CRD version, compiled once (upstream
    C{cel.NewValidator} with C{isResourceRoot} true and C{PerCallLimit}).

    @param schema: the version's structural C{openAPIV3Schema} dict.
    @param per_call_limit: the most one evaluation may cost (upstream C{PerCallLimit}).
    """

    def __init__(self, schema: dict, per_call_limit: int = PER_CALL_LIMIT) -> None:
        self.schema = schema
        self.per_call_limit = per_call_limit
        self._root = _build(schema, schema, True) if _has_rules(schema) else None

    @property
    def has_rules(self) -> bool:
        """Whether the schema declares any rule at all (no need to call L{validate})."""
        return self._root is not None

    def validate(self, obj: dict, old_obj: dict | None = None, *,
                 budget: int = RUNTIME_CEL_COST_BUDGET,
                 warnings: list | None = None) -> list[FieldError]:
        """
        Evaluate every rule at every node where C{obj} has a (non-null) value; transition
        rules (those using C{oldSelf}) only where C{old_obj} has a value at the correlated
        path (object properties and maps by key, C{x-kubernetes-list-type: map} items by
        their keys; atomic and set lists never) unless C{optionalOldSelf} is set.

        @param obj: the custom resource (wire form dict).
        @param old_obj: the stored object on update, else None.
        @param budget: the runtime cost budget (upstream C{RuntimeCELCostBudget}).
        @param warnings: on update, a list to receive the text of errors that validation
            ratcheting (upstream C{CRDValidationRatcheting}, on by default in v1.32) turns
            into warnings: failures of rules not using C{oldSelf} on values left unchanged.
            Without it every failure is an error.
        @return: field errors: C{Invalid} (bad value printed as the schema type, C{"object"},
            C{"string"}, ...; detail the rule's C{message}, its C{messageExpression}'s
            result, or C{failed rule: <rule>}) or as the rule's C{reason} says
            (C{Forbidden}, C{Required}, C{Duplicate}); at the rule's C{fieldPath} when
            given.  The root's path prints as C{<nil>} as upstream's nil path does.
        """
        if self._root is None or obj is None:
            return []
        run = _Run(budget, warnings, warnings is not None and old_obj is not None,
                   self.per_call_limit)
        _validate(self._root, None, obj, old_obj, run, True)
        return run.errors


def _child(path: Path | None, name: str) -> Path:
    return Path(name) if path is None else path.child(name)


def _key(path: Path | None, key: str) -> Path:
    return Path().key(key) if path is None else path.key(key)


def _index(path: Path | None, i: int) -> Path:
    return Path().index(i) if path is None else path.index(i)


def _validate(v: _Node, path: Path | None, obj: Any, old: Any, run: _Run,
              unchanged: bool) -> None:
    if obj is None:
        return
    _validate_expressions(v, path, obj, old, run, unchanged)
    if run.budget < 0:
        return
    for a in v.all_of:
        _validate(a, path, obj, old, run, unchanged)
        if run.budget < 0:
            return
    s = v.schema
    if isinstance(obj, list):
        if v.items is None:
            return
        old_list = old if isinstance(old, list) else None
        keys = s.get("x-kubernetes-list-map-keys") or []
        index = {}
        if old_list and s.get("x-kubernetes-list-type") == "map" and keys:
            for item in old_list:
                index.setdefault(_map_list_key(item, keys), item)
        for i, item in enumerate(obj):
            old_item = index.get(_map_list_key(item, keys)) if index else None
            same = (old_item == item) if old_item is not None else (
                unchanged and not index and old_list is not None and i < len(old_list)
                and old_list[i] == item)
            _validate(v.items, _index(path, i), item, old_item, run, same)
            if run.budget < 0:
                return
    elif isinstance(obj, dict):
        old_map = old if isinstance(old, dict) else None
        correlatable = s.get("x-kubernetes-map-type") in (None, "granular", "atomic")
        if v.additional is not None:
            for k, item in obj.items():
                old_item = old_map.get(k) if (correlatable and old_map) else None
                _validate(v.additional, _key(path, k), item, old_item, run,
                          old_item is not None and old_item == item)
                if run.budget < 0:
                    return
        if v.properties:
            for k, item in obj.items():
                sub = v.properties.get(k)
                if sub is None:
                    continue
                old_item = old_map.get(k) if (correlatable and old_map) else None
                _validate(sub, _child(path, k), item, old_item, run,
                          old_item is not None and old_item == item)
                if run.budget < 0:
                    return


def _out_of_budget(run: _Run, path: Path | None, type_name: str) -> None:
    run.errors.append(invalid(_path_or_nil(path), type_name,
                              "validation failed due to running out of cost budget, no "
                              "further validation rules will be run"))
    run.budget = -1


def _path_or_nil(path: Path | None) -> Path | str:
    return "<nil>" if path is None else path


def _validate_expressions(v: _Node, path: Path | None, obj: Any, old: Any, run: _Run,
                          unchanged: bool) -> None:
    s = v.schema
    type_name = s.get("type", "")
    fpath = _path_or_nil(path)
    if v.error is not None:
        run.errors.append(invalid(fpath, type_name,
                                  f"rule compiler initialization error: {v.error}"))
        return
    if not v.compiled:
        return
    if run.budget <= 0:
        _out_of_budget(run, path, type_name)
        return
    self_val = _to_cel(obj, s, v.is_root)
    old_val = _to_cel(old, s, v.is_root) if old is not None else None
    plain = {_SELF: self_val}
    if old is not None:
        plain[_OLD_SELF] = old_val
    optional = {_SELF: self_val, _OLD_VALUE: old_val if old is not None else
                _zero_of(self_val), _OLD_PRESENT: old is not None}
    cost_scope = {_SELF: self_val, _OLD_SELF: old_val}
    for cr in v.compiled:
        rule = cr.rule
        if cr.error is not None:
            run.errors.append(invalid(fpath, type_name, f"rule compile error: {cr.error}"))
            continue
        if cr.program is None:
            continue
        if cr.uses_old_self and old is None and not cr.optional_old_self:
            continue
        activation = optional if cr.optional_old_self else plain
        cost = cel_cost.cost_of(cr.ast, cost_scope, run.limit)
        if cost > run.limit:
            actual = run.limit + 1
            if actual > run.budget:
                _out_of_budget(run, path, type_name)
                return
            run.errors.append(invalid(
                fpath, type_name,
                "'operation cancelled: actual cost limit exceeded': no further validation "
                "rules will be run due to call cost exceeds limit for rule: "
                f"{_rule_error_string(rule)}"))
            run.budget = -1
            return
        if cost > run.budget:
            _out_of_budget(run, path, type_name)
            return
        run.budget -= cost
        result = cr.program.eval(data=activation)
        if result.type() == T.ERROR:
            err = _runtime_error(str(result.value()))
            if err.startswith("no such overload"):
                detail = (f"'{err}': call arguments did not match a supported operator, "
                          f"function or macro signature for rule: {_rule_error_string(rule)}")
            else:
                detail = f"{err} evaluating rule: {_rule_error_string(rule)}"
            run.errors.append(invalid(fpath, type_name, detail))
            continue
        if result.value() is True:
            continue
        current: Path | str = fpath
        if cr.field_path:
            current = _child(path, cr.field_path)

        ratchet = run.ratcheting and not cr.uses_old_self and unchanged

        def add(e: FieldError, ratchet: bool = ratchet) -> None:
            if ratchet:
                run.warnings.append(e.error())
            else:
                run.errors.append(e)

        detail = None
        if cr.message_program is not None:
            mcost = cel_cost.cost_of(cr.message_ast, cost_scope, run.limit)
            if min(mcost, run.limit + 1) > run.budget:
                add(invalid(current, type_name, "messageExpression evaluation failed due to "
                            "running out of cost budget, no further validation rules will "
                            "be run"))
                run.budget = -1
                return
            if mcost > run.limit:
                add(invalid(current, type_name, "no further validation rules will be run due "
                            "to call cost exceeds limit for messageExpression: "
                            f"{go_quote(rule.get('messageExpression') or '')}"))
                run.budget = -1
                return
            run.budget -= mcost
            mres = cr.message_program.eval(data=activation)
            if mres.type() != T.ERROR and isinstance(mres.value(), str):
                text = mres.value().strip()
                if text and len(text.encode()) <= MAX_MESSAGE_EXPRESSION_BYTES and \
                        "\n" not in text:
                    detail = text
        if detail is None:
            detail = _rule_message_or_default(rule)
        add(_error_for_reason(current, type_name, detail, rule.get("reason")))


def _zero_of(value: Any) -> Any:
    """A placeholder of C{value}'s runtime type for the unset optional C{oldSelf}."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, str, bytes, list, dict)):
        return type(value)()
    return value
