# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
Defaulting and validation of flowcontrol.apiserver.k8s.io/v1: upstream
C{pkg/apis/flowcontrol/v1/defaults.go} and C{pkg/apis/flowcontrol/validation/validation.go}
(Kubernetes v1.32), over v1 wire dicts.
"""

from __future__ import annotations

import math
from typing import Any

from kubetwist.apimachinery.validation import (
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from kubetwist.apis.core.common import GoValueError, go_quote, go_string_slice
from kubetwist.apis.flowcontrol import bootstrap
from kubetwist.runtime.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)

__all__ = [
    "default_flow_schema",
    "default_priority_level",
    "semantic_equal",
    "validate_flow_schema",
    "validate_flow_schema_status_update",
    "validate_flow_schema_update",
    "validate_priority_level",
    "validate_priority_level_status_update",
    "validate_priority_level_update",
]

#: Upstream C{FlowSchemaDefaultMatchingPrecedence}.
DEFAULT_MATCHING_PRECEDENCE = 1000
#: Upstream C{FlowSchemaMaxMatchingPrecedence}.
MAX_MATCHING_PRECEDENCE = 10000
#: Upstream C{PriorityLevelConfigurationDefault*}.
DEFAULT_HAND_SIZE = 8
DEFAULT_QUEUES = 64
DEFAULT_QUEUE_LENGTH_LIMIT = 50
DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30
#: Upstream C{priorityLevelConfigurationQueuingMaxQueues} (10^7).
MAX_QUEUES = 10 * 1000 * 1000
#: Upstream C{shufflesharding.MaxHashBits}.
MAX_HASH_BITS = 60

_SUPPORTED_VERBS = sorted(["get", "list", "create", "update", "delete", "deletecollection",
                           "patch", "watch", "proxy"])
_DISTINGUISHERS = ["ByNamespace", "ByUser"]
_SUBJECT_KINDS = ["Group", "ServiceAccount", "User"]
_ENABLEMENTS = ["Exempt", "Limited"]
_LIMIT_RESPONSES = ["Queue", "Reject"]
_NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list:
    return value if isinstance(value, list) else []


# --- defaulting ----------------------------------------------------------------------------------
def default_flow_schema(fs: dict) -> None:
    """
    Upstream C{SetObjectDefaults_FlowSchema}: C{spec.matchingPrecedence} 0 or absent becomes
    1000.  Mutates C{fs}.
    """
    spec = fs.get("spec")
    if not isinstance(spec, dict):
        spec = fs["spec"] = {}
    if not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = DEFAULT_MATCHING_PRECEDENCE


def default_priority_level(pl: dict) -> None:
    """
    Upstream C{SetObjectDefaults_PriorityLevelConfiguration}: for C{spec.limited}, a nil
    C{nominalConcurrencyShares} becomes 30 (an explicit 0 stays: the v1 field is a pointer)
    and a nil C{lendablePercent} 0; C{limitResponse.queuing} zero fields become C{queues} 64,
    C{handSize} 8, C{queueLengthLimit} 50; for C{spec.exempt}, nil C{nominalConcurrencyShares}
    and C{lendablePercent} become 0.  Mutates C{pl}.
    """
    spec = _d(pl.get("spec"))
    limited = spec.get("limited")
    if isinstance(limited, dict):
        if limited.get("nominalConcurrencyShares") is None:
            limited["nominalConcurrencyShares"] = DEFAULT_NOMINAL_CONCURRENCY_SHARES
        if limited.get("lendablePercent") is None:
            limited["lendablePercent"] = 0
        queuing = _d(limited.get("limitResponse")).get("queuing")
        if isinstance(queuing, dict):
            if not queuing.get("queues"):
                queuing["queues"] = DEFAULT_QUEUES
            if not queuing.get("handSize"):
                queuing["handSize"] = DEFAULT_HAND_SIZE
            if not queuing.get("queueLengthLimit"):
                queuing["queueLengthLimit"] = DEFAULT_QUEUE_LENGTH_LIMIT
    exempt = spec.get("exempt")
    if isinstance(exempt, dict):
        if exempt.get("nominalConcurrencyShares") is None:
            exempt["nominalConcurrencyShares"] = 0
        if exempt.get("lendablePercent") is None:
            exempt["lendablePercent"] = 0


# --- the mandatory objects ----------------------------------------------------------------------
#: v1 pointer fields whose zero value differs from absence.
_POINTERS = frozenset({"nominalConcurrencyShares", "lendablePercent", "borrowingLimitPercent"})


def _semantic(value: Any, key: str = "") -> Any:
    """A comparable form of a spec: Go zero values dropped (as absence in a Go struct), except
    for pointer fields; nil and empty slices equal (C{equality.Semantic})."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _semantic(v, k)
            if v is None or v in ({}, []) or (k not in _POINTERS and v in ("", 0, False)
                                               and not isinstance(v, float)):
                continue
            out[k] = v
        return out
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def semantic_equal(a: Any, b: Any) -> bool:
    """Upstream C{equality.Semantic.DeepEqual} of two v1 specs: Go zero values (but for the
    pointer fields) equal absence, nil slices equal empty ones."""
    return _semantic(a) == _semantic(b)


def _mandatory(objects: list[dict], default: Any) -> dict[str, dict]:
    out = {}
    for obj in objects:
        default(obj)
        out[obj["metadata"]["name"]] = _semantic(obj["spec"])
    return out


_MANDATORY_FS_SPECS = _mandatory(bootstrap.mandatory_flow_schemas(), default_flow_schema)
_MANDATORY_PL_SPECS = _mandatory(bootstrap.mandatory_priority_levels(), default_priority_level)


# --- FlowSchema ---------------------------------------------------------------------------------
def validate_flow_schema(fs: dict) -> list[FieldError]:
    """
    Upstream C{ValidateFlowSchema}: ObjectMeta (DNS-subdomain names, cluster-scoped), the spec,
    for the mandatory C{exempt}/C{catch-all} names a spec equal to the fixed one (C{Invalid}
    on C{spec}: C{spec of 'exempt' must equal the fixed value}), then the status conditions.
    """
    meta = _d(fs.get("metadata"))
    errs = validate_object_meta(meta, False, name_is_dns_subdomain, Path("metadata"))
    spec = _d(fs.get("spec"))
    name = meta.get("name") or ""
    spec_path = Path("spec")
    errs.extend(_validate_flow_schema_spec(name, spec, spec_path))
    mandatory = _MANDATORY_FS_SPECS.get(name)
    if mandatory is not None and _semantic(spec) != mandatory:
        errs.append(invalid(spec_path, spec, f"spec of '{name}' must equal the fixed value"))
    errs.extend(_validate_conditions(_d(fs.get("status")).get("conditions"), Path("status")))
    return errs


def validate_flow_schema_update(new: dict, old: dict) -> list[FieldError]:
    """
    Upstream C{rest.BeforeUpdate}'s common ObjectMeta update checks, then
    C{ValidateFlowSchemaUpdate} (which is the full L{validate_flow_schema} of the new object).
    """
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    return errs + validate_flow_schema(new)


def validate_flow_schema_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidateFlowSchemaStatusUpdate}: the conditions only."""
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    return errs + _validate_conditions(_d(new.get("status")).get("conditions"), Path("status"))


def _validate_flow_schema_spec(name: str, spec: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateFlowSchemaSpec}."""
    errs: list[FieldError] = []
    precedence = spec.get("matchingPrecedence") or 0
    mp = path.child("matchingPrecedence")
    if precedence <= 0:
        errs.append(invalid(mp, precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        errs.append(invalid(mp, precedence, f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
    if precedence == 1 and name != "exempt":
        errs.append(invalid(mp, precedence,
                            "only the schema named 'exempt' may have matchingPrecedence 1"))
    method = spec.get("distinguisherMethod")
    if isinstance(method, dict) and method.get("type") not in _DISTINGUISHERS:
        printed = ("flowcontrol.FlowDistinguisherMethod"
                   f"{{Type:{go_quote(method.get('type') or '')}}}")
        errs.append(GoValueError("NotSupported", path.child("distinguisherMethod", "type"),
                                 printed, _supported(_DISTINGUISHERS)))
    pl_name = _d(spec.get("priorityLevelConfiguration")).get("name") or ""
    pl_path = path.child("priorityLevelConfiguration", "name")
    if pl_name:
        errs.extend(invalid(pl_path, pl_name, m) for m in name_is_dns_subdomain(pl_name, False))
    else:
        errs.append(required(pl_path, "must reference a priority level"))
    for i, rule in enumerate(_l(spec.get("rules"))):
        errs.extend(_validate_rule(_d(rule), path.child("rules").index(i)))
    return errs


def _supported(values: list[str]) -> str:
    return "supported values: " + ", ".join(go_quote(v) for v in values)


def _validate_rule(rule: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateFlowSchemaPolicyRulesWithSubjects}."""
    errs: list[FieldError] = []
    subjects = _l(rule.get("subjects"))
    if subjects:
        for i, subject in enumerate(subjects):
            errs.extend(_validate_subject(_d(subject), path.child("subjects").index(i)))
    else:
        errs.append(required(path.child("subjects"), "subjects must contain at least one value"))
    resource_rules = _l(rule.get("resourceRules"))
    non_resource_rules = _l(rule.get("nonResourceRules"))
    if not resource_rules and not non_resource_rules:
        errs.append(required(path, "at least one of resourceRules and nonResourceRules has to "
                                   "be non-empty"))
    for i, r in enumerate(resource_rules):
        errs.extend(_validate_resource_rule(_d(r), path.child("resourceRules").index(i)))
    for i, r in enumerate(non_resource_rules):
        errs.extend(_validate_non_resource_rule(_d(r), path.child("nonResourceRules").index(i)))
    return errs


def _validate_subject(subject: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateFlowSchemaSubject} and the per-kind subject validators."""
    errs: list[FieldError] = []
    kind = subject.get("kind") or ""
    user, group, sa = subject.get("user"), subject.get("group"), subject.get("serviceAccount")
    not_user = forbidden(path.child("user"), "user is forbidden when subject kind is not 'User'")
    not_group = forbidden(path.child("group"),
                          "group is forbidden when subject kind is not 'Group'")
    not_sa = forbidden(path.child("serviceAccount"),
                       "serviceAccount is forbidden when subject kind is not 'ServiceAccount'")
    if kind == "ServiceAccount":
        errs.extend(_validate_sa_subject(sa, path.child("serviceAccount")))
        errs.extend(e for present, e in ((user, not_user), (group, not_group))
                    if present is not None)
    elif kind == "User":
        errs.extend(_validate_named(user, path.child("user"),
                                    "user is required when subject kind is 'User'"))
        errs.extend(e for present, e in ((sa, not_sa), (group, not_group)) if present is not None)
    elif kind == "Group":
        errs.extend(_validate_named(group, path.child("group"),
                                    "group is required when subject kind is 'Group'"))
        errs.extend(e for present, e in ((sa, not_sa), (user, not_user)) if present is not None)
    else:
        errs.append(not_supported(path.child("kind"), kind, _SUBJECT_KINDS))
    return errs


def _validate_named(subject: Any, path: Path, missing: str) -> list[FieldError]:
    """Upstream C{ValidateUserSubject} / C{ValidateGroupSubject}."""
    if subject is None:
        return [required(path, missing)]
    if not _d(subject).get("name"):
        return [required(path.child("name"), "")]
    return []


def _validate_sa_subject(subject: Any, path: Path) -> list[FieldError]:
    """Upstream C{ValidateServiceAccountSubject}."""
    if subject is None:
        return [required(path, "serviceAccount is required when subject kind is "
                               "'ServiceAccount'")]
    subject = _d(subject)
    errs: list[FieldError] = []
    name = subject.get("name") or ""
    if not name:
        errs.append(required(path.child("name"), ""))
    elif name != "*":
        errs.extend(invalid(path.child("name"), name, m)
                    for m in name_is_dns_subdomain(name, False))
    namespace = subject.get("namespace") or ""
    if namespace:
        errs.extend(invalid(path.child("namespace"), namespace, m)
                    for m in name_is_dns_label(namespace, False))
    else:
        errs.append(required(path.child("namespace"), "must specify namespace for service account"))
    return errs


def _validate_verbs(verbs: list, path: Path) -> list[FieldError]:
    if not verbs:
        return [required(path, "verbs must contain at least one value")]
    if "*" in verbs:
        if len(verbs) > 1:
            return [GoValueError("Invalid", path, go_string_slice(verbs),
                                 "if '*' is present, must not specify other verbs")]
        return []
    if not set(verbs) <= set(_SUPPORTED_VERBS):
        return [GoValueError("NotSupported", path, go_string_slice(verbs),
                             _supported(_SUPPORTED_VERBS))]
    return []


def _validate_resource_rule(rule: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateFlowSchemaResourcePolicyRule}."""
    errs = _validate_verbs(_l(rule.get("verbs")), path.child("verbs"))
    groups = _l(rule.get("apiGroups"))
    if not groups:
        errs.append(required(path.child("apiGroups"),
                             "resource rules must supply at least one api group"))
    elif len(groups) > 1 and "*" in groups:
        errs.append(GoValueError("Invalid", path.child("apiGroups"), go_string_slice(groups),
                                 "if '*' is present, must not specify other api groups"))
    resources = _l(rule.get("resources"))
    if not resources:
        errs.append(required(path.child("resources"),
                             "resource rules must supply at least one resource"))
    elif len(resources) > 1 and "*" in resources:
        errs.append(GoValueError("Invalid", path.child("resources"), go_string_slice(resources),
                                 "if '*' is present, must not specify other resources"))
    namespaces = _l(rule.get("namespaces"))
    if not namespaces and not rule.get("clusterScope"):
        errs.append(required(path.child("namespaces"), "resource rules that are not cluster "
                                                       "scoped must supply at least one namespace"))
    elif "*" in namespaces:
        if len(namespaces) > 1:
            errs.append(GoValueError("Invalid", path.child("namespaces"),
                                     go_string_slice(namespaces),
                                     "if '*' is present, must not specify other namespaces"))
    else:
        for i, ns in enumerate(namespaces):
            errs.extend(invalid(path.child("namespaces").index(i), ns, _NS_ERR_INTRO + m)
                        for m in name_is_dns_label(ns, False))
    return errs


def _validate_non_resource_rule(rule: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateFlowSchemaNonResourcePolicyRule}."""
    errs = _validate_verbs(_l(rule.get("verbs")), path.child("verbs"))
    urls = _l(rule.get("nonResourceURLs"))
    up = path.child("nonResourceURLs")
    if not urls:
        errs.append(required(up, "nonResourceURLs must contain at least one value"))
    elif "*" in urls:
        if len(urls) > 1:
            errs.append(GoValueError("Invalid", up, go_string_slice(urls),
                                     "if '*' is present, must not specify other non-resource URLs"))
    else:
        for i, url in enumerate(urls):
            err = validate_non_resource_url_path(url, up.index(i))
            if err is not None:
                errs.append(err)
    return errs


def validate_non_resource_url_path(url: str, path: Path) -> FieldError | None:
    """
    Upstream C{ValidateNonResourceURLPath}: a leading slash, no white space, no C{//}, and a
    C{*} only as the C{/*} suffix; C{/} alone is fine.
    """
    if not url:
        return invalid(path, url, "must not be empty")
    if url == "/":
        return None
    if not url.startswith("/"):
        return invalid(path, url, "must start with slash")
    if " " in url:
        return invalid(path, url, "must not contain white-space")
    if "//" in url:
        return invalid(path, url, "must not contain double slash")
    stars = url.count("*")
    if stars > 1 or (stars == 1 and url[-2:] != "/*"):
        return invalid(path, url, "wildcard can only do suffix matching")
    return None


def _validate_conditions(conditions: Any, path: Path) -> list[FieldError]:
    """Upstream C{ValidateFlowSchemaStatus} / C{ValidatePriorityLevelConfigurationStatus}:
    unique, non-empty condition types."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, cond in enumerate(_l(conditions)):
        p = path.child("conditions").index(i)
        ctype = _d(cond).get("type") or ""
        if ctype in seen:
            errs.append(duplicate(p.child("type"), ctype))
        seen.add(ctype)
        if not ctype:
            errs.append(required(p.child("type"), "must not be empty"))
    return errs


# --- PriorityLevelConfiguration -----------------------------------------------------------------
def validate_priority_level(pl: dict) -> list[FieldError]:
    """
    Upstream C{ValidatePriorityLevelConfiguration} for v1 requests (zero limited shares allowed,
    as v1.32's strategy sets C{AllowZeroLimitedNominalConcurrencyShares}): ObjectMeta, the spec,
    the mandatory C{catch-all} spec fixed (C{exempt} may change its C{spec.exempt} fields), the
    status conditions.
    """
    meta = _d(pl.get("metadata"))
    errs = validate_object_meta(meta, False, name_is_dns_subdomain, Path("metadata"))
    spec = _d(pl.get("spec"))
    name = meta.get("name") or ""
    spec_path = Path("spec")
    errs.extend(_validate_priority_level_spec(spec, name, spec_path))
    mandatory = _MANDATORY_PL_SPECS.get(name)
    if (mandatory is not None and name != "exempt"
            and _semantic(spec) != mandatory):
        errs.append(invalid(spec_path, spec, f"spec of '{name}' must equal the fixed value"))
    errs.extend(_validate_conditions(_d(pl.get("status")).get("conditions"), Path("status")))
    return errs


def validate_priority_level_update(new: dict, old: dict) -> list[FieldError]:
    """Common ObjectMeta update checks, then C{ValidatePriorityLevelConfigurationUpdate} (the
    full validation of the new object)."""
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    return errs + validate_priority_level(new)


def validate_priority_level_status_update(new: dict, old: dict) -> list[FieldError]:
    """Upstream C{ValidatePriorityLevelConfigurationStatusUpdate}: the conditions only."""
    errs = validate_object_meta_update(_d(new.get("metadata")), _d(old.get("metadata")),
                                       Path("metadata"))
    return errs + _validate_conditions(_d(new.get("status")).get("conditions"), Path("status"))


def _validate_priority_level_spec(spec: dict, name: str, path: Path) -> list[FieldError]:
    """Upstream C{ValidatePriorityLevelConfigurationSpec}."""
    errs: list[FieldError] = []
    ptype = spec.get("type") or ""
    if (name == "exempt") != (ptype == "Exempt"):
        errs.append(invalid(path.child("type"), ptype,
                            "type must be 'Exempt' if and only if name is 'exempt'"))
    if ptype == "Exempt":
        if spec.get("limited") is not None:
            errs.append(forbidden(path.child("limited"), "must be nil if the type is not Limited"))
        if spec.get("exempt") is not None:
            errs.extend(_validate_exempt(_d(spec["exempt"]), path.child("exempt")))
    elif ptype == "Limited":
        if spec.get("exempt") is not None:
            errs.append(forbidden(path.child("exempt"), "must be nil if the type is Limited"))
        if spec.get("limited") is None:
            errs.append(required(path.child("limited"), "must not be empty when type is Limited"))
        else:
            errs.extend(_validate_limited(_d(spec["limited"]), path.child("limited")))
    else:
        errs.append(not_supported(path.child("type"), ptype, _ENABLEMENTS))
    return errs


def _validate_limited(limited: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateLimitedPriorityLevelConfiguration} (zero shares allowed)."""
    errs: list[FieldError] = []
    shares = limited.get("nominalConcurrencyShares") or 0
    if shares < 0:
        errs.append(invalid(path.child("nominalConcurrencyShares"), shares,
                            "must be a non-negative integer"))
    errs.extend(_validate_limit_response(_d(limited.get("limitResponse")),
                                         path.child("limitResponse")))
    lendable = limited.get("lendablePercent")
    if lendable is not None and not 0 <= lendable <= 100:
        errs.append(invalid(path.child("lendablePercent"), lendable,
                            "must be between 0 and 100, inclusive"))
    borrowing = limited.get("borrowingLimitPercent")
    if borrowing is not None and borrowing < 0:
        errs.append(invalid(path.child("borrowingLimitPercent"), borrowing,
                            "if specified, must be a non-negative integer"))
    return errs


def _validate_exempt(exempt: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateExemptPriorityLevelConfiguration}."""
    errs: list[FieldError] = []
    shares = exempt.get("nominalConcurrencyShares")
    if shares is not None and shares < 0:
        errs.append(invalid(path.child("nominalConcurrencyShares"), shares,
                            "must be a non-negative integer"))
    lendable = exempt.get("lendablePercent")
    if lendable is not None and not 0 <= lendable <= 100:
        errs.append(invalid(path.child("lendablePercent"), lendable,
                            "must be between 0 and 100, inclusive"))
    return errs


def _validate_limit_response(response: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidateLimitResponse}."""
    rtype = response.get("type") or ""
    if rtype == "Reject":
        if response.get("queuing") is not None:
            return [forbidden(path.child("queuing"),
                              "must be nil if limited.limitResponse.type is not Limited")]
        return []
    if rtype == "Queue":
        if response.get("queuing") is None:
            return [required(path.child("queuing"),
                             "must not be empty if limited.limitResponse.type is Limited")]
        return _validate_queuing(_d(response["queuing"]), path.child("queuing"))
    return [not_supported(path.child("type"), rtype, _LIMIT_RESPONSES)]


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """Upstream C{shufflesharding.RequiredEntropyBits}: C{ceil(log2(deck) * hand)}."""
    return math.ceil(math.log2(deck_size) * hand_size)


def _validate_queuing(queuing: dict, path: Path) -> list[FieldError]:
    """Upstream C{ValidatePriorityLevelQueuingConfiguration}."""
    errs: list[FieldError] = []
    limit = queuing.get("queueLengthLimit") or 0
    if limit <= 0:
        errs.append(invalid(path.child("queueLengthLimit"), limit, "must be positive"))
    queues = queuing.get("queues") or 0
    if queues <= 0:
        errs.append(invalid(path.child("queues"), queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(invalid(path.child("queues"), queues, f"must not be greater than {MAX_QUEUES}"))
    hand = queuing.get("handSize") or 0
    if hand <= 0:
        errs.append(invalid(path.child("handSize"), hand, "must be positive"))
    elif hand > queues:
        errs.append(invalid(path.child("handSize"), hand,
                            f"should not be greater than queues ({queues})"))
    elif required_entropy_bits(queues, hand) > MAX_HASH_BITS:
        errs.append(invalid(path.child("handSize"), hand,
                            f"required entropy bits of deckSize {queues} and handSize {hand} "
                            f"should not be greater than {MAX_HASH_BITS}"))
    return errs
