# -*- test-case-name: tests.admission.test_policy -*-
"""
One policy's compiled expressions and their evaluation against one request: upstream
C{compilePolicy} (C{validating/plugin.go}), C{validator.Validate} (C{validating/validator.go})
and C{matchconditions.matcher.Match}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from kubetwist.admission.plugins.policy.compiler import (
    MAX_MESSAGE_BYTES,
    RUNTIME_CEL_COST_BUDGET,
    BudgetExceeded,
    Compiled,
    Context,
    EvalError,
    compile_expression,
)

__all__ = ["AuditAnnotation", "Decision", "PolicyValidator", "ValidateResult"]

ADMIT = "Admit"
DENY = "Deny"


@dataclass
class Decision:
    """
    Upstream C{PolicyDecision}.

    @ivar action: L{ADMIT} or L{DENY}.
    @ivar evaluation: C{admit}, C{deny} or C{error}.
    @ivar reason: the Status reason of a denial (C{Invalid} unless the validation names one).
    """

    action: str
    evaluation: str
    message: str = ""
    reason: str = ""


@dataclass
class AuditAnnotation:
    """Upstream C{PolicyAuditAnnotation}: C{action} C{publish}, C{error} or C{exclude}."""

    key: str
    action: str
    value: str = ""
    error: str = ""


@dataclass
class ValidateResult:
    """Upstream C{ValidateResult}."""

    decisions: list[Decision] = field(default_factory=list)
    audit_annotations: list[AuditAnnotation] = field(default_factory=list)


class PolicyValidator:
    """
    The compiled expressions of one policy (built once per policy generation).

    @param spec: the policy's C{spec}.
    """

    def __init__(self, spec: dict) -> None:
        self.failure_policy = spec.get("failurePolicy") or "Fail"
        has_params = spec.get("paramKind") is not None
        self.has_params = has_params
        self.variables: dict[str, Compiled] = {}
        for v in spec.get("variables") or []:
            self.variables[v.get("name") or ""] = compile_expression(
                v.get("expression") or "", ("dyn",), has_params)
        self.match_conditions = [
            (c.get("name") or "", compile_expression(c.get("expression") or "", ("bool",),
                                                     has_params))
            for c in spec.get("matchConditions") or []]
        self.validations: list[tuple[dict, Compiled, Optional[Compiled]]] = []
        for v in spec.get("validations") or []:
            message = v.get("messageExpression") or ""
            self.validations.append((
                v, compile_expression(v.get("expression") or "", ("bool",), has_params),
                compile_expression(message, ("string",), has_params) if message else None))
        self.audit_annotations = [
            (a.get("key") or "", a.get("valueExpression") or "",
             compile_expression(a.get("valueExpression") or "", ("string", "null_type"),
                                has_params))
            for a in spec.get("auditAnnotations") or []]

    def _error(self, message: str) -> Decision:
        action = ADMIT if self.failure_policy == "Ignore" else DENY
        return Decision(action, "error", message)

    def _match(self, data: dict) -> tuple[bool, Optional[str]]:
        """Upstream C{matchconditions.matcher.Match}: C{(matches, error text)}."""
        if not self.match_conditions:
            return True, None
        ctx = Context(dict(data, namespaceObject=None), self.variables)
        remaining = RUNTIME_CEL_COST_BUDGET
        errs: list[str] = []
        try:
            for _, c in self.match_conditions:
                value, remaining = ctx.evaluate(c, remaining)
                if isinstance(value, EvalError):
                    errs.append(value.message)
                elif value is False:
                    return False, None
        except BudgetExceeded as e:
            if self.failure_policy == "Ignore":
                return False, None
            return False, str(e)
        if errs:
            if self.failure_policy == "Ignore":
                return False, None
            return False, errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
        return True, None

    def validate(self, data: dict) -> ValidateResult:
        """
        Upstream C{validator.Validate}.

        @param data: the CEL input (see L{Context}).
        """
        matched, error = self._match(data)
        if error is not None:
            return ValidateResult([self._error(error)])
        if not matched:
            return ValidateResult()
        decisions: list[Decision] = []
        ctx = Context(data, self.variables)
        remaining = RUNTIME_CEL_COST_BUDGET
        results: list[Any] = []
        try:
            for _, c, _ in self.validations:
                value, remaining = ctx.evaluate(c, remaining)
                results.append(value)
        except BudgetExceeded as e:
            return ValidateResult([self._error(str(e))])
        messages: list[Any] = []
        message_error = None
        mctx = Context(data, self.variables)
        budget = remaining
        try:
            for _, _, m in self.validations:
                if m is None:
                    messages.append(None)
                    continue
                value, budget = mctx.evaluate(m, budget)
                messages.append(value)
        except BudgetExceeded as e:
            message_error = str(e)
        for i, (v, _c, _) in enumerate(self.validations):
            value = results[i]
            if isinstance(value, EvalError):
                decisions.append(self._error(value.message))
            elif message_error is not None:
                decisions.append(self._error(f"failed messageExpression: {message_error}"))
            elif value is not True:
                message = ""
                mv = messages[i] if i < len(messages) else None
                if isinstance(mv, str):
                    message = mv.strip()
                    if len(message.encode()) > MAX_MESSAGE_BYTES or "\n" in message:
                        message = ""
                if not message and v.get("message"):
                    message = v["message"].strip()
                if not message:
                    message = f"failed expression: {(v.get('expression') or '').strip()}"
                decisions.append(Decision(DENY, "deny", message, v.get("reason") or "Invalid"))
            else:
                decisions.append(Decision(ADMIT, "admit"))
        annotations: list[AuditAnnotation] = []
        actx = Context(data, self.variables)
        budget = RUNTIME_CEL_COST_BUDGET
        try:
            for key, source, c in self.audit_annotations:
                value, budget = actx.evaluate(c, budget)
                fail = "exclude" if self.failure_policy == "Ignore" else "error"
                if isinstance(value, EvalError):
                    annotations.append(AuditAnnotation(key, fail, error=value.message))
                elif isinstance(value, str):
                    text = value.strip()
                    annotations.append(AuditAnnotation(key, "publish" if text else "exclude",
                                                       text))
                elif value is None:
                    annotations.append(AuditAnnotation(key, "exclude"))
                else:
                    annotations.append(AuditAnnotation(
                        key, "error", error=f"valueExpression '{source}' resulted in "
                        f"unsupported return type: {_type_name(value)}. Return type must be "
                        f"either string or null."))
        except BudgetExceeded as e:
            return ValidateResult([self._error(str(e))])
        return ValidateResult(decisions, annotations)


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__
