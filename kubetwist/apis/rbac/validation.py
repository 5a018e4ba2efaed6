# -*- test-case-name: tests.apis.test_rbac -*-
"""
rbac.authorization.k8s.io/v1 defaulting and validation: upstream
C{k8s.io/kubernetes/pkg/apis/rbac/v1/defaults.go} and C{pkg/apis/rbac/validation/validation.go}
(Roles, ClusterRoles with C{aggregationRule}, RoleBindings, ClusterRoleBindings).

Objects are only stored and validated here; authorization against them (and upstream's
escalation checks on writes) is the authorizer's business.
"""

from __future__ import annotations

from kubetwist.apimachinery.validation import (
    is_valid_label_value,
    name_is_dns_subdomain,
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.runtime import gofmt
from kubetwist.runtime.field import (
    FieldError,
    Path,
    go_string_slice,
    invalid,
    invalid_go,
    not_supported,
    required,
)

__all__ = [
    "GROUP_NAME",
    "default_binding",
    "default_role",
    "validate_cluster_role",
    "validate_cluster_role_binding",
    "validate_cluster_role_binding_update",
    "validate_cluster_role_update",
    "validate_policy_rule",
    "validate_rbac_name",
    "validate_role",
    "validate_role_binding",
    "validate_role_binding_update",
    "validate_role_update",
]

#: Upstream C{rbac.GroupName}.
GROUP_NAME = "rbac.authorization.k8s.io"


class _GoStructError(FieldError):
    """An C{Invalid} error whose bad value is a Go struct, printed with C{%#v} as upstream."""

    def __init__(self, path: Path | str, go_text: str, detail: str) -> None:
        self.go_text = go_text
        super().__init__("Invalid", path, go_text, detail)

    def body(self) -> str:
        return f"Invalid value: {self.go_text}: {self.detail}"


_go_quote = gofmt.quote


def validate_rbac_name(name: str, prefix: bool) -> list[str]:
    """
    Upstream C{ValidateRBACName} (C{path.ValidatePathSegmentName}): not C{.} or C{..} (full
    names only), and no C{/} or C{%}; every violation is reported.
    """
    msgs: list[str] = []
    if not prefix and name in (".", ".."):
        msgs.append(f"may not be '{name}'")
    for bad in ("/", "%"):
        if bad in name:
            msgs.append(f"may not contain '{bad}'")
    return msgs


# --------------------------------------------------------------------------------------------
# defaults


def default_role(role: dict) -> None:
    """
    A Go round trip of Role/ClusterRole: C{rules} (no omitempty) prints as C{null} when empty,
    and each rule's C{verbs} likewise (storage keeps protobuf, where empty lists are nil).
    """
    rules = role.get("rules")
    if not rules:
        role["rules"] = None
        return
    for rule in rules:
        if isinstance(rule, dict) and not rule.get("verbs"):
            rule["verbs"] = None


def _default_subject(subject: dict) -> None:
    """Upstream C{SetDefaults_Subject}: User and Group subjects get the RBAC API group."""
    if not subject.get("apiGroup"):
        kind = subject.get("kind")
        if kind in ("User", "Group"):
            subject["apiGroup"] = GROUP_NAME
        elif kind == "ServiceAccount":
            subject["apiGroup"] = ""


def default_binding(binding: dict) -> None:
    """
    Upstream C{SetDefaults_RoleBinding}/C{SetDefaults_ClusterRoleBinding}: C{roleRef.apiGroup}
    defaults to C{rbac.authorization.k8s.io}; subjects get L{_default_subject}.  C{roleRef} and
    its three fields have no omitempty: they are always printed.
    """
    ref = binding.get("roleRef")
    if not isinstance(ref, dict):
        ref = binding["roleRef"] = {}
    if not ref.get("apiGroup"):
        ref["apiGroup"] = GROUP_NAME
    ref.setdefault("kind", "")
    ref.setdefault("name", "")
    subjects = binding.get("subjects")
    if not subjects:
        binding.pop("subjects", None)
        return
    for subject in subjects:
        if isinstance(subject, dict):
            _default_subject(subject)
            subject.setdefault("kind", "")
            subject.setdefault("name", "")
            if not subject.get("apiGroup"):
                subject.pop("apiGroup", None)


# --------------------------------------------------------------------------------------------
# roles


def validate_policy_rule(rule: dict, namespaced: bool, path: Path) -> list[FieldError]:
    """
    Upstream C{ValidatePolicyRule}: verbs required; non-resource URLs only in cluster rules and
    never mixed with resource rules; resource rules need API groups and resources; resource
    names apply to one resource only.
    """
    errs: list[FieldError] = []
    if not rule.get("verbs"):
        errs.append(required(path.child("verbs"), "verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            errs.append(invalid_go(path.child("nonResourceURLs"), go_string_slice(urls),
                                   "namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            errs.append(invalid_go(path.child("nonResourceURLs"), go_string_slice(urls),
                                   "rules cannot apply to both regular resources and "
                                   "non-resource URLs"))
        return errs
    if not rule.get("apiGroups"):
        errs.append(required(path.child("apiGroups"),
                             "resource rules must supply at least one api group"))
    resources = rule.get("resources") or []
    if not resources:
        errs.append(required(path.child("resources"),
                             "resource rules must supply at least one resource"))
    if rule.get("resourceNames") and len(resources) > 1:
        errs.append(required(path.child("resourceNames"),
                             "resource names cannot apply to multiple resources"))
    return errs


def _validate_rules(role: dict, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(role.get("rules") or []):
        errs.extend(validate_policy_rule(rule or {}, namespaced, Path("rules").index(i)))
    return errs


def validate_role(role: dict) -> list[FieldError]:
    """Upstream C{ValidateRole}: namespaced ObjectMeta with path-segment names, then rules."""
    errs = validate_object_meta(role.get("metadata") or {}, True, validate_rbac_name,
                                Path("metadata"))
    errs.extend(_validate_rules(role, True))
    return errs


def validate_role_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateRoleUpdate}: L{validate_role}, then the ObjectMeta update rules."""
    errs = validate_role(new)
    errs.extend(validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {}, Path("metadata")))
    return errs


def _selectors_have_invalid_label_value(role: dict) -> bool:
    """Upstream C{hasInvalidLabelValueInLabelSelector} over the aggregation selectors."""
    for sel in ((role.get("aggregationRule") or {}).get("clusterRoleSelectors") or []):
        for expr in (sel or {}).get("matchExpressions") or []:
            if any(is_valid_label_value(v) for v in (expr or {}).get("values") or []):
                return True
    return False


def validate_cluster_role(role: dict, allow_invalid_label_value: bool = False) -> list[FieldError]:
    """
    Upstream C{ValidateClusterRole}: cluster-scoped ObjectMeta, rules, and an C{aggregationRule}
    that, when present, has at least one valid label selector.
    """
    errs = validate_object_meta(role.get("metadata") or {}, False, validate_rbac_name,
                                Path("metadata"))
    errs.extend(_validate_rules(role, False))
    agg = role.get("aggregationRule")
    if agg is not None:
        selectors = (agg or {}).get("clusterRoleSelectors") or []
        sel_path = Path("aggregationRule").child("clusterRoleSelectors")
        if not selectors:
            errs.append(required(sel_path, "at least one clusterRoleSelector required if "
                                           "aggregationRule is non-nil"))
        for i, selector in enumerate(selectors):
            errs.extend(validate_label_selector(selector or {}, sel_path.index(i),
                                                allow_invalid_label_value))
    return errs


def validate_cluster_role_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{ValidateClusterRoleUpdate}: invalid label values in aggregation selectors stay
    allowed when the stored object already had them.
    """
    errs = validate_cluster_role(new, _selectors_have_invalid_label_value(old))
    errs.extend(validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {}, Path("metadata")))
    return errs


# --------------------------------------------------------------------------------------------
# bindings


def _validate_subject(subject: dict, namespaced: bool, path: Path) -> list[FieldError]:
    """Upstream C{ValidateRoleBindingSubject}."""
    errs: list[FieldError] = []
    name = subject.get("name") or ""
    api_group = subject.get("apiGroup") or ""
    kind = subject.get("kind") or ""
    if not name:
        errs.append(required(path.child("name")))
    if kind == "ServiceAccount":
        if name:
            errs.extend(invalid(path.child("name"), name, m)
                        for m in name_is_dns_subdomain(name, False))
        if api_group:
            errs.append(not_supported(path.child("apiGroup"), api_group, [""]))
        if not namespaced and not subject.get("namespace"):
            errs.append(required(path.child("namespace")))
    elif kind in ("User", "Group"):
        if not name:
            what = "user" if kind == "User" else "group"
            errs.append(invalid(path.child("name"), name, f"{what} name cannot be empty"))
        if api_group != GROUP_NAME:
            errs.append(not_supported(path.child("apiGroup"), api_group, [GROUP_NAME]))
    else:
        errs.append(not_supported(path.child("kind"), kind, ["ServiceAccount", "User", "Group"]))
    return errs


def _validate_binding(binding: dict, namespaced: bool) -> list[FieldError]:
    errs = validate_object_meta(binding.get("metadata") or {}, namespaced, validate_rbac_name,
                                Path("metadata"))
    ref = binding.get("roleRef") or {}
    ref_path = Path("roleRef")
    api_group = ref.get("apiGroup") or ""
    if api_group != GROUP_NAME:
        errs.append(not_supported(ref_path.child("apiGroup"), api_group, [GROUP_NAME]))
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    kind = ref.get("kind") or ""
    if kind not in kinds:
        errs.append(not_supported(ref_path.child("kind"), kind, kinds))
    name = ref.get("name") or ""
    if not name:
        errs.append(required(ref_path.child("name")))
    else:
        errs.extend(invalid(ref_path.child("name"), name, m)
                    for m in validate_rbac_name(name, False))
    for i, subject in enumerate(binding.get("subjects") or []):
        errs.extend(_validate_subject(subject or {}, namespaced, Path("subjects").index(i)))
    return errs


def _role_ref_go(ref: dict) -> str:
    """C{%#v} of the internal C{rbac.RoleRef}."""
    return (f"rbac.RoleRef{{APIGroup:{_go_quote(ref.get('apiGroup') or '')}, "
            f"Kind:{_go_quote(ref.get('kind') or '')}, Name:{_go_quote(ref.get('name') or '')}}}")


def _validate_binding_update(new: dict, old: dict, namespaced: bool) -> list[FieldError]:
    errs = _validate_binding(new, namespaced)
    errs.extend(validate_object_meta_update(new.get("metadata") or {},
                                            old.get("metadata") or {}, Path("metadata")))
    keys = ("apiGroup", "kind", "name")
    new_ref, old_ref = new.get("roleRef") or {}, old.get("roleRef") or {}
    if any((new_ref.get(k) or "") != (old_ref.get(k) or "") for k in keys):
        errs.append(_GoStructError("roleRef", _role_ref_go(new_ref), "cannot change roleRef"))
    return errs


def validate_role_binding(binding: dict) -> list[FieldError]:
    """
    Upstream C{ValidateRoleBinding}: C{roleRef} names a Role or ClusterRole of the RBAC group;
    subjects are ServiceAccounts (DNS subdomain names, core group), Users or Groups (RBAC group).
    """
    return _validate_binding(binding, True)


def validate_role_binding_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateRoleBindingUpdate}: C{roleRef} is immutable (C{cannot change roleRef})."""
    return _validate_binding_update(new, old, True)


def validate_cluster_role_binding(binding: dict) -> list[FieldError]:
    """
    Upstream C{ValidateClusterRoleBinding}: as L{validate_role_binding}, but C{roleRef} must be
    a ClusterRole and ServiceAccount subjects need a namespace.
    """
    return _validate_binding(binding, False)


def validate_cluster_role_binding_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateClusterRoleBindingUpdate}."""
    return _validate_binding_update(new, old, False)
