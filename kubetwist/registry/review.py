# -*- test-case-name: tests.apis.test_reviews -*-
"""
Create-only, never-stored resources ("reviews"): upstream's C{rest.Creater} storages that are
not a registry C{Store}, such as C{pkg/registry/authentication/tokenreview} and
C{pkg/registry/authorization/subjectaccessreview}.

A L{ReviewREST} has the part of the L{Store <kubetwist.registry.generic.store.Store>} interface
the create handler uses (C{spec}, C{strategy}, C{create(namespace, obj, admission, dry)}), so
the generic handler decodes, kind-checks and negotiates as for every resource.
L{ReviewHandlers <kubetwist.endpoints.review.ReviewHandlers>} hands the review a
L{ReviewContext} (the requesting user) in place of the admission binding, and
L{install_reviews <kubetwist.endpoints.review.install_reviews>} installs a group-version of
such resources; a ReviewREST provides only L{ICreater}, so discovery lists the verbs
C{["create"]} only and no other route exists.

The answer is the reviewed object itself, HTTP 201, never stored: no uid, resourceVersion or
creationTimestamp is filled in (Go writes C{"creationTimestamp": null} for the zero time).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from zope.interface import implementer

from kubetwist.registry.rest import ICreater, ResourceSpec, Strategy
from kubetwist.runtime import errors
from kubetwist.runtime import types as typetables

__all__ = [
    "ReviewContext",
    "ReviewREST",
    "go_shape",
    "review_metadata",
]

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@dataclass
class ReviewContext:
    """
    What a review may know of its request (upstream: the request context).

    @ivar user: the requesting user (L{UserInfo <kubetwist.authentication.user.UserInfo>}), or
        C{None} when the request was not authenticated.
    @ivar namespace: the URL's namespace, C{""} for cluster-scoped resources.
    @ivar dry_run: C{dryRun=All} was asked (reviews have no side effects either way).
    """

    user: Any
    namespace: str = ""
    dry_run: bool = False


ReviewFunc = Callable[[ReviewContext, dict], dict | Awaitable[dict]]


@implementer(ICreater)
class ReviewREST:
    """
    One create-only resource.

    @ivar spec: its resource table row (the verbs C{["create"]}: it provides only
        L{ICreater}).
    @ivar strategy: a L{Strategy} whose C{default} and C{warnings} the handler calls.
    """

    def __init__(self, spec: ResourceSpec, review: ReviewFunc,
                 strategy: Strategy | None = None) -> None:
        """
        @param review: C{(context, obj) -> answer} (or a coroutine of it): C{obj} is the
            decoded, kind-checked request body (a dict with C{metadata}); the answer is the
            object to return.  It raises L{StatusError <kubetwist.runtime.errors.StatusError>}
            for refusals (400 BadRequest, 422 Invalid).
        """
        self.spec = spec
        self.review = review
        self.strategy = strategy or Strategy(kind=spec.kind, group=spec.group,
                                             namespaced=spec.namespaced)

    async def create(self, namespace: str, obj: dict, admission: Any, dry: bool) -> dict:
        """
        Review C{obj}.  The object's namespace is reconciled with the URL's as upstream's
        create handler does (C{rest.EnsureObjectNamespaceMatchesRequestNamespace}): an empty
        one takes the URL's, a cluster-scoped resource has it cleared, another one is refused.

        @param admission: the L{ReviewContext} the review handlers pass (anything else: a
            context without a user).
        @raise StatusError: 400 C{the namespace of the provided object does not match the
            namespace sent on the request}; the review's own errors.
        """
        context = admission if isinstance(admission, ReviewContext) else \
            ReviewContext(None, namespace, dry)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        expected = namespace if self.spec.namespaced else ""
        own = meta.get("namespace") or ""
        if own != expected:
            if not own:
                meta["namespace"] = expected
            elif not expected:
                meta.pop("namespace", None)
            else:
                raise errors.new_bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request")
        result = self.review(context, obj)
        if inspect.isawaitable(result):
            result = await result
        return result


def review_metadata(meta: dict | None) -> dict:
    """
    The C{metadata} of an answer as Go writes a decoded C{ObjectMeta} back: the fields sent, in
    C{ObjectMeta} order, empty ones and unknown ones dropped, and C{"creationTimestamp": null}
    when it is unset (a zero C{metav1.Time} is not omitted).
    """
    meta = meta if isinstance(meta, dict) else {}
    out: dict = {}
    for f in typetables.fields_of(_OBJECT_META):
        name = f.json_name
        if name == "creationTimestamp":
            out[name] = meta.get(name) or None
        elif name in meta and not _empty(meta[name]):
            out[name] = meta[name]
    return out


def _zero(f: Any) -> Any:
    if f.container or f.pointer:
        return None
    if f.type == "string":
        return ""
    if f.type == "bool":
        return False
    if f.type in ("int32", "int64", "double"):
        return 0
    if f.is_message:
        return go_shape({}, f.type)
    return None


def _empty(value: Any) -> bool:
    return value is None or value == "" or value is False or value == 0 or value in ([], {})


def go_shape(obj: Any, type_name: str) -> Any:
    """
    C{obj} as Go re-encodes it after decoding into C{type_name} (full type name, see
    L{kubetwist.runtime.types}): keys in struct order, unknown keys dropped, empty
    C{omitempty} fields omitted, absent non-C{omitempty} fields written as their zero value.
    """
    if not isinstance(obj, dict):
        return obj
    out: dict = {}
    for f in typetables.fields_of(type_name):
        name = f.json_name
        if name not in obj:
            if not f.omitempty:
                out[name] = _zero(f)
            continue
        value = obj[name]
        if f.omitempty and _empty(value) and not (f.pointer and value is not None
                                                  and f.is_message):
            continue
        if f.is_message and value is not None:
            if f.container == "list" and isinstance(value, list):
                value = [go_shape(v, f.type) for v in value]
            elif not f.container:
                value = go_shape(value, f.type)
        out[name] = value
    return out
