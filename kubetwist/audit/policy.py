# -*- test-case-name: tests.audit.test_policy -*-
"""
The audit policy: upstream C{k8s.io/apiserver/pkg/audit/policy} (C{reader.go}
C{LoadPolicyFromFile}, C{checker.go} C{EvaluatePolicyRule}) and
C{pkg/apis/audit/validation ValidatePolicy}.

A policy file is an C{audit.k8s.io/v1 Policy} (YAML or JSON): C{rules} checked in order, the
first matching rule giving the request's level (C{None}, C{Metadata}, C{Request},
C{RequestResponse}), its omitted stages (the rule's united with the policy's) and whether
C{managedFields} are left out of the logged objects; no matching rule: level C{None}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import yaml
from twisted.logger import Logger

from kubetwist.apimachinery.validation import is_dns1123_subdomain
from kubetwist.runtime import field as fieldlib

log = Logger()

NONE, METADATA, REQUEST, REQUEST_RESPONSE = "None", "Metadata", "Request", "RequestResponse"
#: the levels, lowest first (a level "is at least" another by position).
LEVELS = (NONE, METADATA, REQUEST, REQUEST_RESPONSE)
_RANK = {lvl: i for i, lvl in enumerate(LEVELS)}

REQUEST_RECEIVED, RESPONSE_STARTED, RESPONSE_COMPLETE, PANIC = (
    "RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
STAGES = (REQUEST_RECEIVED, RESPONSE_STARTED, RESPONSE_COMPLETE, PANIC)

API_VERSION = "audit.k8s.io/v1"


def at_least(level: str, other: str) -> bool:
    """Upstream C{Level.GreaterOrEqual}: C{level} is C{other} or higher."""
    return _RANK.get(level, 0) >= _RANK[other]


class PolicyError(ValueError):
    """A policy file that cannot be used; the message is upstream's (one line)."""


@dataclass(frozen=True)
class RequestAuditConfig:
    """
    Upstream C{auditinternal.RequestAuditConfig}: what the policy says about one request.

    @ivar level: one of L{LEVELS}.
    @ivar omit_stages: the stages not to record.
    @ivar omit_managed_fields: leave C{metadata.managedFields} out of logged objects.
    """

    level: str = NONE
    omit_stages: tuple = ()
    omit_managed_fields: bool = False


@dataclass
class GroupResources:
    """One C{resources} entry of a rule: C{group}, C{resources}, C{resourceNames}."""

    group: str = ""
    resources: list[str] = field(default_factory=list)
    resource_names: list[str] = field(default_factory=list)


@dataclass
class PolicyRule:
    """One rule of a policy (upstream C{audit.PolicyRule}); empty lists match everything."""

    level: str = ""
    users: list[str] = field(default_factory=list)
    user_groups: list[str] = field(default_factory=list)
    verbs: list[str] = field(default_factory=list)
    resources: list[GroupResources] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    non_resource_urls: list[str] = field(default_factory=list)
    omit_stages: list[str] = field(default_factory=list)
    omit_managed_fields: Optional[bool] = None

    def matches(self, user: Any, info: Any) -> bool:
        """Upstream C{ruleMatches} for the request's C{user} (a C{UserInfo} or C{None}) and
        C{info} (its C{RequestInfo})."""
        if self.users and (user is None or user.name not in self.users):
            return False
        if self.user_groups and (user is None or
                                 not any(g in self.user_groups for g in user.groups)):
            return False
        if self.verbs and info.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(info)
        if self.non_resource_urls:
            return not info.is_resource_request and any(
                _path_matches(info.path, spec) for spec in self.non_resource_urls)
        return True

    def _matches_resource(self, info: Any) -> bool:
        if not info.is_resource_request:
            return False
        if self.namespaces and info.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        resource, sub = info.resource, info.subresource
        combined = f"{resource}/{sub}" if sub else resource
        for gr in self.resources:
            if gr.group != info.api_group and gr.group != "*":
                continue
            if not gr.resources:
                return True
            if gr.resource_names and info.name not in gr.resource_names:
                continue
            for res in gr.resources:
                if res in (combined, "*"):
                    return True
                if sub and res.startswith("*/") and sub == res[2:]:
                    return True
                if res.endswith("/*") and resource == res[:-2]:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    if spec in ("*", path):
        return True
    return spec.endswith("*") and path.startswith(spec.rstrip("*"))


@dataclass
class Policy:
    """
    An audit policy (upstream C{audit.Policy}) and its evaluator
    (C{policyRuleEvaluator}).

    @ivar rules: the L{PolicyRule}s, in order; each rule's C{omit_stages} already united with
        the policy's (upstream C{NewPolicyRuleEvaluator}).
    """

    rules: list[PolicyRule] = field(default_factory=list)
    omit_stages: list[str] = field(default_factory=list)
    omit_managed_fields: bool = False

    def __post_init__(self) -> None:
        for rule in self.rules:
            rule.omit_stages = _union(self.omit_stages, rule.omit_stages)

    def evaluate(self, user: Any, info: Any) -> RequestAuditConfig:
        """Upstream C{EvaluatePolicyRule}: the first matching rule's level, else C{None}."""
        for rule in self.rules:
            if rule.matches(user, info):
                omf = (self.omit_managed_fields if rule.omit_managed_fields is None
                       else rule.omit_managed_fields)
                return RequestAuditConfig(rule.level, tuple(rule.omit_stages), omf)
        return RequestAuditConfig(NONE, tuple(self.omit_stages), self.omit_managed_fields)


def _union(a: list[str], b: list[str]) -> list[str]:
    out = list(a)
    out.extend(s for s in b if s not in out)
    return out


def load_policy_file(path: str) -> Policy:
    """
    Read and check a policy file (upstream C{LoadPolicyFromFile}).

    @raise PolicyError: upstream's message, e.g. C{failed to read file path "p": open p: no
        such file or directory}, C{failed decoding: yaml: ...: from file p}, C{rules[0].level:
        Unsupported value: "Foo": supported values: ...: from file p}, C{loaded illegal policy
        with 0 rules: from file p}.
    """
    if not path:
        raise PolicyError("file path not specified")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PolicyError(f'failed to read file path "{path}": open {path}: '
                          f'{_os_error_text(e)}') from None
    try:
        return load_policy(data)
    except PolicyError as e:
        raise PolicyError(f"{e}: from file {path}") from None


def _os_error_text(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


#: PyYAML's problem texts that Go's yaml (libyaml's wording) says differently
_YAML_MESSAGES = (
    ("expected <block end>", "did not find expected key"),
    ("mapping values are not allowed here", "mapping values are not allowed in this context"),
    ("expected ',' or ']'", "did not find expected ',' or ']'"),
    ("expected ',' or '}'", "did not find expected ',' or '}'"),
)


def load_policy(data: bytes) -> Policy:
    """
    Decode and validate a policy document (upstream C{LoadPolicyFromBytes}): unknown fields
    are logged and ignored (upstream's lenient fallback).

    @raise PolicyError: see L{load_policy_file} (without the file suffix).
    """
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as e:
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        for pyyaml, go in _YAML_MESSAGES:
            if problem.startswith(pyyaml):
                problem = go
        raise PolicyError(f"failed decoding: yaml: {problem}") from None
    if not isinstance(doc, dict):
        raise PolicyError("failed decoding: Object 'Kind' is missing in "
                          f"'{data.decode('utf-8', 'replace').strip()}'")
    kind, api_version = doc.get("kind") or "", doc.get("apiVersion") or ""
    if not kind:
        raise PolicyError("failed decoding: Object 'Kind' is missing in "
                          f"'{data.decode('utf-8', 'replace').strip()}'")
    if not api_version:
        raise PolicyError(f"unknown group version field audit.k8s.io/__internal, Kind={kind} "
                          "in policy")
    if api_version != API_VERSION or kind != "Policy":
        raise PolicyError(f'failed decoding: no kind "{kind}" is registered for version '
                          f'"{api_version}" in scheme "pkg/audit/scheme.go:30"')
    unknown: list[str] = []
    policy = _decode_policy(doc, unknown)
    if unknown:
        log.warn("Audit policy contains errors, falling back to lenient decoding: "
                 "strict decoding error: {fields}",
                 fields=", ".join(f'unknown field "{u}"' for u in unknown))
    errs = validate_policy(policy)
    if errs:
        raise PolicyError(fieldlib.aggregate_message(errs))
    if not policy.rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return Policy(policy.rules, policy.omit_stages, policy.omit_managed_fields)


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise PolicyError(f"failed decoding: json: cannot unmarshal {type(value).__name__} into "
                          "Go value of type []string")
    return [str(v) for v in value]


_RULE_FIELDS = {"level", "users", "userGroups", "verbs", "resources", "namespaces",
                "nonResourceURLs", "omitStages", "omitManagedFields"}
_POLICY_FIELDS = {"apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"}


class _Unvalidated(Policy):
    """A decoded policy before validation (no stage union yet)."""

    def __post_init__(self) -> None:
        pass


def _decode_policy(doc: dict, unknown: list[str]) -> Policy:
    unknown.extend(k for k in doc if k not in _POLICY_FIELDS)
    rules = []
    for i, r in enumerate(doc.get("rules") or []):
        if not isinstance(r, dict):
            raise PolicyError("failed decoding: json: cannot unmarshal into Go struct field "
                              "Policy.rules of type v1.PolicyRule")
        unknown.extend(f"rules[{i}].{k}" for k in r if k not in _RULE_FIELDS)
        resources = []
        for g in r.get("resources") or []:
            g = g or {}
            resources.append(GroupResources(str(g.get("group") or ""),
                                            _strings(g.get("resources")),
                                            _strings(g.get("resourceNames"))))
        omf = r.get("omitManagedFields")
        rules.append(PolicyRule(
            level=str(r.get("level") or ""), users=_strings(r.get("users")),
            user_groups=_strings(r.get("userGroups")), verbs=_strings(r.get("verbs")),
            resources=resources, namespaces=_strings(r.get("namespaces")),
            non_resource_urls=_strings(r.get("nonResourceURLs")),
            omit_stages=_strings(r.get("omitStages")),
            omit_managed_fields=None if omf is None else bool(omf)))
    return _Unvalidated(rules, _strings(doc.get("omitStages")),
                        bool(doc.get("omitManagedFields")))


def validate_policy(policy: Policy) -> list[fieldlib.FieldError]:
    """Upstream C{ValidatePolicy}: the field errors of a decoded policy, in upstream's order."""
    errs = _validate_omit_stages(policy.omit_stages, fieldlib.Path("omitStages"))
    for i, rule in enumerate(policy.rules):
        path = fieldlib.Path("rules").index(i)
        if rule.level == "":
            errs.append(fieldlib.required(path.child("level"), ""))
        elif rule.level not in LEVELS:
            errs.append(fieldlib.not_supported(path.child("level"), rule.level, LEVELS))
        urls_path = path.child("nonResourceURLs")
        for j, url in enumerate(rule.non_resource_urls):
            if url == "*":
                continue
            if not url.startswith("/"):
                errs.append(fieldlib.invalid(urls_path.index(j), url,
                                             "non-resource URL rules must begin with a '/' "
                                             "character"))
            if url and "*" in url[:-1]:
                errs.append(fieldlib.invalid(urls_path.index(j), url,
                                             "non-resource URL wildcards '*' must be the final "
                                             "character of the rule"))
        res_path = path.child("resources")
        for gr in rule.resources:
            if gr.group and gr.group != "*":
                msgs = is_dns1123_subdomain(gr.group)
                if msgs:
                    errs.append(fieldlib.invalid(res_path.child("group"), gr.group,
                                                 ",".join(msgs)))
            if gr.resource_names and not gr.resources:
                errs.append(fieldlib.invalid_go(
                    res_path.child("resourceNames"), fieldlib.go_string_slice(gr.resource_names),
                    "using resourceNames requires at least one resource"))
        errs.extend(_validate_omit_stages(rule.omit_stages, path.child("omitStages")))
        if rule.non_resource_urls and (rule.resources or rule.namespaces):
            errs.append(fieldlib.invalid_go(urls_path,
                                            fieldlib.go_string_slice(rule.non_resource_urls),
                                            "rules cannot apply to both regular resources and "
                                            "non-resource URLs"))
    return errs


def _validate_omit_stages(stages: list[str], path: Any) -> list[fieldlib.FieldError]:
    return [fieldlib.invalid(path.index(i), s, "allowed stages are " + ",".join(STAGES))
            for i, s in enumerate(stages) if s not in STAGES]
