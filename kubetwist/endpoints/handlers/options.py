# -*- test-case-name: tests.endpoints.test_handlers -*-
"""
Query parameters of resource requests: upstream C{metav1.ListOptions}, C{CreateOptions},
C{UpdateOptions}, C{PatchOptions}, C{DeleteOptions} as decoded by
C{k8s.io/apiserver/pkg/endpoints/handlers}.
"""

from __future__ import annotations

from typing import Any, Optional

from kubetwist.apimachinery import selectors
from kubetwist.apimachinery import validation as mv
from kubetwist.endpoints.request import context_of
from kubetwist.registry.deletion import validate_delete_options
from kubetwist.registry.generic.store import ListOptions
from kubetwist.registry.rest import Strategy
from kubetwist.runtime import errors
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import Path
from kubetwist.storage.interfaces import IWatchCache, SelectionPredicate


def first(query: dict[str, list[str]], key: str, default: str = "") -> str:
    values = query.get(key)
    return values[0] if values else default


def bool_param(query: dict[str, list[str]], key: str) -> Optional[bool]:
    v = first(query, key, None)  # type: ignore[arg-type]
    if v is None:
        return None
    if v.lower() in ("true", "1", ""):
        return True if v != "" else False
    if v.lower() in ("false", "0"):
        return False
    raise errors.new_bad_request(f'invalid boolean value "{v}" for {key}')


def int_param(query: dict[str, list[str]], key: str) -> Optional[int]:
    v = first(query, key, None)  # type: ignore[arg-type]
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise errors.new_bad_request(
            f'strconv.ParseInt: parsing "{v}": invalid syntax'
        ) from None


def dry_run(query: dict[str, list[str]]) -> bool:
    """C{dryRun=All} (the only accepted value); anything else is 400, as upstream."""
    values = query.get("dryRun", [])
    for v in values:
        if v != "All":
            raise errors.make_status(
                400, "BadRequest",
                f'dryRun: Unsupported value: "{v}": supported values: "All"',
            )
    return bool(values)


def supported_fields(strategy: Strategy) -> set[str]:
    """The field-selector attributes a resource supports (its C{GetAttrs} keys)."""
    try:
        return set(strategy.attrs({"metadata": {}}).keys())
    except Exception:
        return {"metadata.name", "metadata.namespace"}


#: Built-in kinds whose scheme registers its own field label conversion (upstream
#: C{AddFieldLabelConversionFunc}), answering C{field label not supported: <label>}; the others
#: use C{runtime.DefaultMetaV1FieldSelectorConversion}. Recorded from kube-apiserver v1.32.
_OWN_FIELD_LABEL_CONVERSION = {
    ("", "Event"), ("", "Namespace"), ("", "Node"), ("", "Pod"), ("", "ReplicationController"),
    ("", "Secret"), ("", "Service"), ("certificates.k8s.io", "CertificateSigningRequest"),
    ("events.k8s.io", "Event"),
}

#: The API groups kube-apiserver v1.32 serves itself; a kind of another group is a custom
#: resource, whose conversion also answers C{field label not supported}.
_BUILTIN_GROUPS = {
    "", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
    "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch",
    "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io",
    "flowcontrol.apiserver.k8s.io", "internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io",
    "policy", "rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io",
    "storage.k8s.io", "storagemigration.k8s.io",
}


def field_label_error(strategy: Strategy, label: str) -> str:
    """
    The message of the 400 BadRequest for a field selector on a label the kind does not
    support, as upstream's field label conversion of that kind words it: C{"x" is not a known
    field selector: only "metadata.name", "metadata.namespace"} by default, C{field label not
    supported: x} for kinds with their own conversion and custom resources, C{field label "x"
    not supported for Job} for Jobs.
    """
    group, kind = getattr(strategy, "group", ""), getattr(strategy, "kind", "")
    if (group, kind) == ("batch", "Job"):
        return f'field label "{label}" not supported for Job'
    if (group, kind) in _OWN_FIELD_LABEL_CONVERSION or group not in _BUILTIN_GROUPS:
        return f"field label not supported: {label}"
    return f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def list_options(query: dict[str, list[str]], strategy: Strategy,
                 kind_version: str = "v1") -> ListOptions:
    """
    Decode list/watch parameters into L{ListOptions}; bad selectors and unsupported field
    labels are 400 BadRequest (C{field label not supported: spec.foo}).
    """
    label_s = first(query, "labelSelector")
    field_s = first(query, "fieldSelector")
    label = selectors.parse_label_selector(label_s) if label_s else None
    fsel = selectors.parse_field_selector(field_s) if field_s else None
    name = ""
    if fsel is not None:
        allowed = supported_fields(strategy)
        for f, op, value in fsel.requirements():
            if f not in allowed:
                raise errors.new_bad_request(field_label_error(strategy, f))
            if f == "metadata.name" and op in ("=", "=="):
                name = value
    matcher = None
    if label is not None or fsel is not None:
        def matcher(obj: dict, label=label, fsel=fsel) -> bool:
            if label is not None and not label.matches(
                (obj.get("metadata") or {}).get("labels") or {}
            ):
                return False
            if fsel is not None and not fsel.matches(strategy.attrs(obj)):
                return False
            return True
    limit = int_param(query, "limit") or 0
    rv = first(query, "resourceVersion")
    rv_match = first(query, "resourceVersionMatch")
    cont = first(query, "continue")
    send_initial = bool_param(query, "sendInitialEvents")
    _validate_list_options(query, rv, rv_match, cont, send_initial)
    return ListOptions(
        predicate=SelectionPredicate(matcher),
        resource_version=rv,
        resource_version_match=rv_match,
        limit=max(limit, 0),
        continue_token=cont,
        allow_watch_bookmarks=bool(bool_param(query, "allowWatchBookmarks")),
        send_initial_events=send_initial,
        timeout_seconds=int_param(query, "timeoutSeconds"),
        name=name,
    )


def _invalid_list_options(err: fe.FieldError) -> errors.StatusError:
    """422 C{ListOptions.meta.k8s.io "" is invalid: ...} with its cause (upstream NewInvalid)."""
    return errors.new_invalid("meta.k8s.io", "ListOptions", "", [err])


def _validate_list_options(query: dict[str, list[str]], rv: str, rv_match: str, cont: str,
                           send_initial: Optional[bool]) -> None:
    """Upstream C{ValidateListOptions} (C{apimachinery/pkg/apis/meta/internalversion}).

    @raise StatusError: 422 C{Invalid} C{ListOptions.meta.k8s.io ""} with the field's cause.
    """
    def forbidden(path: str, detail: str) -> errors.StatusError:
        return _invalid_list_options(fe.forbidden(path, detail))

    if rv_match and rv_match not in ("Exact", "NotOlderThan"):
        raise _invalid_list_options(fe.not_supported(
            "resourceVersionMatch", rv_match, ["Exact", "NotOlderThan", ""]))
    if send_initial is not None:
        if not bool_param(query, "watch"):
            raise forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
        if rv_match != "NotOlderThan":
            raise forbidden("resourceVersionMatch",
                            "sendInitialEvents requires setting resourceVersionMatch to "
                            "NotOlderThan")
        if not bool_param(query, "allowWatchBookmarks"):
            raise forbidden("allowWatchBookmarks",
                            "sendInitialEvents requires setting allowWatchBookmarks to true")
        return
    if rv_match:
        if bool_param(query, "watch"):
            raise forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch")
        if not rv:
            raise forbidden("resourceVersionMatch",
                            "resourceVersionMatch is forbidden unless resourceVersion is provided")
        if cont:
            raise forbidden("resourceVersionMatch",
                            "resourceVersionMatch is forbidden when continue is provided")
        if rv_match == "Exact" and rv == "0":
            raise forbidden("resourceVersionMatch",
                            'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    if cont and rv and rv != "0":
        raise forbidden("resourceVersion",
                        "specifying resource version is not allowed when using continue")


def write_options(query: dict[str, list[str]], kind: str) -> dict:
    """
    The C{CreateOptions} / C{UpdateOptions} of a write as admission sees them (upstream
    C{metav1.CreateOptions} decoded from the query, the C{options} of an AdmissionReview):
    C{{"kind": kind, "apiVersion": "meta.k8s.io/v1"}} plus C{dryRun} (a list),
    C{fieldManager} and C{fieldValidation} when the query gives them.
    """
    out: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
    if query.get("dryRun"):
        out["dryRun"] = list(query["dryRun"])
    for key in ("fieldManager", "fieldValidation"):
        value = first(query, key)
        if value:
            out[key] = value
    return out


def admission_options(query: dict[str, list[str]], *operations: str) -> dict[str, dict]:
    """
    The options of each admission operation of a request (C{"CREATE"} -> CreateOptions,
    C{"UPDATE"} -> UpdateOptions; L{write_options}), for C{AdmissionChain.for_request}.
    """
    kinds = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions"}
    return {op: write_options(query, kinds[op]) for op in operations}


def delete_options(query: dict[str, list[str]], body: Optional[dict]) -> dict:
    """
    The request's C{DeleteOptions} (upstream C{handlers/delete.go}): the body when there is
    one, else the query parameters C{gracePeriodSeconds}, C{propagationPolicy},
    C{orphanDependents} and C{dryRun}; validated as upstream's handler does.

    @return: a C{DeleteOptions} dict (see L{kubetwist.registry.deletion}).
    @raise StatusError: 400 BadRequest for a malformed number or boolean; 422 Invalid
        (C{DeleteOptions.meta.k8s.io "" is invalid: ...}) for a bad policy, C{orphanDependents}
        with C{propagationPolicy}, a bad C{dryRun}.
    """
    if body is not None:
        opts: dict[str, Any] = dict(body)
        opts.pop("kind", None)
        opts.pop("apiVersion", None)
    else:
        opts = {}
        grace = int_param(query, "gracePeriodSeconds")
        if grace is not None:
            opts["gracePeriodSeconds"] = grace
        pp = first(query, "propagationPolicy")
        if pp:
            opts["propagationPolicy"] = pp
        orphan = bool_param(query, "orphanDependents")
        if orphan is not None:
            opts["orphanDependents"] = orphan
        if query.get("dryRun"):
            opts["dryRun"] = list(query["dryRun"])
    validate_delete_options(opts)
    return opts


def storage_serves_watch_options(store: Any) -> bool:
    """
    Whether C{store}'s storage serves bookmarks, watch-list and flow control itself (it
    provides L{IWatchCache}: the Cacher); otherwise the watch handler emulates them.
    """
    return IWatchCache.providedBy(getattr(store, "storage", None))


def field_validation_mode(request: Any) -> str:
    """The request's C{fieldValidation}: C{Strict}, C{Warn} (the default) or C{Ignore}.

    @raise StatusError: 422 Invalid C{CreateOptions}/C{UpdateOptions}/C{PatchOptions} for
        another value (upstream C{ValidateCreateOptions} and friends)."""
    q = getattr(context_of(request).request_info, "query", None) or {}
    mode = first(q, "fieldValidation", "")
    if mode in ("Strict", "Warn", "Ignore"):
        return mode
    if not mode:
        return "Warn"
    kind = {b"POST": "CreateOptions", b"PUT": "UpdateOptions"}.get(request.method, "PatchOptions")
    raise errors.new_invalid("meta.k8s.io", kind, "",
                             mv.validate_field_validation(Path("fieldValidation"), mode))
