# -*- test-case-name: tests.authorization.test_abac -*-
"""
The C{ABAC} authorization mode: upstream C{pkg/auth/authorizer/abac} (C{abac.go}) and the
policy types of C{pkg/apis/abac} (C{v0} and C{v1beta1} with their conversions).

C{--authorization-policy-file} holds one JSON object per line (blank lines and lines starting
with C{#} are skipped): an C{abac.authorization.kubernetes.io/v1beta1} C{Policy}
(C{{"apiVersion": ..., "kind": "Policy", "spec": {user, group, readonly, apiGroup, resource,
namespace, nonResourcePath}}}) or the legacy unversioned form (C{{user, group, readonly,
resource, namespace}}, converted as upstream's C{v0} conversion: an empty subject or C{*}
means every authenticated user, empty namespace/resource mean C{*}, every API group, and
non-resource paths when both are empty).  A request is allowed by the first policy that
matches it; otherwise the answer is no opinion with the reason C{No policy matched.}.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer
from zope.interface import implementer

from kubetwist.authorization.authorizer import (
    ALLOW,
    NO_OPINION,
    Attributes,
    IAuthorizer,
    IRuleResolver,
)
from kubetwist.runtime.gofmt import json_kind

__all__ = ["Policy", "PolicyLoadError", "ABACAuthorizer", "load_policy_file", "parse_policy_line"]

GROUP_VERSION = "abac.authorization.kubernetes.io/v1beta1"
#: Upstream C{user.AllAuthenticated}.
ALL_AUTHENTICATED = "system:authenticated"

#: Go's C{bufio.MaxScanTokenSize}: a longer line stops the reading of the file.
_MAX_SCAN_TOKEN = 64 * 1024

_GO_TYPES = {"user": "string", "group": "string", "readonly": "bool", "apiGroup": "string",
             "resource": "string", "namespace": "string", "nonResourcePath": "string"}


class PolicyLoadError(ValueError):
    """
    A policy file that cannot be read (upstream C{policyLoadError}): C{error reading policy
    file <path>, line <n>: <line>: <error>}, or the open error itself
    (C{open <path>: no such file or directory}).
    """


@dataclass(frozen=True)
class Policy:
    """One policy line, converted to upstream's internal C{abac.PolicySpec}."""

    user: str = ""
    group: str = ""
    readonly: bool = False
    api_group: str = ""
    resource: str = ""
    namespace: str = ""
    non_resource_path: str = ""


def _fields(obj: dict, struct: str) -> dict:
    """Decode C{obj}'s known fields as Go's C{encoding/json} would into C{struct}."""
    out: dict = {}
    for key, want in _GO_TYPES.items():
        if key not in obj or obj[key] is None:
            continue
        value = obj[key]
        got = json_kind(value)
        if got != want:
            raise ValueError(f"json: cannot unmarshal {got} into Go struct field {struct}."
                             f"{key} of type {want}")
        out[key] = value
    return out


def parse_policy_line(line: str) -> Policy:
    """
    One line of the policy file as a L{Policy}.

    @raise ValueError: upstream's decoding error text (C{couldn't get version/kind; json
        parse error: ...}, C{no kind "X" is registered for version "Y" in scheme
        "pkg/apis/abac/register.go:33"}, C{json: cannot unmarshal string into Go struct field
        Policy.readonly of type bool}).
    """
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise ValueError(f"couldn't get version/kind; json parse error: {_json_error(e)}") from None
    if not isinstance(obj, dict):
        raise ValueError(
            "couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{json_kind(obj)} into Go value of type struct {{ APIVersion string "
            '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    api_version = obj.get("apiVersion") or ""
    kind = obj.get("kind") or ""
    if api_version and kind and (api_version, kind) != (GROUP_VERSION, "Policy"):
        raise ValueError(f'no kind "{kind}" is registered for version "{api_version}" in '
                         'scheme "pkg/apis/abac/register.go:33"')
    if api_version and kind:
        spec = obj.get("spec")
        if spec is not None and not isinstance(spec, dict):
            raise ValueError(f"json: cannot unmarshal {json_kind(spec)} into Go struct field "
                             "Policy.spec of type v1beta1.PolicySpec")
        f = _fields(spec or {}, "Policy.spec")
        user, group = f.get("user", ""), f.get("group", "")
        if user == "*" or group == "*":  # upstream Convert_v1beta1_Policy_To_abac_Policy
            user, group = "", ALL_AUTHENTICATED
        return Policy(user=user, group=group, readonly=f.get("readonly", False),
                      api_group=f.get("apiGroup", ""), resource=f.get("resource", ""),
                      namespace=f.get("namespace", ""),
                      non_resource_path=f.get("nonResourcePath", ""))
    # the unversioned (v0) form, converted as upstream's v0 conversion
    f = _fields(obj, "Policy")
    user, group = f.get("user", ""), f.get("group", "")
    namespace, resource = f.get("namespace", ""), f.get("resource", "")
    if not user and not group:
        group = ALL_AUTHENTICATED
    if user == "*" or group == "*":
        user, group = "", ALL_AUTHENTICATED
    return Policy(user=user, group=group, readonly=f.get("readonly", False), api_group="*",
                  resource=resource or "*", namespace=namespace or "*",
                  non_resource_path="*" if not namespace and not resource else "")


def _json_error(e: ValueError) -> str:
    """Go's C{encoding/json} syntax error text for a Python C{JSONDecodeError}."""
    msg = str(e)
    doc = getattr(e, "doc", None)
    pos = getattr(e, "pos", None)
    if doc is None or pos is None:
        return msg
    if pos >= len(doc.rstrip()) or msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    ch = doc[pos]
    shown = ch if ch.isprintable() else repr(ch)[1:-1]
    for start, context in (("Expecting property name", "looking for beginning of object key "
                                                        "string"),
                           ("Expecting value", "looking for beginning of value"),
                           ("Expecting ':' delimiter", "after object key"),
                           ("Expecting ',' delimiter", "after object key:value pair"
                            if "{" in doc[:pos] else "after array element"),
                           ("Extra data", "after top-level value")):
        if msg.startswith(start):
            return f"invalid character '{shown}' {context}"
    return msg


def load_policy_file(path: str) -> list[Policy]:
    """
    Upstream C{abac.NewFromFile}: the policies of C{path}, in file order.

    @raise PolicyLoadError: the file cannot be opened or a line cannot be decoded (the
        message names the path, the 1-based line number and the line).
    """
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise PolicyLoadError(f"open {path}: no such file or directory") from None
    except IsADirectoryError:
        raise PolicyLoadError(f"error reading policy file {path}: read {path}: "
                              "is a directory") from None
    except OSError as e:
        raise PolicyLoadError(f"open {path}: {e.strerror.lower() if e.strerror else e}") from None
    policies: list[Policy] = []
    for n, bline in enumerate(raw.split(b"\n"), start=1):
        if len(bline) >= _MAX_SCAN_TOKEN:
            raise PolicyLoadError(f"error reading policy file {path}: bufio.Scanner: token "
                                  "too long")
        line = bline.decode("utf-8", "replace").rstrip("\r")
        trimmed = line.strip()
        if not trimmed or trimmed.startswith("#"):
            continue
        try:
            policies.append(parse_policy_line(line))
        except ValueError as e:
            raise PolicyLoadError(
                f"error reading policy file {path}, line {n}: {line}: {e}") from None
    return policies


def _subject_matches(p: Policy, user: Any) -> bool:
    if user is None:
        return False
    matched = False
    if p.user:
        if p.user == "*":
            matched = True
        else:
            matched = p.user == (getattr(user, "name", "") or "")
            if not matched:
                return False
    if p.group:
        if p.group == "*":
            matched = True
        else:
            matched = p.group in (getattr(user, "groups", None) or [])
            if not matched:
                return False
    return matched


def _verb_matches(p: Policy, a: Attributes) -> bool:
    return a.is_read_only or not p.readonly


def _resource_matches(p: Policy, a: Attributes) -> bool:
    return (a.resource_request and p.namespace in ("*", a.namespace)
            and p.resource in ("*", a.resource) and p.api_group in ("*", a.api_group))


def _non_resource_matches(p: Policy, a: Attributes) -> bool:
    if a.resource_request:
        return False
    path = p.non_resource_path
    if path == "*" or path == a.path:
        return True
    return path.endswith("*") and a.path.startswith(path.rstrip("*"))


def matches(p: Policy, a: Attributes) -> bool:
    """Upstream C{matches}: subject, then verb, then resource or non-resource path."""
    return (_subject_matches(p, a.user) and _verb_matches(p, a)
            and (_resource_matches(p, a) or _non_resource_matches(p, a)))


@implementer(IAuthorizer, IRuleResolver)
class ABACAuthorizer:
    """Upstream C{abac.PolicyList}: C{Authorize} and C{RulesFor} over L{Policy} lines."""

    def __init__(self, policies: list[Policy]) -> None:
        self.policies = list(policies)

    @classmethod
    def from_file(cls, path: str) -> "ABACAuthorizer":
        """@raise PolicyLoadError: see L{load_policy_file}."""
        return cls(load_policy_file(path))

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple[str, str]]":
        """Allowed by the first matching policy; else no opinion, C{No policy matched.}."""
        for p in self.policies:
            if matches(p, attributes):
                return defer.succeed((ALLOW, ""))
        return defer.succeed((NO_OPINION, "No policy matched."))

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """Upstream C{PolicyList.RulesFor}: one rule per matching policy, complete."""
        resource: list = []
        non_resource: list = []
        for p in self.policies:
            if not _subject_matches(p, user) or p.namespace not in ("*", namespace):
                continue
            verbs = ["get", "list", "watch"] if p.readonly else ["*"]
            if p.resource:
                resource.append({"verbs": list(verbs), "apiGroups": [p.api_group],
                                 "resources": [p.resource]})
            if p.non_resource_path:
                non_resource.append({"verbs": list(verbs),
                                     "nonResourceURLs": [p.non_resource_path]})
        return resource, non_resource, False, ""


def _factory(config: Any) -> ABACAuthorizer:
    options = getattr(config, "options", None) or {}
    path = options.get("authorization-policy-file") or ""
    return ABACAuthorizer.from_file(path)
