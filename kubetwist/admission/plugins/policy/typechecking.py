# -*- test-case-name: tests.admission.test_policy -*-
"""
The type checking of policies and the status controller that records it: upstream
C{validating/typechecking.go} (C{TypeChecker.Check}) and kube-controller-manager's
C{validatingadmissionpolicy-status-controller} (C{pkg/controller/
validatingadmissionpolicystatus}), which a standalone kubetwist runs itself.

For every kind the policy's C{matchConstraints} name without wildcards (at most 10, sorted),
each validation's C{expression} and C{messageExpression} are checked against the kind's
OpenAPI schema: the CEL runtime compiles with C{object} typed C{dyn}, so the types of the
operands the schema knows (C{object.spec.replicas} is C{int}, a constant C{'1'} a
C{string}) are checked here by compiling each operator call with typed stand-ins and
reporting the runtime's C{found no matching overload for '_>_' applied to '(int, string)'}
at the operator's position, as cel-go's checker words it, and fields the schema does not
have (C{undefined field 'x'}).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from twisted.internet.defer import ensureDeferred
from twisted.logger import Logger

from kubetwist.admission.plugins.policy.compiler import environment
from kubetwist.authorization.rbac.informer import Informer
from kubetwist.cel import cost as cel_cost
from kubetwist.cel import strip_status

__all__ = ["StatusController", "TypeChecker"]

log = Logger()

#: Upstream C{maxTypesToCheck}.
MAX_TYPES_TO_CHECK = 10

#: C{(group, version, resource) -> [kind]}
KindResolver = Callable[[str, str, str], list]
#: C{(group, version, kind) -> (component schemas, root component name) or None}
SchemaResolver = Callable[[str, str, str], Optional[tuple]]

_BINARY = {"_==_": "==", "_!=_": "!=", "_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=",
           "_+_": "+", "_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%", "@in": "in"}
_BOOL_RESULT = {"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in", "_&&_", "_||_", "!_"}


def _snippet(source: str, offset: int, message: str) -> str:
    """cel-go's issue text: C{ERROR: <input>:L:C: msg} and the line with a caret."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    line = source[line_start: line_end if line_end >= 0 else len(source)]
    line_no = source.count("\n", 0, offset) + 1
    col = offset - line_start
    return f"ERROR: <input>:{line_no}:{col + 1}: {message}\n | {line}\n | {'.' * col}^"


class _Schemas:
    """Schema nodes of one kind, C{$ref}/C{allOf} resolved."""

    def __init__(self, components: dict) -> None:
        self.components = components

    def resolve(self, s: Any) -> Optional[dict]:
        for _ in range(10):
            if not isinstance(s, dict):
                return None
            ref = s.get("$ref")
            if ref is None and len(s.get("allOf") or []) == 1:
                ref = s["allOf"][0].get("$ref")
            if ref is None:
                return s
            s = self.components.get(ref.rsplit("/", 1)[-1])
        return None

    def type_of(self, s: Any) -> Any:
        """A type: C{("int",)}, C{("list", elem)}, C{("map", value)}, C{("object", schema)},
        or C{None} (dyn)."""
        s = self.resolve(s)
        if s is None or s.get("x-kubernetes-int-or-string") or \
                s.get("format") == "int-or-string":
            return None
        t = s.get("type")
        if t == "integer":
            return ("int",)
        if t == "number":
            return ("double",)
        if t == "boolean":
            return ("bool",)
        if t == "string":
            return {"date-time": ("timestamp",), "byte": ("bytes",)}.get(s.get("format"),
                                                                         ("string",))
        if t == "array":
            return ("list", self.type_of(s.get("items")))
        if t == "object":
            if s.get("properties"):
                return ("object", s)
            ap = s.get("additionalProperties")
            if isinstance(ap, dict):
                return ("map", self.type_of(ap))
        return None

    def field(self, parent: Any, name: str) -> Any:
        if parent is None:
            return None
        if parent[0] == "object":
            sub = (parent[1].get("properties") or {}).get(name)
            return self.type_of(sub) if sub is not None else None
        if parent[0] == "map":
            return parent[1]
        return None


def _cel_type(t: Any) -> Any:
    from cel_expr_python import cel

    T = cel.Type
    if t is None or t[0] == "object":
        return T.DYN
    simple = {"int": T.INT, "double": T.DOUBLE, "bool": T.BOOL, "string": T.STRING,
              "bytes": T.BYTES, "timestamp": T.TIMESTAMP, "null": T.NULL, "uint": T.UINT}
    if t[0] in simple:
        return simple[t[0]]
    if t[0] == "list":
        return T.List(_cel_type(t[1]))
    if t[0] == "map":
        return T.Map(T.STRING, _cel_type(t[1]))
    return T.DYN


def _const_type(value: Any) -> Any:
    if isinstance(value, bool):
        return ("bool",)
    if isinstance(value, int):
        return ("int",)
    if isinstance(value, float):
        return ("double",)
    if isinstance(value, str):
        return ("string",)
    if isinstance(value, bytes):
        return ("bytes",)
    return None


class _Checker:
    def __init__(self, source: str, schemas: _Schemas, roots: dict, has_params: bool,
                 ast: Any) -> None:
        self.source = source
        self.schemas = schemas
        self.roots = roots
        self.has_params = has_params
        self.ast = ast
        self.issues: list[tuple[int, str]] = []

    def probe(self, e: Any, fn: str, args: list) -> None:
        names = {f"a{i}": _cel_type(t) for i, t in enumerate(args)}
        op = _BINARY[fn]
        try:
            environment(self.has_params, typed=names).compile(f"a0 {op} a1")
        except RuntimeError as err:
            text = strip_status(str(err))
            marker = "found no matching overload"
            if marker in text:
                message = marker + text.split(marker, 1)[1].split("\n", 1)[0]
                pos = self.ast.positions.get(e.id, 0)
                self.issues.append((pos, _snippet(self.source, pos, message)))

    def walk(self, e: Any, scope: dict) -> Any:
        if e is None:
            return None
        k = e.kind
        if k == "const":
            return _const_type(e.value)
        if k == "ident":
            return scope.get(e.name)
        if k == "select":
            parent = self.walk(e.operand, scope)
            if parent is not None and parent[0] == "object" and \
                    e.name not in (parent[1].get("properties") or {}):
                pos = self.ast.positions.get(e.id, 0)
                self.issues.append((pos, _snippet(self.source, pos,
                                                  f"undefined field '{e.name}'")))
                return None
            if e.test_only:
                return ("bool",)
            return self.schemas.field(parent, e.name)
        if k == "list":
            for a in e.args:
                self.walk(a, scope)
            return None
        if k == "map":
            for a in e.args:
                self.walk(a, scope)
            return None
        if k == "comprehension":
            rng = self.walk(e.iter_range, scope)
            inner = dict(scope)
            elem = rng[1] if rng is not None and rng[0] in ("list",) else None
            inner[e.iter_var] = elem if not e.iter_var2 else ("int",)
            if e.iter_var2:
                inner[e.iter_var2] = elem
            inner[e.accu_var] = None
            for sub in (e.accu_init, e.loop_condition, e.loop_step, e.result):
                self.walk(sub, inner)
            return None
        if e.target is not None:
            self.walk(e.target, scope)
        args = [self.walk(a, scope) for a in e.args]
        fn = e.name
        if fn == "_[_]" and len(args) == 2:
            if args[0] is not None and args[0][0] in ("list", "map"):
                return args[0][1]
            return None
        if fn in _BINARY and len(args) == 2 and all(
                a is not None and a[0] != "object" for a in args):
            before = len(self.issues)
            self.probe(e, fn, args)
            if len(self.issues) > before:
                return None
            if fn not in _BOOL_RESULT and args[0] == args[1]:
                return args[0]
        if fn in _BOOL_RESULT:
            return ("bool",)
        if fn in ("size", "int"):
            return ("int",)
        if fn == "string":
            return ("string",)
        return None


def schemas_root(s: dict) -> dict:
    """A resource's root schema as CEL types it (upstream C{WithTypeAndObjectMeta}):
    C{apiVersion}, C{kind} and C{metadata} (C{name}, C{generateName}) when absent."""
    props = dict(s.get("properties") or {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    props.setdefault("metadata", {"type": "object", "properties": {
        "name": {"type": "string"}, "generateName": {"type": "string"}}})
    return {**s, "type": "object", "properties": props}


def check_expression(expression: str, object_schema: Optional[tuple],
                     params_schema: Optional[tuple], has_params: bool) -> list[str]:
    """
    The type errors of one expression against an object schema (and a params schema):
    cel-go's issue texts in source order.

    @param object_schema: C{(components, root name)} from a L{SchemaResolver}.
    """
    try:
        compiled = environment(has_params).compile(expression)
    except RuntimeError:
        return []
    ast = cel_cost.decode_checked(compiled.serialize())
    components: dict = {}
    roots: dict = {}
    for names, schema in ((("object", "oldObject"), object_schema),
                          (("params",), params_schema)):
        if schema is None:
            continue
        components.update(schema[0])
        root = schemas_root(schema[0][schema[1]])
        for n in names:
            roots[n] = ("object", root)
    schemas = _Schemas(components)
    checker = _Checker(expression, schemas, roots, has_params, ast)
    checker.walk(ast.expr, roots)
    return [text for _, text in sorted(checker.issues, key=lambda i: i[0])]


class TypeChecker:
    """
    Upstream C{TypeChecker}.

    @param kinds: a L{KindResolver}.
    @param schemas: a L{SchemaResolver}.
    """

    def __init__(self, kinds: KindResolver, schemas: SchemaResolver) -> None:
        self._kinds = kinds
        self._schemas = schemas
        #: C{(KindResolver, SchemaResolver)} asked when the first pair knows nothing (the
        #: custom resources, set by the composition root), or C{None}
        self.fallback: Optional[tuple[KindResolver, SchemaResolver]] = None

    def kinds(self, group: str, version: str, resource: str) -> list:
        """The kinds of a resource (built-in first, then the fallback's)."""
        found = self._kinds(group, version, resource)
        if not found and self.fallback is not None:
            found = self.fallback[0](group, version, resource)
        return found

    def schemas(self, group: str, version: str, kind: str) -> Optional[tuple]:
        """C{(components, root name)} of a kind, or C{None}."""
        found = self._schemas(group, version, kind)
        if found is None and self.fallback is not None:
            found = self.fallback[1](group, version, kind)
        return found

    def types_to_check(self, policy: dict) -> list[tuple[str, str, str]]:
        """Upstream C{typesToCheck}: the GVKs of the rules without wildcards, sorted."""
        mc = (policy.get("spec") or {}).get("matchConstraints") or {}
        gvks: set = set()
        for rule in mc.get("resourceRules") or []:
            groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
            resources = rule.get("resources") or []
            if any("*" in x for x in groups + versions + resources) or \
                    not (groups and versions and resources):
                continue
            count = 0
            for g in sorted(groups):
                for v in sorted(versions):
                    for r in sorted(resources):
                        for kind in self.kinds(g, v, r):
                            gvks.add((g, v, kind))
                            count += 1
                            if count == MAX_TYPES_TO_CHECK:
                                return sorted(gvks)
        return sorted(gvks)

    def check(self, policy: dict) -> list[dict]:
        """Upstream C{Check}: C{[{"fieldRef": "spec.validations[0].expression",
        "warning": "apps/v1, Kind=Deployment: compilation failed: ERROR: ..."}]}."""
        spec = policy.get("spec") or {}
        pk = spec.get("paramKind")
        has_params = pk is not None
        params_schema = None
        if pk is not None:
            group, _, version = (pk.get("apiVersion") or "").rpartition("/")
            params_schema = self.schemas(group, version, pk.get("kind") or "")
        targets = []
        for g, v, k in self.types_to_check(policy):
            schema = self.schemas(g, v, k)
            if schema is not None:
                targets.append((f"{g}/{v}, Kind={k}", schema))
        warnings: list[dict] = []
        for i, validation in enumerate(spec.get("validations") or []):
            for field_name in ("expression", "messageExpression"):
                source = validation.get(field_name) or ""
                if not source:
                    continue
                results = []
                for name, schema in targets:
                    issues = check_expression(source, schema, params_schema, has_params)
                    if issues:
                        results.append(f"{name}: compilation failed: {chr(10).join(issues)}\n")
                if results:
                    warnings.append({"fieldRef": f"spec.validations[{i}].{field_name}",
                                     "warning": "\n".join(results)})
        return warnings


class StatusController:
    """
    Keeps C{status.observedGeneration} and C{status.typeChecking} of every policy (upstream
    C{validatingadmissionpolicy-status-controller}): each policy whose generation is newer
    than its C{observedGeneration} is checked and its status written.

    @param policies: the C{validatingadmissionpolicies} store (C{storage}, C{prefix},
        C{key}).
    @param checker: a L{TypeChecker}.
    @param clock: C{IReactorTime}.
    """

    def __init__(self, policies: Any, checker: TypeChecker, clock: Any) -> None:
        self.store = policies
        self.checker = checker
        self.clock = clock
        self.informer = Informer(policies.storage, clock, policies.prefix(""), self._changed)
        self._pending: set = set()
        self._call: Any = None

    def start(self) -> Any:
        """Start following policies (the post-start hook)."""
        self.informer.start()
        return self.informer.wait_synced()

    def stop(self) -> None:
        """Stop following policies."""
        self.informer.stop()
        if self._call is not None and self._call.active():
            self._call.cancel()

    def _changed(self, key: Any) -> None:
        if key is None:
            self._pending.update(self.informer.items)
        else:
            self._pending.add(key)
        if self._call is None or not self._call.active():
            self._call = self.clock.callLater(0, self._run)

    def _run(self) -> None:
        pending, self._pending = self._pending, set()
        for key in sorted(pending):
            policy = self.informer.items.get(key)
            if policy is None:
                continue
            meta = policy.get("metadata") or {}
            if (meta.get("generation") or 0) <= \
                    ((policy.get("status") or {}).get("observedGeneration") or 0):
                continue
            ensureDeferred(self.reconcile(policy)).addErrback(
                lambda f: log.failure("policy status update failed", f))

    async def reconcile(self, policy: dict) -> None:
        """Check one policy and write its status (when its generation is unchanged)."""
        meta = policy.get("metadata") or {}
        generation = meta.get("generation") or 0
        warnings = self.checker.check(policy)

        def update(current: Optional[dict]) -> dict:
            if current is None or (current.get("metadata") or {}).get("uid") != meta.get("uid"):
                raise _Gone()
            status = dict(current.get("status") or {})
            status["observedGeneration"] = generation
            status["typeChecking"] = {"expressionWarnings": warnings} if warnings else {}
            current["status"] = status
            return current

        try:
            await self.store.storage.guaranteed_update(
                self.store.key("", meta.get("name", "")), update, ignore_not_found=True)
        except _Gone:
            pass


class _Gone(Exception):
    """The policy was deleted or replaced."""
