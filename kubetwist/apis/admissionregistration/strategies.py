# -*- test-case-name: tests.apis.test_admissionregistration -*-
"""
admissionregistration.k8s.io/v1 defaulting, strategies and printing: upstream
C{pkg/apis/admissionregistration/v1/defaults.go}, the strategies of
C{pkg/registry/admissionregistration/{validatingwebhookconfiguration,
mutatingwebhookconfiguration,validatingadmissionpolicy,validatingadmissionpolicybinding}},
and the admissionregistration printers of C{pkg/printers/internalversion/printers.go}.

The objects are stored, defaulted and validated only: kubetwist's admission chain does not
call webhooks or evaluate ValidatingAdmissionPolicies yet.  The strategies do not run
upstream's authorization check of a policy's C{paramKind} / a binding's C{paramRef}.
"""

from __future__ import annotations

import copy
from typing import Any

from kubetwist.apis.admissionregistration import validation as v
from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import Strategy, TableConvertor

__all__ = [
    "BINDING_STRATEGY",
    "MUTATING_WEBHOOK_STRATEGY",
    "POLICY_STATUS_STRATEGY",
    "POLICY_STRATEGY",
    "VALIDATING_WEBHOOK_STRATEGY",
    "default_binding",
    "default_mutating_webhook_configuration",
    "default_policy",
    "default_validating_webhook_configuration",
    "label_selector_string",
]

GROUP = "admissionregistration.k8s.io"


# --- defaults -------------------------------------------------------------------------------------


def _default_rule(rule: Any) -> None:
    """Upstream C{SetDefaults_Rule}: C{scope: "*"}."""
    if isinstance(rule, dict) and rule.get("scope") is None:
        rule["scope"] = "*"


def _default_webhook(hook: Any, mutating: bool) -> None:
    """Upstream C{SetDefaults_ValidatingWebhook} / C{SetDefaults_MutatingWebhook} with the
    nested C{Rule} and C{ServiceReference} defaults."""
    if not isinstance(hook, dict):
        return
    if hook.get("failurePolicy") is None:
        hook["failurePolicy"] = "Fail"
    if hook.get("matchPolicy") is None:
        hook["matchPolicy"] = "Equivalent"
    if hook.get("namespaceSelector") is None:
        hook["namespaceSelector"] = {}
    if hook.get("objectSelector") is None:
        hook["objectSelector"] = {}
    if hook.get("timeoutSeconds") is None:
        hook["timeoutSeconds"] = 10
    if mutating and hook.get("reinvocationPolicy") is None:
        hook["reinvocationPolicy"] = "Never"
    for rule in hook.get("rules") or []:
        _default_rule(rule)
    service = (hook.get("clientConfig") or {}).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def default_validating_webhook_configuration(config: dict) -> None:
    """
    Defaults of every webhook: C{failurePolicy: Fail}, C{matchPolicy: Equivalent},
    C{namespaceSelector}/C{objectSelector} C{{}}, C{timeoutSeconds: 10}, rule C{scope: "*"},
    service C{port: 443}.  C{sideEffects} and C{admissionReviewVersions} have no default in
    v1 (they are required).
    """
    for hook in config.get("webhooks") or []:
        _default_webhook(hook, False)


def default_mutating_webhook_configuration(config: dict) -> None:
    """As L{default_validating_webhook_configuration}, plus C{reinvocationPolicy: Never}."""
    for hook in config.get("webhooks") or []:
        _default_webhook(hook, True)


def _default_match_resources(mc: Any) -> None:
    """Upstream C{SetDefaults_MatchResources}: C{matchPolicy: Equivalent}, empty selectors;
    rule scopes C{"*"}."""
    if not isinstance(mc, dict):
        return
    if mc.get("matchPolicy") is None:
        mc["matchPolicy"] = "Equivalent"
    if mc.get("namespaceSelector") is None:
        mc["namespaceSelector"] = {}
    if mc.get("objectSelector") is None:
        mc["objectSelector"] = {}
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in mc.get(key) or []:
            _default_rule(rule)


def default_policy(policy: dict) -> None:
    """Upstream C{SetDefaults_ValidatingAdmissionPolicySpec} (C{failurePolicy: Fail}) and
    C{SetDefaults_MatchResources} of C{spec.matchConstraints}."""
    spec = policy.get("spec")
    if not isinstance(spec, dict):
        spec = policy["spec"] = {}
    if spec.get("failurePolicy") is None:
        spec["failurePolicy"] = "Fail"
    _default_match_resources(spec.get("matchConstraints"))


def default_binding(binding: dict) -> None:
    """C{SetDefaults_MatchResources} of C{spec.matchResources}."""
    spec = binding.get("spec")
    if not isinstance(spec, dict):
        spec = binding["spec"] = {}
    _default_match_resources(spec.get("matchResources"))


# --- strategies -----------------------------------------------------------------------------------


def _generation_one(obj: dict) -> None:
    obj.setdefault("metadata", {})["generation"] = 1


def _bump_generation(new: dict, old: dict, changed: bool) -> None:
    meta = new.setdefault("metadata", {})
    generation = (old.get("metadata") or {}).get("generation") or 0
    meta["generation"] = generation + 1 if changed else generation


def _prepare_webhooks_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate}: generation + 1 when C{webhooks} changed."""
    _bump_generation(new, old, (new.get("webhooks") or []) != (old.get("webhooks") or []))


def _prepare_policy_for_create(policy: dict) -> None:
    """Upstream: status cleared, generation 1."""
    policy["status"] = {}
    _generation_one(policy)


def _prepare_policy_for_update(new: dict, old: dict) -> None:
    """Upstream: status as stored; generation + 1 when C{spec} changed."""
    new["status"] = copy.deepcopy(old.get("status") or {})
    _bump_generation(new, old, new.get("spec") != old.get("spec"))


def _prepare_policy_status_for_update(new: dict, old: dict) -> None:
    """Upstream status strategy: spec and generation as stored."""
    new["spec"] = copy.deepcopy(old.get("spec") or {})
    _bump_generation(new, old, False)


def _prepare_binding_for_update(new: dict, old: dict) -> None:
    """Upstream: generation + 1 when C{spec} changed."""
    _bump_generation(new, old, new.get("spec") != old.get("spec"))


# --- printing -------------------------------------------------------------------------------------


def label_selector_string(selector: dict) -> str:
    """
    Go's generated C{(*metav1.LabelSelector).String()}:
    C{&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]...{},}}.
    """
    labels = selector.get("matchLabels") or {}
    ml = "map[string]string{" + "".join(f"{k}: {labels[k]}," for k in sorted(labels)) + "}"
    exprs = []
    for e in selector.get("matchExpressions") or []:
        e = e or {}
        values = "[]string{" + ",".join(e.get("values") or []) + "}"
        exprs.append(f"LabelSelectorRequirement{{Key:{e.get('key') or ''},"
                     f"Operator:{e.get('operator') or ''},Values:{values},}}")
    me = "[]LabelSelectorRequirement{" + "".join(x + "," for x in exprs) + "}"
    return f"&LabelSelector{{MatchLabels:{ml},MatchExpressions:{me},}}"


def _param_ref_cell(binding: dict) -> str:
    """Upstream C{printValidatingAdmissionPolicyBinding}'s C{ParamRef} cell."""
    ref = (binding.get("spec") or {}).get("paramRef")
    if ref is None:
        return "<unset>"
    if ref.get("name"):
        return f"{ref['namespace']}/{ref['name']}" if ref.get("namespace") else f"*/{ref['name']}"
    if ref.get("selector") is not None:
        return label_selector_string(ref["selector"])
    return "<unset>"


def _param_kind_cell(policy: dict) -> str:
    pk = (policy.get("spec") or {}).get("paramKind")
    if pk is None:
        return "<unset>"
    return f"{pk.get('apiVersion') or ''}/{pk.get('kind') or ''}"


#: Upstream C{validatingWebhookColumnDefinitions} / C{mutatingWebhookColumnDefinitions}.
WEBHOOK_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Webhooks", "integer",
               "Webhooks indicates the number of webhooks registered in this configuration"),
        age_column(),
    ],
    row=lambda c: [obj_name(c), len(c.get("webhooks") or []), obj_age(c)],
)

#: Upstream C{validatingAdmissionPolicy} columns / C{printValidatingAdmissionPolicy}.
POLICY_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Validations", "integer",
               "Validations indicates the number of validation rules defined in this "
               "configuration"),
        column("ParamKind", "string",
               "ParamKind specifies the kind of resources used to parameterize this policy"),
        age_column(),
    ],
    row=lambda p: [obj_name(p), len((p.get("spec") or {}).get("validations") or []),
                   _param_kind_cell(p), obj_age(p)],
)

#: Upstream C{validatingAdmissionPolicyBinding} columns (their descriptions' spelling kept).
BINDING_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("PolicyName", "string",
               "PolicyName indicates the policy definition which the policy binding binded to"),
        column("ParamRef", "string",
               "ParamRef indicates the param resource which sets the configration param"),
        age_column(),
    ],
    row=lambda b: [obj_name(b), (b.get("spec") or {}).get("policyName") or "",
                   _param_ref_cell(b), obj_age(b)],
)

VALIDATING_WEBHOOK_STRATEGY = Strategy(
    kind="ValidatingWebhookConfiguration",
    group=GROUP,
    namespaced=False,
    default=default_validating_webhook_configuration,
    prepare_for_create=_generation_one,
    prepare_for_update=_prepare_webhooks_for_update,
    validate=v.validate_validating_webhook_configuration,
    validate_update=v.validate_validating_webhook_configuration_update,
    table=WEBHOOK_TABLE,
    allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
)

MUTATING_WEBHOOK_STRATEGY = Strategy(
    kind="MutatingWebhookConfiguration",
    group=GROUP,
    namespaced=False,
    default=default_mutating_webhook_configuration,
    prepare_for_create=_generation_one,
    prepare_for_update=_prepare_webhooks_for_update,
    validate=v.validate_mutating_webhook_configuration,
    validate_update=v.validate_mutating_webhook_configuration_update,
    table=WEBHOOK_TABLE,
    allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
)

POLICY_STRATEGY = Strategy(
    kind="ValidatingAdmissionPolicy",
    group=GROUP,
    namespaced=False,
    default=default_policy,
    prepare_for_create=_prepare_policy_for_create,
    prepare_for_update=_prepare_policy_for_update,
    validate=v.validate_policy,
    validate_update=v.validate_policy_update,
    table=POLICY_TABLE,
    allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
)

POLICY_STATUS_STRATEGY = Strategy(
    kind="ValidatingAdmissionPolicy",
    group=GROUP,
    namespaced=False,
    default=default_policy,
    prepare_for_update=_prepare_policy_status_for_update,
    validate=v.validate_policy,
    validate_update=v.validate_policy_status_update,
    table=POLICY_TABLE,
    allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
)

BINDING_STRATEGY = Strategy(
    kind="ValidatingAdmissionPolicyBinding",
    group=GROUP,
    namespaced=False,
    default=default_binding,
    prepare_for_create=_generation_one,
    prepare_for_update=_prepare_binding_for_update,
    validate=v.validate_policy_binding,
    validate_update=v.validate_policy_binding_update,
    table=BINDING_TABLE,
    allow_unconditional_update=False,  # upstream AllowUnconditionalUpdate() false
)
