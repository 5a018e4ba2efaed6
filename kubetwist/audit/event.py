# -*- test-case-name: tests.audit.test_event -*-
"""
Audit events: upstream C{k8s.io/apiserver/pkg/audit} (C{request.go} C{NewEventFromRequest},
C{LogRequestObject}, C{LogRequestPatch}, C{LogResponseObject}, C{context.go}
C{AddAuditAnnotation}, C{format.go} C{EventString}) over C{audit.k8s.io/v1 Event}.

An L{AuditContext} is the state of one audited request (C{request.kube_context.audit}): the
event's fixed fields, the annotations, the request and response objects the handlers logged.
L{AuditContext.stage_event} makes the C{Event} of one stage as a C{dict} in upstream's field
order; objects are C{orjson.Fragment}s of compact JSON, so L{encode_event} writes the line
without re-encoding them.  The module-level functions take the twisted.web request and do
nothing (one attribute lookup) when the request is not audited.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Optional

import orjson

from kubetwist.audit.policy import (
    METADATA,
    REQUEST,
    REQUEST_RESPONSE,
    RequestAuditConfig,
    at_least,
)
from kubetwist.runtime import codec

#: A logged response larger than this (bytes of JSON) is left out of the event (its
#: C{responseStatus} is kept), so a huge list cannot make one huge log line.
MAX_LOGGED_OBJECT_BYTES = 10 * 1024 * 1024


_SECOND: list = [None, ""]


def micro_time(seconds: float) -> str:
    """Upstream C{metav1.MicroTime} JSON: RFC 3339 in UTC with six fraction digits
    (C{2026-11-26T08:17:23.444748Z}); the date and time of the last second are reused."""
    micros = round(seconds * 1_000_000)
    whole, fraction = divmod(micros, 1_000_000)
    if _SECOND[0] != whole:
        dt = datetime.datetime.fromtimestamp(whole, datetime.timezone.utc)
        _SECOND[0], _SECOND[1] = whole, dt.strftime("%Y-%m-%dT%H:%M:%S.")
    return f"{_SECOND[1]}{fraction:06d}Z"


def user_dict(user: Any) -> dict:
    """Upstream C{authnv1.UserInfo} JSON of a L{UserInfo}: C{username}, C{uid}, C{groups},
    C{extra} (each left out when empty); C{None}: C{{}}."""
    if user is None:
        return {}
    out: dict = {}
    if user.name:
        out["username"] = user.name
    if getattr(user, "uid", ""):
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if getattr(user, "extra", None):
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def source_ips(request: Any) -> list[str]:
    """Upstream C{utilnet.SourceIPs}: the C{X-Forwarded-For} entries, C{X-Real-Ip}, then the
    peer address when it is not the last one already."""
    ips: list[str] = []
    fwd = request.getHeader(b"x-forwarded-for")
    if fwd:
        ips.extend(p.strip() for p in fwd.decode("latin-1").split(",") if p.strip())
    real = request.getHeader(b"x-real-ip")
    if real:
        r = real.decode("latin-1").strip()
        if r and (not ips or ips[-1] != r):
            ips.append(r)
    peer = getattr(request.getClientAddress(), "host", None)
    if peer and (not ips or ips[-1] != peer):
        ips.append(peer)
    return ips


def object_ref(info: Any) -> Optional[dict]:
    """Upstream's C{objectRef} from the request info (resource requests only), fields in
    upstream's order, empty ones left out."""
    if info is None or not info.is_resource_request:
        return None
    ref = {"resource": info.resource, "namespace": info.namespace, "name": info.name,
           "apiGroup": info.api_group, "apiVersion": info.api_version,
           "subresource": info.subresource}
    return {k: v for k, v in ref.items() if v}


_REF_ORDER = ("resource", "namespace", "name", "uid", "apiGroup", "apiVersion",
              "resourceVersion", "subresource")


def _strip_managed_fields(obj: Any) -> Any:
    """A copy of C{obj} (or of each list item) without C{metadata.managedFields}."""
    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    if isinstance(out.get("items"), list):
        out["items"] = [_strip_managed_fields(i) for i in out["items"]]
    return out


def _fragment(obj: Any, omit_managed_fields: bool) -> Optional[orjson.Fragment]:
    if omit_managed_fields:
        obj = _strip_managed_fields(obj)
    data = orjson.dumps(codec.go_order(obj))
    if len(data) > MAX_LOGGED_OBJECT_BYTES:
        return None
    return orjson.Fragment(data)


class AuditContext:
    """
    One audited request (upstream C{audit.AuditContext}).

    @ivar config: the policy's L{RequestAuditConfig} for the request.
    @ivar fields: the event's fields fixed at the start (C{level} ... C{objectRef}), in
        upstream's order.
    @ivar received_at: seconds since the epoch when the request was received.
    @ivar annotations: C{key -> value} audit annotations (authorization, admission).
    @ivar impersonated_user: the user the request acts as, when impersonating.
    @ivar response_status: the C{responseStatus} so far (C{code}; failures: the Status
        fields), or C{None}.
    """

    def __init__(self, config: RequestAuditConfig, fields: dict, received_at: float) -> None:
        self.config = config
        self.level = config.level
        self.fields = fields
        self.received_at = received_at
        self.annotations: dict[str, str] = {}
        self.impersonated_user: Any = None
        self.response_status: Optional[dict] = None
        self.request_object: Optional[orjson.Fragment] = None
        self.response_object: Optional[orjson.Fragment] = None
        self.received_text: Optional[str] = None

    def add_annotation(self, key: str, value: str) -> None:
        """Upstream C{AddAuditAnnotation}: the first value given for a key stays."""
        self.annotations.setdefault(key, value)

    def log_request_object(self, obj: Any, api_group: str = "", api_version: str = "",
                           resource: str = "", subresource: str = "") -> None:
        """
        Upstream C{LogRequestObject}: complete C{objectRef} from the object's metadata
        (namespace, name, uid, resourceVersion) and the resource; at C{Request} and above
        keep the object (C{requestObject}).
        """
        ref = self.fields.setdefault("objectRef", {})
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if isinstance(meta, dict):
            for key in ("namespace", "name", "uid", "resourceVersion"):
                if not ref.get(key) and meta.get(key):
                    ref[key] = meta[key]
        if not ref.get("apiVersion") and api_version:
            ref["apiGroup"], ref["apiVersion"] = api_group, api_version
        if not ref.get("resource") and resource:
            ref["resource"] = resource
        if not ref.get("subresource") and subresource:
            ref["subresource"] = subresource
        self.fields["objectRef"] = {k: ref[k] for k in _REF_ORDER if ref.get(k)}
        if at_least(self.level, REQUEST):
            self.request_object = _fragment(obj, self.config.omit_managed_fields)

    def log_request_patch(self, patch: bytes) -> None:
        """Upstream C{LogRequestPatch}: the patch as sent is the C{requestObject}
        (C{Request} and above); a YAML apply patch is logged as its JSON."""
        if not at_least(self.level, REQUEST):
            return
        try:
            obj = orjson.loads(patch)
        except orjson.JSONDecodeError:
            try:
                obj = codec.decode_body(patch, "application/yaml")
            except Exception:
                return
        self.request_object = orjson.Fragment(orjson.dumps(obj))

    def log_response_object(self, obj: Any) -> None:
        """
        Upstream C{LogResponseObject}: a C{Status} gives C{responseStatus} its C{status},
        C{message}, C{reason}, C{details} (C{Metadata} and above); at C{RequestResponse} the
        object is the C{responseObject}.
        """
        if isinstance(obj, dict) and obj.get("kind") == "Status":
            st: dict = {"metadata": {}}
            for key in ("status", "message", "reason", "details", "code"):
                if obj.get(key):
                    st[key] = obj[key]
            self.response_status = st
        if at_least(self.level, REQUEST_RESPONSE):
            self.response_object = _fragment(obj, self.config.omit_managed_fields)

    def set_response_code(self, code: int) -> None:
        """The HTTP status written (upstream C{processCode}: always the code sent)."""
        if self.response_status is None:
            self.response_status = {"metadata": {}}
        self.response_status["code"] = code

    def stage_event(self, stage: str, now: float) -> dict:
        """
        The C{audit.k8s.io/v1 Event} of C{stage}, in upstream's field order; the request and
        response objects, the response status and the annotations appear once known (none at
        C{RequestReceived}).
        """
        ev = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": self.level,
              "auditID": self.fields["auditID"], "stage": stage}
        f = self.fields
        ev["requestURI"] = f["requestURI"]
        ev["verb"] = f["verb"]
        ev["user"] = f["user"]
        if self.impersonated_user is not None:
            ev["impersonatedUser"] = user_dict(self.impersonated_user)
        ev["sourceIPs"] = f["sourceIPs"]
        if f.get("userAgent"):
            ev["userAgent"] = f["userAgent"]
        if f.get("objectRef") is not None:
            ev["objectRef"] = f["objectRef"]
        if self.response_status is not None:
            ev["responseStatus"] = dict(self.response_status)
        if self.request_object is not None:
            ev["requestObject"] = self.request_object
        if self.response_object is not None:
            ev["responseObject"] = self.response_object
        received = self.received_text
        if received is None:
            received = self.received_text = micro_time(self.received_at)
        ev["requestReceivedTimestamp"] = received
        ev["stageTimestamp"] = received if stage == "RequestReceived" else micro_time(now)
        if self.annotations:
            ev["annotations"] = dict(self.annotations)
        return ev


def new_context(config: RequestAuditConfig, request: Any, audit_id: str, user: Any, info: Any,
                received_at: float) -> AuditContext:
    """Upstream C{NewEventFromRequest}: the event's fixed fields of C{request}."""
    verb = info.verb if info is not None else request.method.decode("latin-1").lower()
    agent = request.getHeader(b"user-agent")
    fields = {
        "auditID": audit_id, "requestURI": request.uri.decode("latin-1"), "verb": verb,
        "user": user_dict(user), "sourceIPs": source_ips(request),
        "userAgent": agent.decode("latin-1") if agent else "",
    }
    ref = object_ref(info)
    if ref is not None:
        fields["objectRef"] = ref
    return AuditContext(config, fields, received_at)


#: what L{codec.go_escape} replaces (one search is cheaper than its five)
_GO_ESCAPED = re.compile(rb"[<>&]|\xe2\x80[\xa8\xa9]")


def encode_event(ev: dict) -> bytes:
    """One event as Go's encoder writes it: compact JSON, C{<>&} escaped, no newline."""
    data = orjson.dumps(ev)
    return codec.go_escape(data) if _GO_ESCAPED.search(data) else data


def _quote(s: str) -> str:
    from kubetwist.runtime import gofmt

    return gofmt.quote(s)


def event_string(ev: dict) -> str:
    """Upstream C{EventString}: the C{legacy} log format of one event."""
    user = ev.get("user") or {}
    username, groups = "<none>", "<none>"
    if user.get("username"):
        username = user["username"]
        if user.get("groups"):
            groups = ",".join(_quote(g) for g in user["groups"])
    asuser, asgroups = "<self>", "<lookup>"
    imp = ev.get("impersonatedUser")
    if imp is not None:
        asuser = imp.get("username", "")
        if imp.get("groups") is not None:
            asgroups = ",".join(_quote(g) for g in imp["groups"])
    namespace = (ev.get("objectRef") or {}).get("namespace") or "<none>"
    status = ev.get("responseStatus")
    response = str(status.get("code", 0)) if status is not None else "<deferred>"
    ips = ev.get("sourceIPs") or []
    ip = ips[0] if ips else "<unknown>"
    # Go's RFC3339Nano: the fraction without trailing zeros
    stamp, _, fraction = ev["requestReceivedTimestamp"].rstrip("Z").partition(".")
    fraction = fraction.rstrip("0")
    received = f"{stamp}.{fraction}Z" if fraction else f"{stamp}Z"
    return (f"{received} AUDIT: id={_quote(ev['auditID'])} stage={_quote(ev['stage'])} "
            f"ip={_quote(ip)} method={_quote(ev['verb'])} user={_quote(username)} "
            f"groups={_quote(groups)} as={_quote(asuser)} asgroups={_quote(asgroups)} "
            f"user-agent={_quote(ev.get('userAgent', ''))} namespace={_quote(namespace)} "
            f"uri={_quote(ev['requestURI'])} response=\"{response}\"")


# --- the hooks handlers call (no-ops when the request is not audited) --------------------------

def context_of(request: Any) -> Optional[AuditContext]:
    """The request's L{AuditContext}, or C{None} when it is not audited."""
    ctx = getattr(request, "__dict__", {}).get("kube_context")
    return getattr(ctx, "audit", None) if ctx is not None else None


def wants_response_object(request: Any) -> bool:
    """Whether the request's audit event records the response object (level
    C{RequestResponse}): a writer that skips L{log_response_object} must not then."""
    ac = context_of(request)
    return ac is not None and at_least(ac.level, REQUEST_RESPONSE)


def log_request_object(request: Any, obj: Any, api_group: str = "", api_version: str = "",
                       resource: str = "", subresource: str = "") -> None:
    """L{AuditContext.log_request_object} for C{request} (handlers call it right after
    decoding and defaulting the body)."""
    ac = context_of(request)
    if ac is not None:
        ac.log_request_object(obj, api_group, api_version, resource, subresource)


def log_request_patch(request: Any, patch: bytes) -> None:
    """L{AuditContext.log_request_patch} for C{request}."""
    ac = context_of(request)
    if ac is not None:
        ac.log_request_patch(patch)


def log_response_object(request: Any, obj: Any) -> None:
    """L{AuditContext.log_response_object} for C{request} (the response writers call it)."""
    ac = context_of(request)
    if ac is not None:
        ac.log_response_object(obj)


def add_annotation(request: Any, key: str, value: str) -> None:
    """Upstream C{audit.AddAuditAnnotation} for C{request} (C{Metadata} and above)."""
    ac = context_of(request)
    if ac is not None and at_least(ac.level, METADATA):
        ac.add_annotation(key, value)
