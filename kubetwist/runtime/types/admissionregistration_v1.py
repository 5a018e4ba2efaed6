# -*- test-case-name: tests.apis.test_admissionregistration -*-
"""
Field tables of C{k8s.io/api/admissionregistration/v1} as of Kubernetes v1.32
(protobuf package C{io.k8s.api.admissionregistration.v1}): webhook configurations,
ValidatingAdmissionPolicy and its bindings (the MutatingAdmissionPolicy kinds are not GA in
v1.32 and not served).

Data only; the row format is described in L{kubetwist.runtime.types}.
"""

PACKAGE = "io.k8s.api.admissionregistration.v1"

GROUP = "admissionregistration.k8s.io"
VERSION = "v1"

#: Kinds served from this package (each is also a type name below).
KINDS = (
    "MutatingWebhookConfiguration",
    "MutatingWebhookConfigurationList",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingAdmissionPolicyBindingList",
    "ValidatingAdmissionPolicyList",
    "ValidatingWebhookConfiguration",
    "ValidatingWebhookConfigurationList",
)

_ATOMIC = {"list_type": "atomic"}
_BY_NAME = {"patch_strategy": "merge", "patch_merge_key": "name",
            "list_type": "map", "list_map_keys": ("name",)}

#: Struct-level markers (C{+structType=atomic}): type name -> struct type.
STRUCT_TYPES = {
    "MatchResources": "atomic",
    "NamedRuleWithOperations": "atomic",
    "ParamKind": "atomic",
    "ParamRef": "atomic",
    "Variable": "atomic",
}

#: C{+enum} string types: name -> the values of their constants, sorted (OpenAPI
#: C{enum} on fields of that type).
ENUMS = {
    "FailurePolicyType": ("Fail", "Ignore"),
    "MatchPolicyType": ("Equivalent", "Exact"),
    "ReinvocationPolicyType": ("IfNeeded", "Never"),
    "ScopeType": ("*", "Cluster", "Namespaced"),
    "SideEffectClass": ("None", "NoneOnDryRun", "Some", "Unknown"),
}

TYPES = {
    "AuditAnnotation": (
        ("key", 1, "string", "r"),
        ("valueExpression", 2, "string", "r"),
    ),
    "ExpressionWarning": (
        ("fieldRef", 2, "string", "r"),
        ("warning", 3, "string", "r"),
    ),
    "MatchCondition": (
        ("name", 1, "string", "r"),
        ("expression", 2, "string", "r"),
    ),
    "MatchResources": (
        ("namespaceSelector", 1, "*meta.LabelSelector", "o"),
        ("objectSelector", 2, "*meta.LabelSelector", "o"),
        ("resourceRules", 3, "[]NamedRuleWithOperations", "o", _ATOMIC),
        ("excludeResourceRules", 4, "[]NamedRuleWithOperations", "o", _ATOMIC),
        ("matchPolicy", 7, "*string", "o", {"enum": "MatchPolicyType"}),
    ),
    "MutatingWebhook": (
        ("name", 1, "string", "r"),
        ("clientConfig", 2, "WebhookClientConfig", "r"),
        ("rules", 3, "[]RuleWithOperations", "o", _ATOMIC),
        ("failurePolicy", 4, "*string", "o", {"enum": "FailurePolicyType"}),
        ("matchPolicy", 9, "*string", "o", {"enum": "MatchPolicyType"}),
        ("namespaceSelector", 5, "*meta.LabelSelector", "o"),
        ("objectSelector", 11, "*meta.LabelSelector", "o"),
        ("sideEffects", 6, "*string", "r", {"enum": "SideEffectClass"}),
        ("timeoutSeconds", 7, "*int32", "o"),
        ("admissionReviewVersions", 8, "[]string", "r", _ATOMIC),
        ("reinvocationPolicy", 10, "*string", "o", {"enum": "ReinvocationPolicyType"}),
        ("matchConditions", 12, "[]MatchCondition", "o", _BY_NAME),
    ),
    "MutatingWebhookConfiguration": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("webhooks", 2, "[]MutatingWebhook", "o", _BY_NAME),
    ),
    "MutatingWebhookConfigurationList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]MutatingWebhookConfiguration", "r"),
    ),
    "NamedRuleWithOperations": (
        ("resourceNames", 1, "[]string", "o", _ATOMIC),
        ("", 2, "RuleWithOperations", "i"),
    ),
    "ParamKind": (
        ("apiVersion", 1, "string", "o"),
        ("kind", 2, "string", "o"),
    ),
    "ParamRef": (
        ("name", 1, "string", "o"),
        ("namespace", 2, "string", "o"),
        ("selector", 3, "*meta.LabelSelector", "o"),
        ("parameterNotFoundAction", 4, "*string", "o"),
    ),
    "Rule": (
        ("apiGroups", 1, "[]string", "o", _ATOMIC),
        ("apiVersions", 2, "[]string", "o", _ATOMIC),
        ("resources", 3, "[]string", "o", _ATOMIC),
        ("scope", 4, "*string", "o", {"enum": "ScopeType"}),
    ),
    "RuleWithOperations": (
        ("operations", 1, "[]string", "o", _ATOMIC),
        ("", 2, "Rule", "i"),
    ),
    "ServiceReference": (
        ("namespace", 1, "string", "r"),
        ("name", 2, "string", "r"),
        ("path", 3, "*string", "o"),
        ("port", 4, "*int32", "o"),
    ),
    "TypeChecking": (
        ("expressionWarnings", 1, "[]ExpressionWarning", "o", _ATOMIC),
    ),
    "ValidatingAdmissionPolicy": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "ValidatingAdmissionPolicySpec", "o"),
        ("status", 3, "ValidatingAdmissionPolicyStatus", "o"),
    ),
    "ValidatingAdmissionPolicyBinding": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("spec", 2, "ValidatingAdmissionPolicyBindingSpec", "o"),
    ),
    "ValidatingAdmissionPolicyBindingList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]ValidatingAdmissionPolicyBinding", "r"),
    ),
    "ValidatingAdmissionPolicyBindingSpec": (
        ("policyName", 1, "string", "o"),
        ("paramRef", 2, "*ParamRef", "o"),
        ("matchResources", 3, "*MatchResources", "o"),
        ("validationActions", 4, "[]string", "o", {"list_type": "set"}),
    ),
    "ValidatingAdmissionPolicyList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]ValidatingAdmissionPolicy", "r"),
    ),
    "ValidatingAdmissionPolicySpec": (
        ("paramKind", 1, "*ParamKind", "o"),
        ("matchConstraints", 2, "*MatchResources", "o"),
        ("validations", 3, "[]Validation", "o", _ATOMIC),
        ("failurePolicy", 4, "*string", "o", {"enum": "FailurePolicyType"}),
        ("auditAnnotations", 5, "[]AuditAnnotation", "o", _ATOMIC),
        ("matchConditions", 6, "[]MatchCondition", "o", _BY_NAME),
        ("variables", 7, "[]Variable", "o", _BY_NAME),
    ),
    "ValidatingAdmissionPolicyStatus": (
        ("observedGeneration", 1, "int64", "o"),
        ("typeChecking", 2, "*TypeChecking", "o"),
        ("conditions", 3, "[]meta.Condition", "o", {
            "list_type": "map", "list_map_keys": ("type",),
        }),
    ),
    "ValidatingWebhook": (
        ("name", 1, "string", "r"),
        ("clientConfig", 2, "WebhookClientConfig", "r"),
        ("rules", 3, "[]RuleWithOperations", "o", _ATOMIC),
        ("failurePolicy", 4, "*string", "o", {"enum": "FailurePolicyType"}),
        ("matchPolicy", 9, "*string", "o", {"enum": "MatchPolicyType"}),
        ("namespaceSelector", 5, "*meta.LabelSelector", "o"),
        ("objectSelector", 10, "*meta.LabelSelector", "o"),
        ("sideEffects", 6, "*string", "r", {"enum": "SideEffectClass"}),
        ("timeoutSeconds", 7, "*int32", "o"),
        ("admissionReviewVersions", 8, "[]string", "r", _ATOMIC),
        ("matchConditions", 11, "[]MatchCondition", "o", _BY_NAME),
    ),
    "ValidatingWebhookConfiguration": (
        ("metadata", 1, "meta.ObjectMeta", "o"),
        ("webhooks", 2, "[]ValidatingWebhook", "o", _BY_NAME),
    ),
    "ValidatingWebhookConfigurationList": (
        ("metadata", 1, "meta.ListMeta", "o"),
        ("items", 2, "[]ValidatingWebhookConfiguration", "r"),
    ),
    "Validation": (
        ("expression", 1, "string", "r"),
        ("message", 2, "string", "o"),
        ("reason", 3, "*string", "o"),
        ("messageExpression", 4, "string", "o"),
    ),
    "Variable": (
        ("name", 1, "string", "r"),
        ("expression", 2, "string", "r"),
    ),
    "WebhookClientConfig": (
        ("url", 3, "*string", "o"),
        ("service", 1, "*ServiceReference", "o"),
        ("caBundle", 2, "bytes", "o"),
    ),
}
