# -*- test-case-name: tests.admission.test_webhook -*-
"""
Calling admission webhooks: upstream C{k8s.io/apiserver/pkg/admission/plugin/webhook}
C{generic/webhook.go} (C{ShouldCallHook}, C{Dispatch}), C{mutating/dispatcher.go} (in
order, JSONPatch, reinvocation), C{validating/dispatcher.go} (all at once) and the REST
client's call (C{POST <url>?timeout=<n>s}, an C{AdmissionReview} both ways).

Transport failures are described as Go's HTTP client words them, inside upstream's
C{failed calling webhook "x": failed to call webhook: Post "<url>": ...}: C{dial tcp
<addr>: connect: connection refused}, C{context deadline exceeded},
C{tls: failed to verify certificate: x509: ...}.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Optional

from twisted.internet import defer
from twisted.internet import error as netError
from twisted.logger import Logger

from kubetwist.admission.plugins.webhook.matching import rule_matches
from kubetwist.admission.plugins.webhook.metrics import (
    APISERVER_INTERNAL_ERROR,
    CALLING_WEBHOOK_ERROR,
    NO_ERROR,
    WebhookMetrics,
)
from kubetwist.admission.plugins.webhook.review import (
    CallingWebhookError,
    WebhookRejection,
    create_review,
    dry_run_unsupported,
    request_fields,
    to_status_error,
    verify_response,
)
from kubetwist.admission.plugins.webhook.scheme import Scheme
from kubetwist.admission.plugins.webhook.source import WebhookAccessor
from kubetwist.runtime import errors

__all__ = ["Invocation", "Dispatcher"]

log = Logger()

#: Audit annotation prefixes (upstream C{PatchAuditAnnotationPrefix}, ...).
PATCH_PREFIX = "patch.webhook.admission.k8s.io/"
MUTATION_PREFIX = "mutation.webhook.admission.k8s.io/"
MUTATION_FAILED_OPEN_PREFIX = "failed-open." + MUTATION_PREFIX
VALIDATING_FAILED_OPEN_PREFIX = "failed-open.validating.webhook.admission.k8s.io/"

#: The reinvocation context's key (upstream stores it under the plugin's name).
_REINVOKE_KEY = "MutatingAdmissionWebhook"


class Invocation:
    """Upstream C{WebhookInvocation}: the webhook to call and the resource and kind it is
    sent (the request's, or an equivalent's)."""

    def __init__(self, hook: WebhookAccessor, gvr: tuple, gvk: tuple) -> None:
        self.hook = hook
        self.gvr = gvr
        self.gvk = gvk


def _go_url(client_config: dict, timeout: int) -> str:
    """The URL Go's client posts to (and names in its errors), with C{?timeout=}."""
    url = client_config.get("url")
    if not url:
        svc = client_config.get("service") or {}
        path = svc.get("path") or "/"
        if not path.startswith("/"):
            path = "/" + path
        url = (f"https://{svc.get('name', '')}.{svc.get('namespace', '')}.svc:"
               f"{svc.get('port') or 443}{path}")
    return _with_timeout(url, timeout)


def _with_timeout(url: str, timeout: int) -> str:
    """C{url} with upstream's C{timeout} query parameter (and a C{/} path when it has
    none)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    query = f"{parts.query}&timeout={timeout}s" if parts.query else f"timeout={timeout}s"
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, parts.fragment))


def _tls_text(failure_text: str, server_name: str) -> str:
    if "VerificationError" in failure_text or "DNSMismatch" in failure_text \
            or "IPAddressMismatch" in failure_text:
        return f"tls: failed to verify certificate: x509: certificate is not valid for " \
               f"{server_name}"
    if "certificate verify failed" in failure_text:
        return "tls: failed to verify certificate: x509: certificate signed by unknown " \
               "authority"
    return "remote error: tls: handshake failure"


def _transport_text(exc: BaseException, address: str, server_name: str) -> str:
    """What Go's transport says for C{exc} (after C{Post "<url>": })."""
    if isinstance(exc, (defer.TimeoutError, defer.CancelledError)):
        return "context deadline exceeded"
    if isinstance(exc, netError.ConnectionRefusedError):
        return f"dial tcp {address}: connect: connection refused"
    if isinstance(exc, (netError.TimeoutError, netError.ConnectingCancelledError)):
        return f"dial tcp {address}: i/o timeout"
    if isinstance(exc, netError.DNSLookupError):
        return f"dial tcp: lookup {address.rsplit(':', 1)[0]}: no such host"
    reasons = getattr(exc, "reasons", None)
    if reasons:
        text = " ".join(f"{r.type.__name__} {r.getErrorMessage()}" for r in reasons)
        if any(t in text for t in ("SSL", "ssl", "Verification", "certificate")):
            return _tls_text(text, server_name)
        if "ConnectionDone" in text or "ConnectionLost" in text:
            return "EOF"
    text = f"{type(exc).__name__} {exc}"
    if "SSL" in text or "Verification" in text:
        return _tls_text(text, server_name)
    return str(exc) or type(exc).__name__


async def _hostname_error(reactor: Any, host: str, port: int, server_name: str) -> str:
    """Go's C{x509.HostnameError} text for a server whose certificate does not carry
    C{server_name}: the certificate is fetched again, unverified, to name what it is valid
    for (C{x509: certificate is valid for a, b, not c})."""
    import ipaddress

    from cryptography import x509
    from twisted.internet import protocol, ssl
    from twisted.internet.endpoints import SSL4ClientEndpoint
    from twisted.internet.interfaces import IHandshakeListener
    from zope.interface import implementer

    @implementer(IHandshakeListener)
    class Grab(protocol.Protocol):
        def __init__(self) -> None:
            self.done: defer.Deferred = defer.Deferred()

        def handshakeCompleted(self) -> None:  # noqa: N802 (Twisted's name)
            cert = self.transport.getPeerCertificate()
            self.transport.abortConnection()
            if not self.done.called:
                self.done.callback(cert)

        def connectionLost(self, reason: Any = None) -> None:  # noqa: N802
            if not self.done.called:
                self.done.callback(None)

    generic = f"x509: certificate is not valid for any names, but wanted to match {server_name}"
    try:
        endpoint = SSL4ClientEndpoint(reactor, host, port, ssl.CertificateOptions(verify=False),
                                      timeout=5)
        proto = await endpoint.connect(protocol.Factory.forProtocol(Grab))
        d = proto.done
        d.addTimeout(5, reactor)
        cert = await d
        if cert is None:
            return generic
        cert = cert.to_cryptography()
        try:
            san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return "x509: certificate relies on legacy Common Name field, use SANs instead"
    except Exception:
        return generic
    try:
        ipaddress.ip_address(server_name)
        ips = [str(i) for i in san.get_values_for_type(x509.IPAddress)]
        if not ips:
            return (f"x509: cannot validate certificate for {server_name} because it doesn't "
                    "contain any IP SANs")
        valid = ", ".join(ips)
    except ValueError:
        valid = ", ".join(san.get_values_for_type(x509.DNSName))
    if not valid:
        return generic
    return f"x509: certificate is valid for {valid}, not {server_name}"


_GENERIC = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    410: "the server has asked for the client to provide credentials",
    413: "the server has rejected the request because the request entity is too large",
    415: "the server responded with the status code 415 but did not return more information",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be "
         "processing the request",
}


def _response_error(code: int, body: bytes) -> errors.StatusError:
    """client-go's error for a non-2xx answer: the body's C{Status} when it is one, else
    upstream C{NewGenericServerResponse}."""
    try:
        obj = json.loads(body)
    except ValueError:
        obj = None
    if isinstance(obj, dict) and obj.get("kind") == "Status" and obj.get("status") == "Failure":
        status = dict(obj)
        status.setdefault("code", code)
        return errors.StatusError(status)
    message = _GENERIC.get(code)
    if message is None:
        text = body.decode("utf-8", "replace").strip()
        message = f'an error on the server ("{text}") has prevented the request from ' \
                  "succeeding"
    return errors.make_status(code, "InternalError" if code >= 500 else "BadRequest", message)


_TYPE_META_STRUCT = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
                     '"json:\\"kind,omitempty\\"" }')


def _json_error(body: bytes) -> str:
    """client-go's error for an answer that is not a JSON object (the decoder reads YAML too,
    so most garbage is a YAML string): C{json: cannot unmarshal string into Go value of type
    struct { APIVersion ...; Kind ... }}."""
    import yaml

    try:
        value = yaml.safe_load(body)
    except yaml.YAMLError as e:
        return f"error converting YAML to JSON: yaml: {str(e).splitlines()[0]}"
    kind = ("bool" if isinstance(value, bool) else "number" if isinstance(value, (int, float))
            else "array" if isinstance(value, list) else "object" if isinstance(value, dict)
            else "string")
    return f"json: cannot unmarshal {kind} into Go value of type {_TYPE_META_STRUCT}"


class Dispatcher:
    """
    The shared machinery of both plugins (upstream C{generic.Webhook}).

    @param clients: an L{EgressClients <kubetwist.egress.client.EgressClients>} (or a test
        double with C{async for_config(clientConfig) -> (endpoint, treq client)}).
    @param clock: C{IReactorTime} for timeouts and durations.
    @param scheme: the L{Scheme} (equivalents, conversion, defaulting).
    @param namespace_labels: C{async (name) -> labels dict}, raising a 404 StatusError for a
        namespace that does not exist.
    @param metrics: the L{WebhookMetrics}.
    """

    def __init__(self, clients: Any, clock: Any, scheme: Scheme, namespace_labels: Any,
                 metrics: WebhookMetrics) -> None:
        self.clients = clients
        self.clock = clock
        self.scheme = scheme
        self.namespace_labels = namespace_labels
        self.metrics = metrics

    # --- matching ------------------------------------------------------------------------------
    @staticmethod
    def namespace_of(a: Any) -> str:
        """The request's namespace as upstream's attributes carry it (a namespace's own name
        for requests on a named namespace: upstream's request info reads it from the path)."""
        if not a.namespace and a.resource.group == "" and a.resource.resource == "namespaces" \
                and a.operation != "CREATE":
            return a.name
        return a.namespace

    async def _namespace_matches(self, hook: WebhookAccessor, a: Any) -> bool:
        namespace = self.namespace_of(a)
        if not namespace and a.resource.resource != "namespaces":
            return True
        if hook.namespace_selector.empty():
            return True
        if a.resource.resource == "namespaces" and not a.subresource and \
                a.operation in ("CREATE", "UPDATE"):
            labels = ((a.object or {}).get("metadata") or {}).get("labels") or {}
        else:
            labels = await self.namespace_labels(namespace)
        return hook.namespace_selector.matches(labels)

    @staticmethod
    def _object_matches(hook: WebhookAccessor, a: Any, obj: Optional[dict]) -> bool:
        sel = hook.object_selector
        if sel.empty():
            return True
        for o in (obj, a.old_object):
            if isinstance(o, dict) and sel.matches((o.get("metadata") or {}).get("labels")):
                return True
        return False

    async def should_call(self, hook: WebhookAccessor, a: Any, obj: Optional[dict],
                          versions: Any) -> Optional[Invocation]:
        """
        Upstream C{ShouldCallHook}: the invocation, or C{None} when the webhook does not
        apply.

        @raise StatusError: 404 for a namespace that does not exist; 403 when a match
            condition fails to evaluate under C{failurePolicy: Fail}.
        """
        ns_error: Optional[errors.StatusError] = None
        try:
            ns_ok = await self._namespace_matches(hook, a)
        except errors.StatusError as e:
            ns_ok, ns_error = True, e
        if not ns_ok:
            return None
        if not self._object_matches(hook, a, obj):
            return None
        namespace = self.namespace_of(a)
        gvr = tuple(a.resource)
        invocation = None
        for rule in hook.rules:
            if rule_matches(rule, a.operation, gvr, a.subresource, namespace):
                invocation = Invocation(hook, gvr, tuple(a.kind))
                break
        if invocation is None and hook.equivalent:
            equivalents = [e for e in self.scheme.equivalents(gvr, a.subresource)
                           if e[0] != gvr]
            for rule in hook.rules:
                for egvr, egvk in equivalents:
                    if rule_matches(rule, a.operation, egvr, a.subresource, namespace):
                        # a subresource of another kind (Scale) keeps it in every version
                        own_kind = a.spec is None or a.kind.kind == a.spec.kind
                        invocation = Invocation(hook, egvr, egvk if own_kind else tuple(a.kind))
                        break
                if invocation is not None:
                    break
        if invocation is None:
            return None
        if ns_error is not None:
            raise ns_error
        conditions = hook.match_conditions()
        if conditions is not None:
            vobj, vold = await versions(invocation)
            activation = {
                "object": vobj if a.operation != "DELETE" else None,
                "oldObject": vold,
                "request": request_fields(a, invocation.gvk, invocation.gvr, None, None),
                "namespaceObject": None,
            }
            ok, problem = conditions.match(activation)
            if problem:
                raise errors.new_forbidden(a.resource.group, a.resource.resource, a.name,
                                           problem)
            if not ok:
                return None
        return invocation

    # --- calling -------------------------------------------------------------------------------
    async def call(self, inv: Invocation, a: Any, obj: Optional[dict],
                   old: Optional[dict]) -> dict:
        """
        Send one C{AdmissionReview} and verify the answer.

        @return: the verified response (see L{verify_response}).
        @raise CallingWebhookError: the webhook could not be asked, or answered nonsense.
        @raise StatusError: 400 for a dry run to a webhook with side effects.
        """
        hook = inv.hook
        if a.dry_run:
            if hook.side_effects is None:
                raise CallingWebhookError(hook.name, "Webhook SideEffects is nil",
                                          errors.new_bad_request("Webhook SideEffects is nil"))
            if hook.side_effects not in ("None", "NoneOnDryRun"):
                raise dry_run_unsupported(hook.name)
        try:
            uid, version, review = create_review(
                hook.review_versions, a, inv.gvk, inv.gvr,
                obj if a.operation != "DELETE" else None, old)
        except ValueError as e:
            raise CallingWebhookError(
                hook.name, f"could not create admission objects: {e}",
                errors.new_bad_request("error creating admission objects")) from None
        go_url = _go_url(hook.client_config, hook.timeout)
        try:
            endpoint, client = await self.clients.for_config(hook.client_config)
        except errors.StatusError as e:
            message = e.message
            if e.code == 404 and message.startswith('services "'):
                # upstream's resolver reads a Service lister: its NotFound names "service"
                message = "service " + message[len("services "):]
            raise CallingWebhookError(hook.name, f'failed to call webhook: Post "{go_url}": '
                                      f"{message}", e) from None
        except Exception as e:
            raise CallingWebhookError(
                hook.name, f"could not get REST client: {e}",
                errors.new_bad_request("error getting REST client")) from None
        from urllib.parse import urlsplit

        parts = urlsplit(endpoint.url)
        address = parts.netloc if parts.port else f"{parts.netloc}:443"
        body = json.dumps(review, separators=(",", ":")).encode()

        async def post() -> tuple[int, bytes]:
            response = await client.post(
                _with_timeout(endpoint.url, hook.timeout), data=body,
                headers={b"Content-Type": [b"application/json"],
                         b"Accept": [b"application/json, */*"]})
            return response.code, await response.content()

        d = defer.Deferred.fromCoroutine(post())
        timed_out = []

        def expire() -> None:
            timed_out.append(True)
            d.cancel()

        timer = self.clock.callLater(hook.timeout, expire)
        try:
            code, content = await d
        except Exception as e:
            if timed_out:
                reason = "context deadline exceeded"
            else:
                reason = _transport_text(e, address, endpoint.server_name)
                if reason.startswith("tls: failed to verify certificate: x509: certificate "
                                     "is not valid for"):
                    reason = "tls: failed to verify certificate: " + await _hostname_error(
                        self.clock, parts.hostname or "", parts.port or 443,
                        endpoint.server_name)
            raise CallingWebhookError(hook.name, f'failed to call webhook: Post "{go_url}": '
                                      f"{reason}",
                                      errors.new_bad_request("error calling webhook")) from None
        finally:
            if timer.active():
                timer.cancel()
        if not 200 <= code < 300:
            status = _response_error(code, content)
            raise CallingWebhookError(hook.name, f"failed to call webhook: {status.message}",
                                      status)
        try:
            answer = json.loads(content)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise CallingWebhookError(
                hook.name, "failed to call webhook: couldn't get version/kind; json parse "
                f"error: {_json_error(content)}",
                errors.new_bad_request("error calling webhook")) from None
        try:
            return verify_response(uid, version, hook.mutating, answer)
        except ValueError as e:
            raise CallingWebhookError(
                hook.name, f"received invalid webhook response: {e}",
                errors.new_service_unavailable("error validating webhook response")) from None

    def record(self, a: Any, result: dict, hook: WebhookAccessor) -> None:
        """The response's audit annotations (C{<webhook>/<key>}) and warnings."""
        for k, v in result["auditAnnotations"].items():
            a.add_annotation(f"{hook.name}/{k}", v)
        add_warning = getattr(a, "add_warning", None)
        if add_warning is not None:
            for w in result["warnings"]:
                add_warning(w)

    def observe(self, hook: WebhookAccessor, a: Any, started: float,
                err: Optional[BaseException]) -> bool:
        """Upstream's metrics of one call; whether the request is refused by it."""
        step, op = hook.step, a.operation
        seconds = self.clock.seconds() - started
        if err is None:
            self.metrics.observe_webhook(hook.name, seconds, False, op, step, 200)
            return False
        if isinstance(err, CallingWebhookError):
            rejected = hook.fail_closed
            if rejected:
                self.metrics.observe_rejection(hook.name, step, op, CALLING_WEBHOOK_ERROR,
                                               err.status.code)
            self.metrics.observe_webhook(hook.name, seconds, rejected, op, step,
                                         err.status.code)
            return rejected
        if isinstance(err, WebhookRejection):
            self.metrics.observe_rejection(hook.name, step, op, NO_ERROR, err.status.code)
            self.metrics.observe_webhook(hook.name, seconds, True, op, step, err.status.code)
            return True
        self.metrics.observe_rejection(hook.name, step, op, APISERVER_INTERNAL_ERROR, 0)
        self.metrics.observe_webhook(hook.name, seconds, True, op, step, 0)
        return True


class _Versions:
    """Upstream C{versionedAttributeAccessor}: the object and old object in the version a
    webhook is sent, converted once per version."""

    def __init__(self, scheme: Scheme, a: Any) -> None:
        self.scheme = scheme
        self.a = a
        self.request_gvr = tuple(a.resource)
        self.cache: dict[tuple, tuple[Optional[dict], Optional[dict]]] = {}

    async def __call__(self, inv: Invocation) -> tuple[Optional[dict], Optional[dict]]:
        key = inv.gvr
        found = self.cache.get(key)
        if found is None:
            obj = await self.scheme.convert(self.a.object, self.request_gvr, key)
            old = await self.scheme.convert(self.a.old_object, self.request_gvr, key)
            found = (obj, old)
            self.cache[key] = found
        return found


# --- validating -----------------------------------------------------------------------------


async def validate(dispatcher: Dispatcher, hooks: list, a: Any) -> None:
    """
    Upstream C{validatingDispatcher.Dispatch}: every matching webhook called at once; the
    first refusal (in webhook order) is the request's error.

    @raise StatusError: the webhook's refusal (its C{status}, message prefixed), 500
        C{Internal error occurred: failed calling webhook "x": ...} when a C{Fail} webhook
        cannot be asked, 400 for a dry run with side effects, 403/404 from matching.
    """
    versions = _Versions(dispatcher.scheme, a)
    invocations = []
    for hook in hooks:
        inv = await dispatcher.should_call(hook, a, a.object, versions)
        if inv is not None:
            invocations.append(inv)
    if not invocations:
        return

    async def one(idx: int, inv: Invocation) -> Optional[BaseException]:
        hook = inv.hook
        started = dispatcher.clock.seconds()
        err: Optional[BaseException] = None
        try:
            obj, old = await versions(inv)
            result = await dispatcher.call(inv, a, obj, old)
            dispatcher.record(a, result, hook)
            if not result["allowed"]:
                err = WebhookRejection(to_status_error(hook.name, result["status"]))
        except (CallingWebhookError, errors.StatusError) as e:
            err = e
        except Exception as e:  # upstream's recovered panic
            log.failure("validating webhook {name} failed", name=hook.name)
            err = errors.new_internal_error(f"ValidatingAdmissionWebhook/{hook.name} has "
                                            f"panicked: {e}")
        rejected = dispatcher.observe(hook, a, started, err)
        if err is None:
            return None
        if isinstance(err, CallingWebhookError):
            if not rejected:
                log.warn("Failed calling webhook, failing open {name}: {err}", name=hook.name,
                         err=str(err))
                dispatcher.metrics.observe_fail_open(hook.name, "validating")
                a.add_annotation(f"{VALIDATING_FAILED_OPEN_PREFIX}round_0_index_{idx}",
                                 hook.name)
                return None
            return errors.new_internal_error(str(err))
        if isinstance(err, WebhookRejection):
            return err.status
        return err

    results = await defer.gatherResults(
        [defer.Deferred.fromCoroutine(one(i, inv)) for i, inv in enumerate(invocations)])
    for r in results:
        if r is not None:
            raise r


# --- mutating -------------------------------------------------------------------------------


class _ReinvokeState:
    """Upstream C{webhookReinvokeContext}."""

    def __init__(self) -> None:
        self.last_output: Any = None
        self.previously_invoked: set[str] = set()
        self.reinvoke: set[str] = set()

    def require_reinvoking(self) -> None:
        self.reinvoke |= self.previously_invoked
        self.previously_invoked = set()


def _reinvocation(a: Any) -> tuple[Any, _ReinvokeState]:
    ctx = getattr(a, "reinvocation", None)
    if ctx is None:
        from kubetwist.admission.interfaces import ReinvocationContext

        ctx = ReinvocationContext()
        a.reinvocation = ctx
    state = ctx.values.get(_REINVOKE_KEY)
    if state is None:
        state = _ReinvokeState()
        ctx.values[_REINVOKE_KEY] = state
    return ctx, state


def _apply_patch(hook: WebhookAccessor, obj: dict, patch: bytes, gvk: tuple) -> dict:
    """Apply a JSONPatch answer and decode the result as the kind's type (upstream decodes
    it into the versioned Go type: a type mismatch is a 500, unknown fields are dropped).

    @raise StatusError: 500 InternalError."""
    from kubetwist.apimachinery.patch import JSONPatchError, apply_json_patch_ops

    try:
        ops = json.loads(patch)
    except ValueError as e:
        raise errors.new_internal_error(str(e)) from None
    if not isinstance(ops, list):
        raise errors.new_internal_error(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if not ops:
        return obj
    try:
        patched = apply_json_patch_ops(obj, ops)
    except JSONPatchError as e:
        raise errors.new_internal_error(str(e)) from None
    if not isinstance(patched, dict):
        raise errors.new_internal_error("couldn't get version/kind; json parse error: "
                                        "json: cannot unmarshal array into Go value of type "
                                        "struct { APIVersion string \"json:\\\"apiVersion,"
                                        "omitempty\\\"\"; Kind string \"json:\\\"kind,"
                                        "omitempty\\\"\" }")
    from kubetwist.runtime import typed
    from kubetwist.runtime.strict import prune_unknown
    from kubetwist.runtime.types import lookup_kind

    type_name = lookup_kind(gvk[0], gvk[1], gvk[2])
    if type_name is not None:
        problem = typed.check(patched, type_name)
        if problem:
            raise errors.new_internal_error(problem)
        prune_unknown(patched, type_name)
    return patched


async def admit(dispatcher: Dispatcher, hooks: list, a: Any) -> None:
    """
    Upstream C{mutatingDispatcher.Dispatch}: matching webhooks called one after the other,
    each answer's JSONPatch applied to the object (in the webhook's version, converted back
    at the end) and defaulted; a webhook with C{reinvocationPolicy: IfNeeded} is called once
    more (in the chain's second round) when a later webhook or plugin changed the object.

    @raise StatusError: as L{validate}, and 500 for a patch that does not apply or does not
        decode as the kind.
    """
    ctx, state = _reinvocation(a)
    if ctx.is_reinvoke and a.object != state.last_output:
        state.require_reinvoking()
    try:
        await _admit_round(dispatcher, hooks, a, ctx, state)
    finally:
        state.last_output = copy.deepcopy(a.object)


async def _admit_round(dispatcher: Dispatcher, hooks: list, a: Any, ctx: Any,
                       state: _ReinvokeState) -> None:
    request_gvr = tuple(a.resource)
    current_gvr = request_gvr
    current = a.object
    dirty = False
    round_ = 1 if ctx.is_reinvoke else 0
    old_cache: dict[tuple, Optional[dict]] = {request_gvr: a.old_object}

    async def versions(inv: Invocation) -> tuple[Optional[dict], Optional[dict]]:
        nonlocal current, current_gvr
        if inv.gvr != current_gvr:
            current = await dispatcher.scheme.convert(current, current_gvr, inv.gvr)
            current_gvr = inv.gvr
        if inv.gvr not in old_cache:
            old_cache[inv.gvr] = await dispatcher.scheme.convert(a.old_object, request_gvr,
                                                                 inv.gvr)
        return current, old_cache[inv.gvr]

    for idx, hook in enumerate(hooks):
        inv = await dispatcher.should_call(hook, a, current, versions)
        if inv is None:
            continue
        if ctx.is_reinvoke and hook.uid not in state.reinvoke:
            continue
        obj, old = await versions(inv)
        started = dispatcher.clock.seconds()
        err: Optional[BaseException] = None
        changed = False
        try:
            result = await dispatcher.call(inv, a, obj, old)
            dispatcher.record(a, result, hook)
            if not result["allowed"]:
                raise WebhookRejection(to_status_error(hook.name, result["status"]))
            patch = result["patch"]
            if patch:
                if a.operation == "DELETE" or obj is None:
                    raise errors.new_internal_error(
                        f'admission webhook "{hook.name}" attempted to modify the object, '
                        "which is not supported for this operation")
                if result["patchType"] != "JSONPatch":
                    raise CallingWebhookError(
                        hook.name, f'unsupported patch type "{result["patchType"]}"',
                        to_status_error(hook.name, result["status"]))
                patched = _apply_patch(hook, obj, patch, inv.gvk)
                if patched is not obj:
                    changed = patched != obj
                    dispatcher.scheme.prune(inv.gvr, patched)
                    dispatcher.scheme.default(inv.gvr, patched)
                    current = patched
                    dirty = True
                    a.add_annotation(f"{PATCH_PREFIX}round_{round_}_index_{idx}", json.dumps({
                        "configuration": hook.configuration, "webhook": hook.name,
                        "patch": json.loads(patch), "patchType": "JSONPatch"},
                        separators=(",", ":")))
        except (CallingWebhookError, WebhookRejection, errors.StatusError) as e:
            err = e
        a.add_annotation(f"{MUTATION_PREFIX}round_{round_}_index_{idx}", json.dumps({
            "configuration": hook.configuration, "webhook": hook.name, "mutated": changed},
            separators=(",", ":")))
        rejected = dispatcher.observe(hook, a, started, err)
        if changed:
            state.require_reinvoking()
            ctx.should_reinvoke = True
        if hook.reinvoke:
            state.previously_invoked.add(hook.uid)
        if err is None:
            continue
        if isinstance(err, CallingWebhookError):
            if not rejected:
                log.warn("Failed calling webhook, failing open {name}: {err}", name=hook.name,
                         err=str(err))
                dispatcher.metrics.observe_fail_open(hook.name, "admit")
                a.add_annotation(f"{MUTATION_FAILED_OPEN_PREFIX}round_{round_}_index_{idx}",
                                 hook.name)
                continue
            raise errors.new_internal_error(str(err))
        if isinstance(err, WebhookRejection):
            raise err.status
        raise err
    if dirty:
        out = await dispatcher.scheme.convert(current, current_gvr, request_gvr)
        if out is not a.object:
            a.object.clear()
            a.object.update(out)
