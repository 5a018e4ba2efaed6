# -*- test-case-name: tests.admission.test_webhook -*-
"""
Which webhooks a request calls: upstream C{k8s.io/apiserver/pkg/admission/plugin/webhook}
C{predicates/rules} (operations, groups, versions, resources with C{*}, C{*/*} and
C{x/status}, scope), C{predicates/namespace} and C{predicates/object} (label selectors),
C{matchconditions} (CEL) and C{IsExemptAdmissionConfigurationResource}.

A rule is matched against a C{(group, version, resource)} and the request's subresource,
operation and namespace, so L{rule_matches} serves both the request's own resource and its
equivalents (C{matchPolicy: Equivalent}).
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from kubetwist.apimachinery.selectors import LabelSelector, label_selector_from_dict, nothing

__all__ = ["MatchConditions", "is_exempt", "rule_matches", "parse_selector"]

_EXEMPT_KINDS = frozenset({
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
    "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"})


def is_exempt(kind_group: str, kind: str) -> bool:
    """Upstream C{IsExemptAdmissionConfigurationResource}: webhooks never see writes of the
    admission configuration kinds (no webhook can lock itself in)."""
    return kind_group == "admissionregistration.k8s.io" and kind in _EXEMPT_KINDS


def _exact_or_wildcard(items: Any, value: str) -> bool:
    return any(i == "*" or i == value for i in items or ())


def rule_matches(rule: dict, operation: str, gvr: tuple[str, str, str], subresource: str,
                 namespace: str) -> bool:
    """
    Upstream C{rules.Matcher.Matches}.

    @param rule: a C{RuleWithOperations} (C{operations}, C{apiGroups}, C{apiVersions},
        C{resources}, C{scope}).
    @param gvr: C{(group, version, resource)} to match (the request's or an equivalent).
    @param namespace: the request's namespace (for a namespace object: its name).
    """
    group, version, resource = gvr
    scope = rule.get("scope") or "*"
    is_namespace = gvr == ("", "v1", "namespaces")
    if scope == "Namespaced":
        if is_namespace or not namespace:
            return False
    elif scope == "Cluster":
        if not (is_namespace or not namespace):
            return False
    elif scope != "*":
        return False
    ops = rule.get("operations") or ()
    if not any(op == "*" or op == operation for op in ops):
        return False
    if not _exact_or_wildcard(rule.get("apiGroups"), group):
        return False
    if not _exact_or_wildcard(rule.get("apiVersions"), version):
        return False
    for item in rule.get("resources") or ():
        res, _, sub = item.partition("/")
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def parse_selector(selector: Optional[dict]) -> LabelSelector:
    """Upstream C{metav1.LabelSelectorAsSelector} of a webhook's selector (a missing one
    selects everything, as the API defaults it to C{{}})."""
    if selector is None:
        selector = {}
    try:
        return label_selector_from_dict(selector)
    except Exception:  # validated on write; a stored bad one selects nothing
        return nothing()


# --- matchConditions ----------------------------------------------------------------------------

_env_lock = threading.Lock()
_env_cache: list = []


def _env() -> Any:
    """The CEL environment of webhook match conditions (upstream's base environment of v1.32
    with C{object}, C{oldObject}, C{request}, C{namespaceObject}): the shared Kubernetes
    library of L{kubetwist.cel.library}."""
    from cel_expr_python import cel

    from kubetwist.cel.library import ENV_CONFIG_YAML, FUNCTION_IMPLS

    with _env_lock:
        if not _env_cache:
            dyn = cel.Type.DYN
            _env_cache.append(cel.NewEnv(
                config=cel.NewEnvConfigFromYaml(ENV_CONFIG_YAML),
                variables={n: dyn for n in ("object", "oldObject", "request",
                                            "namespaceObject")},
                function_impls=FUNCTION_IMPLS))
        return _env_cache[0]


def _runtime_error(text: str) -> str:
    import re

    m = re.search(r'Key not found in map : "(.*)"', text)
    if m:
        return f"no such key: {m.group(1)}"
    from kubetwist.cel import strip_status

    return strip_status(text)


class MatchConditions:
    """
    The compiled C{matchConditions} of one webhook (upstream C{matchconditions.matcher}).

    @param conditions: C{[{"name", "expression"}]}.
    @param fail_closed: the webhook's C{failurePolicy} is C{Fail} (errors refuse the request)
        rather than C{Ignore} (errors skip the webhook).
    """

    def __init__(self, conditions: list, fail_closed: bool) -> None:
        self.fail_closed = fail_closed
        self.compiled: list[tuple[str, Any, str]] = []
        for c in conditions:
            expression = c.get("expression") or ""
            if "authorizer" in expression:
                # the runtime has no authorizer library: such a condition cannot be evaluated
                self.compiled.append((expression, None,
                                      "the authorizer library is not supported"))
                continue
            try:
                self.compiled.append((expression, _env().compile(expression), ""))
            except RuntimeError as e:
                from kubetwist.cel import strip_status

                self.compiled.append((expression, None,
                                      "compilation failed: " + strip_status(str(e))))

    def match(self, activation: dict) -> tuple[bool, str]:
        """
        Evaluate with C{activation} (C{object}, C{oldObject}, C{request}, C{namespaceObject}).

        @return: C{(matches, error)}: C{(False, "")} as soon as one condition is false (the
            webhook is skipped); on errors with no false condition, C{(False, "")} when the
            failure policy is C{Ignore}, else C{(False, error)} (upstream's aggregate of
            C{expression '...' resulted in error: ...}); C{(True, "")} otherwise.
        """
        from cel_expr_python import cel

        problems: list[str] = []
        for expression, program, problem in self.compiled:
            if program is None:
                problems.append(f"expression '{expression}' resulted in error: {problem}")
                continue
            value = program.eval(data=activation)
            if value.type() == cel.Type.ERROR:
                problems.append(f"expression '{expression}' resulted in error: "
                                f"{_runtime_error(str(value.value()))}")
                continue
            result = value.plain_value()
            if result is False:
                return False, ""
            if result is not True:
                problems.append(f"expression '{expression}' resulted in error: "
                                f"expected bool, got {value.type()}")
        if problems:
            if not self.fail_closed:
                return False, ""
            return False, problems[0] if len(problems) == 1 else \
                "[" + ", ".join(problems) + "]"
        return True, ""
