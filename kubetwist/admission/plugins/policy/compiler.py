# -*- test-case-name: tests.admission.test_policy -*-
"""
Compilation and evaluation of admission-policy CEL: upstream
C{k8s.io/apiserver/pkg/admission/plugin/cel} (C{compile.go}, C{activation.go},
C{composition.go}, C{condition.go}) with the environment of L{kubetwist.cel.library} and the
cost model of L{kubetwist.cel.cost}.

Expressions see C{object}, C{oldObject}, C{request}, C{namespaceObject}, C{variables} (a
map of the policy's variables, each computed on first use, once per evaluation context, as
upstream's lazy map) and, when the policy has a C{paramKind}, C{params}; all of them typed
C{dyn} (upstream types C{request} and C{namespaceObject}).  Costs are charged as upstream:
each evaluation may cost at most L{PER_CALL_LIMIT} (cel-go's C{CostLimit}: the error
C{operation cancelled: actual cost limit exceeded}), and the evaluations of one
C{ForInput} share L{RUNTIME_CEL_COST_BUDGET}, the variables they use included
(C{validation failed due to running out of cost budget, no further validation rules will be
run}).  The runtime cost is L{kubetwist.cel.cost}'s upper bound of cel-go's.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

from kubetwist.cel import cost as cel_cost
from kubetwist.cel import strip_status

__all__ = [
    "BudgetExceeded",
    "Compiled",
    "Context",
    "EvalError",
    "PER_CALL_LIMIT",
    "RUNTIME_CEL_COST_BUDGET",
    "compile_expression",
]

#: Upstream C{celconfig.PerCallLimit}: the most one evaluation may cost.
PER_CALL_LIMIT = 1000000
#: Upstream C{celconfig.RuntimeCELCostBudget}: what the expressions of one input may cost.
RUNTIME_CEL_COST_BUDGET = 10000000
#: Upstream C{celconfig.MaxEvaluatedMessageExpressionSizeBytes}.
MAX_MESSAGE_BYTES = 5 * 1024

#: upstream's out-of-budget text
OUT_OF_BUDGET = ("validation failed due to running out of cost budget, no further validation "
                 "rules will be run")

_env_lock = threading.Lock()
_envs: dict[tuple, Any] = {}
_TYPE_NAMES = {"NULL": "null_type", "TIMESTAMP": "google.protobuf.Timestamp",
               "DURATION": "google.protobuf.Duration"}
_TYPE_TOKEN = re.compile(r"[A-Z_]+")


def _go_type_name(runtime_name: str) -> str:
    """cel-go's C{Type.String()} of a type the runtime prints: C{LIST<INT>} -> C{list(int)}."""
    text = runtime_name.split(".")[-1] if "<" not in runtime_name else runtime_name
    text = _TYPE_TOKEN.sub(lambda m: _TYPE_NAMES.get(m.group(0), m.group(0).lower()), text)
    return text.replace("<", "(").replace(">", ")")


def environment(has_params: bool, typed: Optional[dict] = None) -> Any:
    """
    The CEL environment of admission expressions (cached): the Kubernetes library of
    L{kubetwist.cel.library} with the admission variables.

    @param typed: C{{name: cel.Type}} declared instead of the admission variables (type
        checking probes).
    """
    from cel_expr_python import cel

    key: tuple = (has_params,)
    if typed is not None:
        key = tuple(sorted((n, str(t)) for n, t in typed.items()))
    with _env_lock:
        env = _envs.get(key)
        if env is None:
            T = cel.Type
            dyn = T.DYN
            names = {n: dyn for n in ("object", "oldObject", "request", "namespaceObject")}
            if has_params:
                names["params"] = dyn
            names["variables"] = T.Map(T.STRING, dyn)
            names["authorizer"] = T.Map(T.BOOL, T.BYTES)
            names["authorizer.requestResource"] = T.Map(T.UINT, T.List(T.BYTES))
            if typed:
                names = dict(typed)
            config, impls = _library()
            env = cel.NewEnv(config=cel.NewEnvConfigFromYaml(config), variables=names,
                             function_impls=impls)
            _envs[key] = env
        return env


_library_cache: list = []


def _library() -> tuple[str, dict]:
    """The shared library's environment configuration with the C{authorizer} functions of
    L{kubetwist.admission.plugins.policy.authz} added, and the implementations."""
    if not _library_cache:
        import yaml

        from kubetwist.admission.plugins.policy import authz
        from kubetwist.cel.library import ENV_CONFIG_YAML, FUNCTION_IMPLS, _type_yaml

        config = yaml.safe_load(ENV_CONFIG_YAML)
        functions: dict[str, list] = {}
        for name, oid, target, args, result, _ in authz.DECLARATIONS:
            overload: dict = {"id": oid, "target": _type_yaml(target)}
            if args:
                overload["args"] = [_type_yaml(a) for a in args]
            overload["return"] = _type_yaml(result)
            functions.setdefault(name, []).append(overload)
        config["functions"] += [{"name": n, "overloads": o} for n, o in functions.items()]
        _library_cache.append((yaml.safe_dump(config, sort_keys=False),
                               {**FUNCTION_IMPLS, **authz.IMPLS}))
    return _library_cache[0]


@dataclass
class Compiled:
    """
    One compiled expression (upstream C{CompilationResult}).

    @ivar expression: the source text.
    @ivar program: the runtime's compiled expression, or C{None} on error.
    @ivar ast: its L{CheckedAST <kubetwist.cel.cost.CheckedAST>} (cost, references).
    @ivar error: upstream's compile error text (C{compilation failed: ERROR: <input>:1:3:
        ...}, C{must evaluate to bool but got int}), or C{None}.
    @ivar variables: the names of C{variables.<name>} the expression uses.
    """

    expression: str
    program: Any = None
    ast: Any = None
    error: Optional[str] = None
    variables: list[str] = field(default_factory=list)


def _variable_refs(ast: Any) -> list[str]:
    out: list[str] = []

    def walk(e: Any) -> None:
        if e is None:
            return
        if e.kind == "select" and e.operand is not None and e.operand.kind == "ident" and \
                e.operand.name == "variables":
            if e.name not in out:
                out.append(e.name)
            return
        for sub in (e.operand, e.target, e.iter_range, e.accu_init, e.loop_condition,
                    e.loop_step, e.result):
            walk(sub)
        for a in e.args or ():
            walk(a)

    walk(ast.expr)
    return out


def compile_expression(expression: str, returns: tuple[str, ...] = ("bool",),
                       has_params: bool = False) -> Compiled:
    """
    Upstream C{CompileCELExpression}.

    @param returns: the accepted result types (C{("bool",)}, C{("string",)},
        C{("string", "null_type")}; C{("dyn",)} takes any).
    @return: a L{Compiled}, with C{error} set when it does not compile.
    """
    result = Compiled(expression)
    try:
        compiled = environment(has_params).compile(expression)
    except RuntimeError as e:
        result.error = "compilation failed: " + strip_status(str(e))
        return result
    got = _go_type_name(str(compiled.return_type()))
    if got and got != "dyn" and "dyn" not in returns and got not in returns:
        if len(returns) == 1:
            result.error = f"must evaluate to {returns[0]} but got {got}"
        else:
            result.error = f"must evaluate to one of [{' '.join(returns)}] but got {got}"
        return result
    result.program = compiled
    result.ast = cel_cost.decode_checked(compiled.serialize())
    result.variables = _variable_refs(result.ast)
    return result


class BudgetExceeded(Exception):
    """The expressions of one input ran out of budget (upstream's C{ErrOutOfBudget} error
    from C{ForInput}); the message is upstream's."""


@dataclass
class EvalError:
    """An evaluation's error (upstream C{EvaluationResult.Error}); C{message} is its text."""

    message: str


def runtime_error_text(text: str) -> str:
    """A runtime (cel-cpp) evaluation error in cel-go's words."""
    text = strip_status(text)
    m = re.match(r'^Key not found in map ?: ?"?(.*?)"?$', text)
    if m:
        return f"no such key: {m.group(1)}"
    if text.startswith(("No matching overloads found", "No overload found")):
        return "no such overload"
    if text == "divide by zero":
        return "division by zero"
    m = re.match(r"^Index error: index=(-?\d+)", text)
    if m:
        return f"index out of bounds: {m.group(1)}"
    m = re.match(r'^No value with name "(.*)" found in Activation$', text)
    if m:
        return f"no such attribute(s): {m.group(1)}"
    return text


class Context:
    """
    One evaluation context (upstream C{compositionContext} over one activation): the input
    variables and the policy's C{variables}, each computed at most once.

    @param data: C{{"object": ..., "oldObject": ..., "request": ..., "namespaceObject": ...,
        "params": ...}} (JSON values; C{None} is CEL C{null}).
    @param variables: C{{name: Compiled}} of the policy's variables, in order.
    """

    def __init__(self, data: dict, variables: dict[str, Compiled]) -> None:
        self.data = data
        self.definitions = variables
        self.values: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        self.pending_cost = 0
        self._active: set[str] = set()

    def _scope(self) -> dict:
        scope = dict(self.data)
        scope["variables"] = dict(self.values)
        return scope

    def _ensure(self, names: list[str]) -> Optional[str]:
        """
        Compute the variables C{names} (a failed one stays out of the map); the first
        failure's text, if any.  An expression that fails having used a failed variable
        reports that variable's error, as upstream's lazy map does; one that succeeds
        without it (C{||} short-circuit) is not affected.
        """
        first: Optional[str] = None
        for name in names:
            err = self._ensure_one(name)
            if first is None:
                first = err
        return first

    def _ensure_one(self, name: str) -> Optional[str]:
        if name in self.errors:
            return self.errors[name]
        if name in self.values or name not in self.definitions or name in self._active:
            return None
        c = self.definitions[name]
        if c.error is not None:
            self.errors[name] = f'composited variable "{name}" fails to compile: {c.error}'
            return self.errors[name]
        self._active.add(name)
        try:
            inner = self._ensure(c.variables)
        finally:
            self._active.discard(name)
        cost = cel_cost.cost_of(c.ast, self._scope(), PER_CALL_LIMIT)
        self.pending_cost += cost
        if cost > PER_CALL_LIMIT:
            err = "operation cancelled: actual cost limit exceeded"
        else:
            ok, value = _run(c, self._scope())
            if ok:
                self.values[name] = value
                return None
            if inner is not None:
                self.errors[name] = inner
                return inner
            err = value
        self.errors[name] = f'composited variable "{name}" fails to evaluate: {err}'
        return self.errors[name]

    def evaluate(self, c: Compiled, remaining: int) -> tuple[Any, int]:
        """
        Upstream C{evaluationActivation.Evaluate}: the value of C{c}, or an L{EvalError}.

        @return: C{(value or EvalError, remaining budget)}.
        @raise BudgetExceeded: the budget ran out (the evaluations stop).
        """
        if c.error is not None:
            return EvalError(f"compilation error: {c.error}"), remaining
        var_error = self._ensure(c.variables)
        if self.pending_cost > remaining:
            raise BudgetExceeded(OUT_OF_BUDGET)
        remaining -= self.pending_cost
        self.pending_cost = 0
        scope = self._scope()
        cost = cel_cost.cost_of(c.ast, scope, PER_CALL_LIMIT)
        if cost > remaining:
            raise BudgetExceeded(OUT_OF_BUDGET)
        remaining -= cost
        if cost > PER_CALL_LIMIT:
            err = "operation cancelled: actual cost limit exceeded"
        else:
            ok, value = _run(c, scope)
            if ok:
                # a failed variable the evaluation did not reach (upstream's map is lazy)
                return value, remaining
            err = var_error if var_error is not None else value
        return EvalError(f"expression '{c.expression}' resulted in error: {err}"), remaining


def _run(c: Compiled, scope: dict) -> tuple[bool, Any]:
    """Evaluate; C{(True, value)} or C{(False, cel-go's error text)}.  The runtime's own
    limits (its comprehension iteration budget) surface as errors."""
    from cel_expr_python import cel

    try:
        out = c.program.eval(data=scope)
    except RuntimeError as e:
        return False, runtime_error_text(str(e))
    if out.type() == cel.Type.ERROR:
        return False, runtime_error_text(str(out.value()))
    return True, out.plain_value()  # plain Python values all the way down (variables)
