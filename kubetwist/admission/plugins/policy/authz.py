# -*- test-case-name: tests.admission.test_policy -*-
"""
The CEL C{authorizer} library of admission policies: upstream
C{k8s.io/apiserver/pkg/cel/library/authz.go} (C{authorizer.group('apps').resource('deployments')
.namespace('ns').name('x').check('get').allowed()}, C{authorizer.path('/healthz')
.check('get')}, C{authorizer.serviceAccount(ns, name)}, C{authorizer.requestResource},
C{Decision.allowed()}, C{reason()}, C{errored()}, C{error()}).

The runtime takes Python functions that cannot wait, while kubetwist's authorizers answer
with Deferreds.  So an evaluation runs inside an L{AuthzRun}: a C{check} whose decision is not
known yet records its attributes and fails the evaluation; the caller then asks the
authorizer for every recorded check (L{AuthzRun.resolve}) and evaluates again, now with the
decisions at hand (at most L{MAX_ROUNDS} times).  Opaque values are carried as one-entry maps
of types no JSON value has, as L{kubetwist.cel.library} carries its own (C{Authorizer}
C{map(bool, bytes)}, C{PathCheck} C{list(map(uint, bytes))} (the runtime dispatches on
kinds: it cannot tell two C{check}s on maps apart), C{GroupCheck}
C{map(int, list(bytes))}, C{ResourceCheck} C{map(uint, list(bytes))}, C{Decision}
C{map(bool, list(bytes))}).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Iterator, Optional

from kubetwist.apimachinery.validation import is_dns1123_label, is_dns1123_subdomain
from kubetwist.cel.library import CELLibraryError

__all__ = ["AuthzRun", "DECLARATIONS", "IMPLS", "MAX_ROUNDS", "authorizer_value",
           "request_resource_value"]

#: re-evaluations of one input while checks are pending
MAX_ROUNDS = 8
#: upstream's cost of one C{check} ("allows only two authorization checks per expression")
CHECK_COST = 350000

AUTHORIZER = "map(bool,bytes)"
PATH_CHECK = "list(map(uint,bytes))"
GROUP_CHECK = "map(int,list(bytes))"
RESOURCE_CHECK = "map(uint,list(bytes))"
DECISION = "map(bool,list(bytes))"

_current: list["AuthzRun"] = []


def _enc(value: dict) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _dec(raw: bytes) -> dict:
    return json.loads(raw.decode())


def authorizer_value(user: Any) -> dict:
    """The C{authorizer} variable for the requesting user (a C{UserInfo} or C{None})."""
    info = {"name": getattr(user, "name", ""), "uid": getattr(user, "uid", ""),
            "groups": list(getattr(user, "groups", []) or []),
            "extra": dict(getattr(user, "extra", {}) or {})} if user is not None else None
    return {True: _enc({"user": info})}


def request_resource_value(user: Any, group: str, resource: str, subresource: str,
                           namespace: str, name: str) -> dict:
    """The C{authorizer.requestResource} variable: a ResourceCheck of the request."""
    base = _dec(authorizer_value(user)[True])
    base.update(group=group, resource=resource, subresource=subresource,
                namespace=namespace, name=name)
    return {0: [_enc(base)]}


def _path(a: dict, path: str) -> list:
    return [{0: _enc(dict(_dec(a[True]), path=path))}]


def _group(a: dict, group: str) -> dict:
    return {0: [_enc(dict(_dec(a[True]), group=group))]}


def _service_account(a: dict, namespace: str, name: str) -> dict:
    if is_dns1123_subdomain(name):
        raise CELLibraryError("Invalid service account name")
    if is_dns1123_label(namespace):
        raise CELLibraryError("Invalid service account namespace")
    user = {"name": f"system:serviceaccount:{namespace}:{name}", "uid": "",
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"],
            "extra": {}}
    return {True: _enc(dict(_dec(a[True]), user=user))}


def _resource(g: dict, resource: str) -> dict:
    if not resource.strip():
        raise CELLibraryError("resource must not be empty")
    return {0: [_enc(dict(_dec(g[0][0]), resource=resource))]}


def _with(field: str) -> Any:
    def set_field(r: dict, value: str) -> dict:
        return {0: [_enc(dict(_dec(r[0][0]), **{field: value}))]}

    return set_field


def _check(target: dict, verb: str, resource: bool) -> dict:
    raw = target[0][0]
    attrs = dict(_dec(raw), verb=verb, resourceRequest=resource)
    run = _current[-1] if _current else None
    if run is None:
        raise CELLibraryError("no authorizer available")
    key = _enc(attrs)
    if key not in run.decisions:
        run.pending[key] = attrs
        raise CELLibraryError("authorization check pending")
    return {True: [_enc(run.decisions[key])]}


def _decision(d: dict) -> dict:
    return _dec(d[True][0])


#: (function, overload id, receiver type, [argument types], result type, implementation)
DECLARATIONS: list[tuple] = [
    ("path", "authorizer_path", AUTHORIZER, ["string"], PATH_CHECK, _path),
    ("group", "authorizer_group", AUTHORIZER, ["string"], GROUP_CHECK, _group),
    ("serviceAccount", "authorizer_serviceaccount", AUTHORIZER, ["string", "string"],
     AUTHORIZER, _service_account),
    ("resource", "groupcheck_resource", GROUP_CHECK, ["string"], RESOURCE_CHECK, _resource),
    ("subresource", "resourcecheck_subresource", RESOURCE_CHECK, ["string"], RESOURCE_CHECK,
     _with("subresource")),
    ("namespace", "resourcecheck_namespace", RESOURCE_CHECK, ["string"], RESOURCE_CHECK,
     _with("namespace")),
    ("name", "resourcecheck_name", RESOURCE_CHECK, ["string"], RESOURCE_CHECK, _with("name")),
    ("check", "pathcheck_check", PATH_CHECK, ["string"], DECISION,
     lambda p, v: _check(p, v, False)),
    ("check", "resourcecheck_check", RESOURCE_CHECK, ["string"], DECISION,
     lambda r, v: _check(r, v, True)),
    ("allowed", "decision_allowed", DECISION, [], "bool",
     lambda d: _decision(d)["decision"] == "Allow"),
    ("reason", "decision_reason", DECISION, [], "string", lambda d: _decision(d)["reason"]),
    ("errored", "decision_errored", DECISION, [], "bool",
     lambda d: bool(_decision(d)["error"])),
    ("error", "decision_error", DECISION, [], "string", lambda d: _decision(d)["error"]),
]

IMPLS = {oid: impl for _, oid, _, _, _, impl in DECLARATIONS}


class AuthzRun:
    """
    The authorization decisions of one input's evaluations.

    @param authorizer: an L{IAuthorizer <kubetwist.authorization.authorizer.IAuthorizer>},
        or C{None} (every check then answers C{NoOpinion} with an error).
    """

    def __init__(self, authorizer: Any) -> None:
        self.authorizer = authorizer
        self.decisions: dict[bytes, dict] = {}
        self.pending: dict[bytes, dict] = {}

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Make this run the one C{check} answers from, for the evaluations inside."""
        self.pending = {}
        _current.append(self)
        try:
            yield
        finally:
            _current.pop()

    async def resolve(self) -> bool:
        """Ask the authorizer for every pending check; whether there were any."""
        from kubetwist.authentication.user import UserInfo
        from kubetwist.authorization.authorizer import Attributes

        pending, self.pending = self.pending, {}
        for key, attrs in pending.items():
            u = attrs.get("user")
            user = UserInfo(u["name"], u.get("uid", ""), list(u.get("groups") or []),
                            dict(u.get("extra") or {})) if u else None
            decision: dict = {"decision": "NoOpinion", "reason": "", "error": ""}
            if self.authorizer is None:
                decision["error"] = "no authorizer"
            else:
                try:
                    record = Attributes(
                        user=user, verb=attrs.get("verb", ""),
                        namespace=attrs.get("namespace", ""),
                        api_group=attrs.get("group", ""),
                        api_version="*" if attrs.get("resourceRequest") else "",
                        resource=attrs.get("resource", ""),
                        subresource=attrs.get("subresource", ""),
                        name=attrs.get("name", ""), path=attrs.get("path", ""),
                        resource_request=bool(attrs.get("resourceRequest")))
                    answer, reason = await self.authorizer.authorize(record)
                    decision.update(decision={"allow": "Allow", "deny": "Deny"}.get(
                        str(answer).lower(), "NoOpinion"), reason=reason or "")
                except Exception as e:  # an authorizer's failure is the decision's error
                    decision["error"] = str(e)
            self.decisions[key] = decision
        return bool(pending)


def has_pending() -> Optional[bool]:
    """Whether the active run recorded pending checks (C{None} outside a run)."""
    return bool(_current[-1].pending) if _current else None
