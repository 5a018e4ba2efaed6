# -*- test-case-name: tests.authorization.test_webhook -*-
"""
The C{Webhook} authorization mode: upstream C{k8s.io/apiserver/plugin/pkg/authorizer/webhook}
(C{webhook.go}), its retry helper C{pkg/util/webhook} (C{WithExponentialBackoff},
C{DefaultShouldRetry}, C{DefaultRetryBackoffWithInitialDelay}) and the webhook's CEL match
conditions (C{pkg/authorization/cel}).

Each decision POSTs a C{SubjectAccessReview} (C{authorization.k8s.io/v1} or C{v1beta1}) to the
URL of a kubeconfig file's current cluster, over TLS with the cluster's CA and the user's client
certificate.  The answer maps as upstream: C{status.allowed} -> ALLOW, C{status.denied} ->
DENY (both: DENY with an error), neither -> NO_OPINION, the webhook's C{reason} kept.  Answers
are cached by the request's spec (allowed for C{authorized_ttl}, others for
C{unauthorized_ttl}, at most 8192 entries).  A failed call (transport error, timeout, an
answer that is not a SubjectAccessReview, a non-2xx status) is retried with upstream's backoff
(0.5s, factor 1.5, jitter 0.2, 5 attempts) when upstream retries it (500, 504, 429, a reset
connection, a C{Retry-After}) and ends in the configured decision on error (NO_OPINION for
the legacy flags) with the error text, which the authorization filter turns into a 500.
"""

from __future__ import annotations

import base64
import json
import random
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

import yaml
from twisted.internet import defer
from twisted.internet import error as internet_error
from twisted.internet.interfaces import IOpenSSLClientConnectionCreator
from twisted.logger import Logger
from twisted.web.iweb import IPolicyForHTTPS
from zope.interface import implementer

from kubetwist.authorization.authorizer import (
    ALLOW,
    DENY,
    NO_OPINION,
    Attributes,
    IAuthorizer,
    IRuleResolver,
)

__all__ = [
    "WebhookAuthorizer", "WebhookTarget", "WebhookError", "load_webhook_kubeconfig",
    "CELMatcher", "compile_match_conditions", "review_spec", "http_client_for",
    "DEFAULT_RETRY_BACKOFF",
]

log = Logger()

#: Upstream C{maxControlledAttrCacheSize}: requests with larger attributes are not cached.
MAX_CONTROLLED_ATTR_CACHE_SIZE = 10000
#: Upstream C{cache.NewLRUExpireCache(8192)}.
CACHE_SIZE = 8192
#: Upstream C{DefaultRetryBackoffWithInitialDelay(500ms)}: C{(duration, factor, jitter, steps)}.
DEFAULT_RETRY_BACKOFF = (0.5, 1.5, 0.2, 5)
#: The legacy flags' webhook timeout (upstream's default C{WebhookConfiguration.Timeout}).
DEFAULT_TIMEOUT = 30.0

_MAX_UNSTRUCTURED_TEXT = 2048


class WebhookError(Exception):
    """
    A failed webhook call; C{str()} is upstream's error text.

    @ivar retry: whether upstream's C{DefaultShouldRetry} retries it.
    """

    def __init__(self, message: str, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


@dataclass
class WebhookTarget:
    """
    Where and how to call a webhook, from a kubeconfig file (upstream C{rest.Config}).

    @ivar server: the URL the review is POSTed to (its path is used as is).
    @ivar ca_pem: PEM of the certificate authorities trusted for the server, or C{None} for
        the platform's.
    @ivar cert_pem: the client certificate (PEM) or C{None}; C{key_pem} its private key.
    @ivar token: a bearer token sent as C{Authorization}, or C{""}.
    """

    server: str
    ca_pem: Optional[bytes] = None
    cert_pem: Optional[bytes] = None
    key_pem: Optional[bytes] = None
    token: str = ""
    insecure: bool = False


def _read(path: str, base: str) -> bytes:
    import os

    if not os.path.isabs(path):
        path = os.path.join(base, path)
    with open(path, "rb") as f:
        return f.read()


def load_webhook_kubeconfig(path: str) -> WebhookTarget:
    """
    Upstream C{clientcmd} loading of a webhook kubeconfig: the current context's cluster
    (C{server}, C{certificate-authority[-data]}, C{insecure-skip-tls-verify}) and user
    (C{client-certificate[-data]}, C{client-key[-data]}, C{token}, C{tokenFile}); relative file
    names are relative to the kubeconfig's folder.  Without a current context, the first
    cluster and user are used (what a one-cluster webhook kubeconfig means).

    @raise ValueError: upstream's text (C{stat <path>: no such file or directory},
        C{error loading config file "<path>": ...}, C{invalid configuration: ...}).
    """
    import os

    if not os.path.exists(path):
        raise ValueError(f"stat {path}: no such file or directory")
    from kubetwist.authorization.options import yaml_error

    try:
        with open(path, "rb") as f:
            data = f.read()
        if data.lstrip().startswith(b"{"):
            # JSON: upstream's decoder reads the first object and ignores what follows
            try:
                doc, _ = json.JSONDecoder().raw_decode(data.decode("utf-8", "replace").lstrip())
            except ValueError:
                doc = yaml.safe_load(data)
        else:
            doc = yaml.safe_load(data)
    except OSError as e:
        raise ValueError(f'error loading config file "{path}": read {path}: '
                         f"{(e.strerror or str(e)).lower()}") from None
    except yaml.YAMLError as e:
        raise ValueError(f'error loading config file "{path}": {yaml_error(e, data)}') from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ValueError(f'error loading config file "{path}": couldn\'t get version/kind; json '
                         "parse error: json: cannot unmarshal array into Go value of type "
                         'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind '
                         'string "json:\\"kind,omitempty\\"" }')
    api_version, kind = doc.get("apiVersion") or "", doc.get("kind") or ""
    if (api_version or kind) and (api_version, kind) not in (("v1", "Config"), ("", "Config"),
                                                             ("v1", "")):
        raise ValueError(f'error loading config file "{path}": no kind "{kind}" is registered '
                         f'for version "{api_version}" in scheme '
                         '"k8s.io/client-go/tools/clientcmd/api/latest/latest.go:50"')

    def named(section: str) -> dict:
        return {e.get("name"): e.get(section[:-1]) or {} for e in doc.get(section) or []
                if isinstance(e, dict)}

    clusters, users = named("clusters"), named("users")
    contexts = named("contexts")
    context = contexts.get(doc.get("current-context") or "") or {}
    cluster_name = context.get("cluster") or next(iter(clusters), None)
    user_name = context.get("user") or next(iter(users), None)
    cluster = clusters.get(cluster_name) or {}
    user = users.get(user_name) or {}
    server = cluster.get("server") or ""
    if not server:
        raise ValueError("invalid configuration: no configuration has been provided, try "
                         "setting KUBERNETES_MASTER environment variable")
    base = os.path.dirname(os.path.abspath(path))
    try:
        target = WebhookTarget(server=server,
                               insecure=bool(cluster.get("insecure-skip-tls-verify")))
        if cluster.get("certificate-authority-data"):
            target.ca_pem = base64.b64decode(cluster["certificate-authority-data"])
        elif cluster.get("certificate-authority"):
            target.ca_pem = _read(cluster["certificate-authority"], base)
        if user.get("client-certificate-data"):
            target.cert_pem = base64.b64decode(user["client-certificate-data"])
        elif user.get("client-certificate"):
            target.cert_pem = _read(user["client-certificate"], base)
        if user.get("client-key-data"):
            target.key_pem = base64.b64decode(user["client-key-data"])
        elif user.get("client-key"):
            target.key_pem = _read(user["client-key"], base)
        if user.get("token"):
            target.token = str(user["token"])
        elif user.get("tokenFile"):
            target.token = _read(user["tokenFile"], base).decode().strip()
    except FileNotFoundError as e:
        raise ValueError(f"invalid configuration: unable to read {e.filename}: open "
                         f"{e.filename}: no such file or directory") from None
    except (OSError, ValueError) as e:
        raise ValueError(f'error loading config file "{path}": {e}') from None
    return target


def tls_policy_for(target: WebhookTarget) -> Any:
    """
    The C{IPolicyForHTTPS} of C{target}: the server verified against its CA (or the
    platform's) and its name, the client certificate presented; with
    C{insecure-skip-tls-verify}, no verification (upstream's C{Insecure}).

    @raise ValueError: a certificate or key that is not PEM, or a CA with the insecure flag
        (upstream's texts).
    """
    from twisted.internet import ssl

    from kubetwist.storage.etcd3.client import EtcdTLSPolicy

    if target.insecure and target.ca_pem:
        raise ValueError("specifying a root certificates file with the insecure flag is not "
                         "allowed")
    trust_root = None
    if target.ca_pem:
        pems = [b"-----BEGIN CERTIFICATE-----" + chunk for chunk in
                target.ca_pem.split(b"-----BEGIN CERTIFICATE-----")[1:]]
        try:
            if not pems:
                raise ValueError("no certificates")
            trust_root = ssl.trustRootFromCertificates([ssl.Certificate.loadPEM(p) for p in pems])
        except Exception:  # noqa: BLE001 -- OpenSSL raises its own error types
            raise ValueError("unable to load root certificates: unable to parse bytes as "
                             "PEM block") from None
    client_certificate = None
    if target.cert_pem:
        try:
            client_certificate = ssl.PrivateCertificate.loadPEM(
                target.cert_pem + b"\n" + (target.key_pem or b""))
        except Exception:  # noqa: BLE001
            raise ValueError("tls: failed to find any PEM data in key input") from None
    if target.insecure:
        return _InsecurePolicy(client_certificate)
    return EtcdTLSPolicy(trust_root, client_certificate)


@implementer(IPolicyForHTTPS)
class _InsecurePolicy:
    """TLS without verifying the server (C{insecure-skip-tls-verify: true})."""

    def __init__(self, client_certificate: Any) -> None:
        from twisted.internet import ssl

        kwargs: dict[str, Any] = {"verify": False}
        if client_certificate is not None:
            kwargs["privateKey"] = client_certificate.privateKey.original
            kwargs["certificate"] = client_certificate.original
        self.options = ssl.CertificateOptions(**kwargs)

    def creatorForNetloc(self, hostname: bytes, port: int) -> Any:
        return _InsecureCreator(self.options.getContext(), hostname)


@implementer(IOpenSSLClientConnectionCreator)
class _InsecureCreator:
    def __init__(self, context: Any, hostname: bytes) -> None:
        self.context = context
        self.hostname = hostname

    def clientConnectionForTLS(self, protocol: Any) -> Any:
        from OpenSSL import SSL

        connection = SSL.Connection(self.context, None)
        connection.set_app_data(protocol)
        connection.set_connect_state()
        connection.set_tlsext_host_name(self.hostname)
        return connection


def http_client_for(reactor: Any, target: WebhookTarget) -> Any:
    """
    A treq C{HTTPClient} for C{target} with L{tls_policy_for} and its own connection pool.

    @raise ValueError: see L{tls_policy_for}.
    """
    from treq.client import HTTPClient
    from twisted.web.client import Agent, HTTPConnectionPool

    policy = tls_policy_for(target)
    pool = HTTPConnectionPool(reactor, persistent=True)
    return HTTPClient(Agent(reactor, contextFactory=policy, pool=pool))


# --- the SubjectAccessReview ------------------------------------------------------------------


def _selector_requirements(raw: str) -> list[dict]:
    """Upstream C{fieldSelectorToAuthorizationAPI} over a raw field selector (C{a=b,c!=d})."""
    out: list[dict] = []
    for part in (raw or "").split(","):
        part = part.strip()
        if not part:
            continue
        m = re.match(r"^([^=!]+)(!=|==|=)(.*)$", part)
        if not m:
            continue
        key, op, value = m.group(1).strip(), m.group(2), m.group(3).strip()
        out.append({"key": key, "operator": "NotIn" if op == "!=" else "In", "values": [value]})
    return out


def _split_top(raw: str) -> list[str]:
    """Split a selector on the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in raw:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth <= 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


_SET_REQ = re.compile(r"^([^\s!=<>()]+)\s+(in|notin)\s*\((.*)\)$")
_OP_REQ = re.compile(r"^([^\s!=<>()]+)\s*(==|!=|=)\s*(.*)$")


def _label_requirements(raw: str) -> list[dict]:
    """
    Upstream C{labelSelectorToAuthorizationAPI} over a raw label selector: C{=}, C{==}, C{in}
    -> C{In}; C{!=}, C{notin} -> C{NotIn}; C{key} -> C{Exists}; C{!key} -> C{DoesNotExist};
    others (C{<}, C{>}, unparsable) are left out (requirements only narrow).
    """
    out: list[dict] = []
    for part in _split_top(raw or ""):
        m = _SET_REQ.match(part)
        if m:
            values = [v.strip() for v in m.group(3).split(",") if v.strip()]
            req = {"key": m.group(1), "operator": "In" if m.group(2) == "in" else "NotIn"}
            if values:
                req["values"] = values
            out.append(req)
            continue
        m = _OP_REQ.match(part)
        if m:
            out.append({"key": m.group(1), "operator": "NotIn" if m.group(2) == "!=" else "In",
                        "values": [m.group(3).strip()]})
            continue
        if re.match(r"^![^\s!=<>()]+$", part):
            out.append({"key": part[1:], "operator": "DoesNotExist"})
        elif re.match(r"^[^\s!=<>()]+$", part):
            out.append({"key": part, "operator": "Exists"})
    return out


def review_spec(attributes: Attributes) -> dict:
    """
    Upstream C{Authorize}'s C{SubjectAccessReviewSpec} (v1 field names, Go's omitempty).
    """
    spec: dict[str, Any] = {}
    ra_or_nra: dict[str, Any]
    if attributes.resource_request:
        ra_or_nra = {}
        for key, value in (("namespace", attributes.namespace), ("verb", attributes.verb),
                           ("group", attributes.api_group), ("version", attributes.api_version),
                           ("resource", attributes.resource),
                           ("subresource", attributes.subresource), ("name", attributes.name)):
            if value:
                ra_or_nra[key] = value
        reqs = _selector_requirements(getattr(attributes, "field_selector", "") or "")
        if reqs:
            ra_or_nra["fieldSelector"] = {"requirements": reqs}
        reqs = _label_requirements(getattr(attributes, "label_selector", "") or "")
        if reqs:
            ra_or_nra["labelSelector"] = {"requirements": reqs}
        spec["resourceAttributes"] = ra_or_nra
    else:
        ra_or_nra = {}
        if attributes.path:
            ra_or_nra["path"] = attributes.path
        if attributes.verb:
            ra_or_nra["verb"] = attributes.verb
        spec["nonResourceAttributes"] = ra_or_nra
    user = attributes.user
    if user is not None:
        if getattr(user, "name", ""):
            spec["user"] = user.name
        groups = list(getattr(user, "groups", None) or [])
        if groups:
            spec["groups"] = groups
        extra = getattr(user, "extra", None) or {}
        if extra:
            spec["extra"] = {k: list(extra[k]) for k in sorted(extra)}  # a Go map: sorted
        if getattr(user, "uid", ""):
            spec["uid"] = user.uid
    return spec


def _should_cache(a: Attributes) -> bool:
    size = sum(len(x) for x in (a.namespace, a.verb, a.api_group, a.api_version, a.resource,
                                a.subresource, a.name, a.path))
    return size < MAX_CONTROLLED_ATTR_CACHE_SIZE


# --- CEL match conditions ----------------------------------------------------------------------


class CELMatcher:
    """
    Upstream C{authorizationcel.CELMatcher}: compiled C{matchConditions}, evaluated with
    C{request} = the review's spec (a map with v1 field names).
    """

    def __init__(self, compiled: list[tuple[str, Any]]) -> None:
        self.compiled = compiled

    def eval(self, spec: dict) -> tuple[bool, str]:
        """
        @return: C{(matches, error)}: C{(False, "")} as soon as one condition is false;
            C{(False, error)} when some failed and none is false; C{(True, "")} when all hold.
        """
        from cel_expr_python import cel

        errors: list[str] = []
        for expression, program in self.compiled:
            value = program.eval(data={"request": spec})
            if value.type() == cel.Type.ERROR:
                errors.append(f"cel evaluation error: expression '{expression}' resulted in "
                              f"error: {_cel_runtime_error(str(value))}")
                continue
            result = value.plain_value()
            if not isinstance(result, bool):
                errors.append(f"cel evaluation error: expression '{expression}' eval result "
                              f"type should be bool but got {value.type()}")
                continue
            if not result:
                return False, ""
        if errors:
            return False, errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return True, ""


def _cel_runtime_error(text: str) -> str:
    m = re.search(r'Key not found in map : "(.*)"', text)
    if m:
        return f"no such key: {m.group(1)}"
    return re.sub(r"^[A-Z_]+: ", "", text.strip())


_env_cache: list = []


def _env() -> Any:
    """Upstream's base CEL environment of v1.32 (the one CRD rules use: the strings, lists,
    regex, URL, quantity, IP and CIDR libraries and extensions) with C{request}."""
    from cel_expr_python import cel

    from kubetwist.cel.library import ENV_CONFIG_YAML, FUNCTION_IMPLS

    if not _env_cache:
        _env_cache.append(cel.NewEnv(config=cel.NewEnvConfigFromYaml(ENV_CONFIG_YAML),
                                     variables={"request": cel.Type.DYN},
                                     function_impls=FUNCTION_IMPLS))
    return _env_cache[0]


def compile_match_condition(expression: str) -> tuple[Any, str]:
    """
    Compile one C{matchConditions[].expression} (upstream C{CompileCELExpression} with
    C{request}).

    @return: C{(program, "")}, or C{(None, detail)} with upstream's detail (C{compilation
        failed: ERROR: <input>:1:17: Syntax error: ...}, C{must evaluate to bool but got
        string}).
    """
    try:
        program = _env().compile(expression)
    except RuntimeError as e:
        text = re.sub(r"^[A-Z_]+: ", "", str(e).strip(), count=1)
        text = re.sub(r" \[[A-Z_]+\]$", "", text)
        return None, "compilation failed: " + text
    undefined = _undefined_fields(expression)
    if undefined:
        return None, "compilation failed: " + undefined
    got = str(program.return_type()).split(".")[-1].lower()
    if got not in ("bool", "dyn"):
        return None, f"must evaluate to bool but got {got}"
    return program, ""


#: The fields of C{request} (upstream's typed C{SubjectAccessReviewSpec} declaration):
#: selecting another is a compile error, C{undefined field 'x'}.
_SPEC_FIELDS = {
    "": ("resourceAttributes", "nonResourceAttributes", "user", "groups", "extra", "uid"),
    "resourceAttributes": ("namespace", "verb", "group", "version", "resource", "subresource",
                           "name", "fieldSelector", "labelSelector"),
    "nonResourceAttributes": ("path", "verb"),
}
_STRING_LITERAL = re.compile(r"(?s)[rRbB]{0,2}('''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'"
                             r"|\"(?:\\.|[^\"\\\n])*\")")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_SELECT = re.compile(rf"\brequest(\s*\.\s*({_IDENT}))(\s*\.\s*({_IDENT}))?")


def _undefined_fields(expression: str) -> str:
    """cel-go's C{undefined field} errors for selections of C{request} (the runtime here
    declares it dynamic), in its C{ERROR: <input>:L:C: ...} form with the source snippet."""
    masked = _STRING_LITERAL.sub(lambda m: " " * len(m.group(0)), expression)
    errors: list[str] = []
    for m in _SELECT.finditer(masked):
        before = masked[m.start() - 1] if m.start() > 0 else ""
        if before and (before.isalnum() or before in "_."):
            continue
        first = m.group(2)
        if first not in _SPEC_FIELDS[""]:
            errors.append(_snippet(expression, m.start(1), f"undefined field '{first}'"))
            continue
        second = m.group(4)
        if second and first in _SPEC_FIELDS and second not in _SPEC_FIELDS[first]:
            errors.append(_snippet(expression, m.start(3), f"undefined field '{second}'"))
    return "\n".join(errors)


def _snippet(source: str, offset: int, message: str) -> str:
    offset = source.index(".", offset)
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    line = source[line_start: line_end if line_end >= 0 else len(source)]
    col = offset - line_start
    return (f"ERROR: <input>:{source.count(chr(10), 0, offset) + 1}:{col + 1}: {message}\n"
            f" | {line}\n | {'.' * col}^")


def compile_match_conditions(conditions: list, path: Any = None
                             ) -> tuple[Optional[CELMatcher], list[Any]]:
    """
    Upstream C{ValidateAndCompileMatchConditions}: at most 64, none empty or repeated, each a
    boolean expression.

    @param path: the L{Path <kubetwist.runtime.field.Path>} the C{matchConditions}
        field is under (C{None}: the top).
    @return: C{(matcher or None, field errors)}.
    """
    from kubetwist.runtime.field import Path, duplicate, invalid, required, too_many

    errs: list = []
    root = path.child("matchConditions") if path is not None else Path("matchConditions")
    if len(conditions) > 64:
        return None, [too_many(root, len(conditions), 64)]
    seen: set[str] = set()
    compiled: list[tuple[str, Any]] = []
    for i, mc in enumerate(conditions):
        p = root.index(i).child("expression")
        expression = (mc or {}).get("expression") or ""
        if not expression.strip():
            errs.append(required(p, ""))
            continue
        if expression in seen:
            errs.append(duplicate(p, expression))
            continue
        seen.add(expression)
        program, detail = compile_match_condition(expression)
        if program is None:
            errs.append(invalid(p, expression, detail))
            continue
        compiled.append((expression, program))
    return (CELMatcher(compiled) if compiled else None), errs


# --- the authorizer ---------------------------------------------------------------------------


_GENERIC_MESSAGES = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    403: "the server does not allow access to the requested resource",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    406: "the server was unable to respond with a content type that the client supports",
    409: "the server reported a conflict",
    415: "the server was unable to respond with a content type that the client supports",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be "
         "processing the request",
}


def _status_error(code: int, body: bytes, content_type: str, retry_after: bool) -> WebhookError:
    """Upstream rest client C{transformResponse} for a non-2xx answer."""
    # upstream DefaultShouldRetry: InternalError (5xx but 503), Timeout (504), TooManyRequests
    retry = (code >= 500 and code != 503) or code == 429 or (retry_after and code == 503)
    try:
        status = json.loads(body)
        if (isinstance(status, dict) and status.get("kind") == "Status"
                and status.get("status") == "Failure"):
            reason = status.get("reason") or ""
            retry = retry or reason in ("InternalError", "Timeout", "TooManyRequests") or bool(
                (status.get("details") or {}).get("retryAfterSeconds"))
            return WebhookError(status.get("message") or "", retry)
    except ValueError:
        pass
    message = "unknown"
    if content_type.lower().startswith("text/"):
        message = body[:_MAX_UNSTRUCTURED_TEXT].decode("utf-8", "replace").strip()
    text = _GENERIC_MESSAGES.get(code)
    if text is None:
        if code >= 500:
            text = (f"an error on the server ({json.dumps(message)}) has prevented the request "
                    "from succeeding")
        else:
            text = f"the server responded with the status code {code} but did not return more " \
                   "information"
    return WebhookError(text, retry)


def _transport_error(url: str, failure: Any) -> WebhookError:
    """Go's C{*url.Error} text for a failed round trip."""
    value = failure.value if hasattr(failure, "value") else failure
    netloc = urlsplit(url).netloc
    reasons = getattr(value, "reasons", None)
    if reasons:  # ResponseNeverReceived / RequestTransmissionFailed wrap the cause
        value = reasons[0].value if hasattr(reasons[0], "value") else reasons[0]
    if isinstance(value, (defer.TimeoutError, defer.CancelledError,
                          internet_error.TimeoutError)):
        return WebhookError(f'Post "{url}": context deadline exceeded')
    if isinstance(value, internet_error.ConnectionRefusedError):
        return WebhookError(f'Post "{url}": dial tcp {netloc}: connect: connection refused')
    if isinstance(value, internet_error.ConnectionLost) and reasons:
        return WebhookError(f'Post "{url}": read: connection reset by peer', retry=True)
    text = str(value)
    if "certificate verify failed" in text:
        return WebhookError(f'Post "{url}": tls: failed to verify certificate: x509: '
                            "certificate signed by unknown authority")
    alert = re.search(r"(?:tlsv\d+|sslv3) alert ([a-z ]+)", text)
    if alert:
        return WebhookError(f'Post "{url}": remote error: tls: {alert.group(1).strip()}')
    if "VerificationError" in type(value).__name__ or "hostname" in text.lower():
        host = urlsplit(url).hostname or ""
        return WebhookError(f'Post "{url}": tls: failed to verify certificate: x509: '
                            f"certificate is valid for other names, not {host}")
    return WebhookError(f'Post "{url}": {text}')


class _ExpiringLRU:
    """Upstream C{cache.LRUExpireCache}: C{size} entries, each with its own expiry."""

    def __init__(self, size: int, clock: Callable[[], float]) -> None:
        self.size = size
        self.clock = clock
        self.entries: "OrderedDict[str, tuple[float, Any]]" = OrderedDict()

    def get(self, key: str) -> Any:
        entry = self.entries.get(key)
        if entry is None:
            return None
        if self.clock() >= entry[0]:
            del self.entries[key]
            return None
        self.entries.move_to_end(key)
        return entry[1]

    def add(self, key: str, value: Any, ttl: float) -> None:
        self.entries[key] = (self.clock() + ttl, value)
        self.entries.move_to_end(key)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)


@implementer(IAuthorizer, IRuleResolver)
class WebhookAuthorizer:
    """
    Upstream C{WebhookAuthorizer} (see the module docstring).

    @param client: a treq C{HTTPClient} (or C{StubTreq}) with C{post(url, data=, headers=)}.
    @param url: the kubeconfig cluster's C{server}; upstream's rest client appends
        C{?timeout=<timeout>}.
    @param reactor: for the cache clock, the timeout and the retry delays.
    @param version: C{v1} or C{v1beta1} (the review's apiVersion).
    @param authorized_ttl: seconds an allowed answer is cached (0: not cached).
    @param unauthorized_ttl: seconds any other answer is cached.
    @param decision_on_error: what a failed call decides (L{NO_OPINION} or L{DENY}).
    @param matcher: a L{CELMatcher} or C{None} (every request is sent).
    @param timeout: seconds each attempt may take.
    @param retry_backoff: C{(duration, factor, jitter, steps)}.
    @param token: a bearer token to send, or C{""}.
    """

    def __init__(self, client: Any, url: str, reactor: Any, *, version: str = "v1beta1",
                 authorized_ttl: float = 300.0, unauthorized_ttl: float = 30.0,
                 decision_on_error: str = NO_OPINION, matcher: Optional[CELMatcher] = None,
                 timeout: float = DEFAULT_TIMEOUT,
                 retry_backoff: tuple = DEFAULT_RETRY_BACKOFF, token: str = "",
                 name: str = "", random_source: Callable[[], float] = random.random) -> None:
        if version not in ("v1", "v1beta1"):
            raise ValueError(f'unsupported webhook authorizer version "{version}", supported '
                             'versions are "v1", "v1beta1"')
        self.client = client
        self.url = _with_timeout(url, timeout)
        self.reactor = reactor
        self.version = version
        self.authorized_ttl = authorized_ttl
        self.unauthorized_ttl = unauthorized_ttl
        self.decision_on_error = decision_on_error
        self.matcher = matcher
        self.timeout = timeout
        self.retry_backoff = retry_backoff
        self.token = token
        self.name = name
        self.random = random_source
        self.cache = _ExpiringLRU(CACHE_SIZE, reactor.seconds)

    def authorize(self, attributes: Attributes) -> "defer.Deferred[tuple]":
        """@return: a Deferred of C{(decision, reason)} or C{(decision, reason, error)}."""
        return defer.ensureDeferred(self._authorize(attributes))

    async def _authorize(self, attributes: Attributes) -> tuple:
        spec = review_spec(attributes)
        if self.matcher is not None:
            matches, err = self.matcher.eval(spec)
            if err:
                return self.decision_on_error, "", err
            if not matches:
                return NO_OPINION, ""
        key = json.dumps(spec, sort_keys=True)
        status = self.cache.get(key)
        if status is None:
            try:
                status = await self._call_with_backoff(spec)
            except WebhookError as e:
                log.error("Failed to make webhook authorizer request: {err}", err=str(e))
                return self.decision_on_error, "", str(e)
            if _should_cache(attributes):
                ttl = self.authorized_ttl if status.get("allowed") else self.unauthorized_ttl
                if ttl > 0:
                    self.cache.add(key, status, ttl)
        allowed, denied = bool(status.get("allowed")), bool(status.get("denied"))
        reason = status.get("reason") or ""
        if allowed and denied:
            return (DENY, reason,
                    "webhook subject access review returned both allow and deny response")
        if denied:
            return DENY, reason
        if allowed:
            return ALLOW, reason
        return NO_OPINION, reason

    async def _call_with_backoff(self, spec: dict) -> dict:
        """Upstream C{WithExponentialBackoff} with C{DefaultShouldRetry}."""
        duration, factor, jitter, steps = self.retry_backoff
        last: Optional[WebhookError] = None
        for attempt in range(steps):
            if attempt:
                delay = duration + (self.random() * jitter * duration if jitter > 0 else 0)
                duration *= factor
                await _sleep(self.reactor, delay)
            try:
                return await self._call(spec)
            except WebhookError as e:
                last = e
                if not e.retry:
                    raise
        assert last is not None
        raise last

    async def _call(self, spec: dict) -> dict:
        api_version = f"authorization.k8s.io/{self.version}"
        wire_spec = dict(spec)
        if self.version == "v1beta1" and "groups" in wire_spec:
            wire_spec["group"] = wire_spec.pop("groups")
        review = {"kind": "SubjectAccessReview", "apiVersion": api_version,
                  "metadata": {"creationTimestamp": None}, "spec": wire_spec,
                  "status": {"allowed": False}}
        headers = {b"Content-Type": [b"application/json"],
                   b"Accept": [b"application/json, */*"]}
        if self.token:
            headers[b"Authorization"] = [f"Bearer {self.token}".encode()]
        try:
            from kubetwist.runtime.gofmt import marshal

            data = (marshal(review) + "\n").encode()  # Go's json.Encoder
            d = self.client.post(self.url, data=data, headers=headers)
            if self.timeout:
                d.addTimeout(self.timeout, self.reactor)
            response = await d
            body = await response.content()
        except WebhookError:
            raise
        except Exception as e:  # noqa: BLE001 -- every transport failure ends the same way
            raise _transport_error(self.url, e) from None
        code = response.code
        content_type = _header(response, b"content-type")
        if not 200 <= code < 300:
            raise _status_error(code, body, content_type,
                                bool(_header(response, b"retry-after")))
        return _decode_review(body, api_version)

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """Upstream C{WebhookAuthorizer.RulesFor}: nothing, incomplete."""
        return [], [], True, "webhook authorizer does not support user rule resolution"


def _header(response: Any, name: bytes) -> str:
    values = response.headers.getRawHeaders(name) or []
    return values[0].decode("latin-1") if values and isinstance(values[0], bytes) else (
        values[0] if values else "")


def _with_timeout(url: str, timeout: float) -> str:
    if not timeout:
        return url
    from kubetwist.authorization.options import go_duration

    text = go_duration(timeout)
    return url + ("&" if "?" in url else "?") + "timeout=" + text


_TYPE_META_STRUCT = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
                     '"json:\\"kind,omitempty\\"" }')
#: Groups of client-go's scheme (what a webhook answer may name without "no kind ... is
#: registered"; a kind of these converts to nothing else: "unknown conversion").
_CLIENT_GO_GROUPS = ("", "apps", "batch", "autoscaling", "policy", "extensions")


def _registered(api_version: str) -> bool:
    group = api_version.rpartition("/")[0]
    return group in _CLIENT_GO_GROUPS or group.endswith(".k8s.io")


def _decode_review(body: bytes, api_version: str) -> dict:
    """
    Upstream's rest client C{Result.Into} a C{SubjectAccessReview} of C{api_version}: JSON
    (a body starting with an opening brace) or else YAML; a missing kind and apiVersion
    default to the expected ones.

    @return: the answer's C{status}.
    @raise WebhookError: upstream's decoding error text.
    """
    from kubetwist.authorization.abac import _json_error
    from kubetwist.authorization.options import yaml_error
    from kubetwist.runtime.gofmt import json_kind as _go_type

    text = body.decode("utf-8", "replace")
    if text.lstrip().startswith("{"):
        try:
            answer = json.loads(text)
        except ValueError as e:
            raise WebhookError(f"couldn't get version/kind; json parse error: {_json_error(e)}"
                               ) from None
    else:
        try:
            answer = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise WebhookError(yaml_error(e, body)) from None
    if not isinstance(answer, dict):
        raise WebhookError("couldn't get version/kind; json parse error: json: cannot "
                           f"unmarshal {_go_type(answer)} into Go value of type "
                           f"{_TYPE_META_STRUCT}")
    kind = answer.get("kind") or ""
    version = answer.get("apiVersion") or ""
    want_version = api_version.rpartition("/")[2]
    if (kind or version) and (kind, version) != ("SubjectAccessReview", api_version):
        if kind and _registered(version):
            raise WebhookError(f"converting ({version.rpartition('/')[2]}.{kind}) to "
                               f"({want_version}.SubjectAccessReview): unknown conversion")
        raise WebhookError(f'no kind "{kind}" is registered for version "{version}" in scheme '
                           '"k8s.io/client-go/kubernetes/scheme/register.go:83"')
    status = answer.get("status")
    if status is None:
        status = {}
    if not isinstance(status, dict):
        raise WebhookError(f"json: cannot unmarshal {_go_type(status)} into Go struct field "
                           f"SubjectAccessReview.status of type {want_version}."
                           "SubjectAccessReviewStatus")
    for key, go in (("allowed", "bool"), ("denied", "bool"), ("reason", "string"),
                    ("evaluationError", "string")):
        value = status.get(key)
        if value is not None and _go_type(value) != go:
            raise WebhookError(f"json: cannot unmarshal {_go_type(value)} into Go struct field "
                               f"SubjectAccessReviewStatus.status.{key} of type {go}")
    return status


def _sleep(reactor: Any, seconds: float) -> defer.Deferred:
    d: defer.Deferred = defer.Deferred()
    reactor.callLater(seconds, d.callback, None)
    return d


@dataclass
class WebhookSettings:
    """One webhook's settings (the legacy flags, or an C{AuthorizationConfiguration} entry)."""

    kubeconfig: str = ""
    version: str = "v1beta1"
    authorized_ttl: float = 300.0
    unauthorized_ttl: float = 30.0
    timeout: float = DEFAULT_TIMEOUT
    decision_on_error: str = NO_OPINION
    match_conditions: list = field(default_factory=list)
    name: str = "webhook"
    in_cluster: bool = False


def build(settings: WebhookSettings, reactor: Any,
          client_factory: Optional[Callable[[WebhookTarget], Any]] = None) -> WebhookAuthorizer:
    """
    A L{WebhookAuthorizer} for C{settings} (reads the kubeconfig now).

    @raise ValueError: upstream's start-up error texts.
    """
    if settings.in_cluster:
        raise ValueError("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                         "KUBERNETES_SERVICE_PORT must be defined")
    target = load_webhook_kubeconfig(settings.kubeconfig)
    tls_policy_for(target)  # the certificate files, before anything is built
    matcher, errs = compile_match_conditions(settings.match_conditions)
    if errs:
        texts = [str(e) for e in errs]
        raise ValueError(texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")
    client = (client_factory or (lambda t: http_client_for(reactor, t)))(target)
    return WebhookAuthorizer(
        client, target.server, reactor, version=settings.version,
        authorized_ttl=settings.authorized_ttl, unauthorized_ttl=settings.unauthorized_ttl,
        decision_on_error=settings.decision_on_error, matcher=matcher,
        timeout=settings.timeout, token=target.token, name=settings.name)


def _factory(config: Any) -> WebhookAuthorizer:
    o = getattr(config, "options", None) or {}
    from kubetwist.authorization.options import duration_seconds

    return build(WebhookSettings(
        kubeconfig=o.get("authorization-webhook-config-file") or "",
        version=o.get("authorization-webhook-version") or "v1beta1",
        authorized_ttl=duration_seconds(o.get("authorization-webhook-cache-authorized-ttl",
                                              300.0)),
        unauthorized_ttl=duration_seconds(o.get("authorization-webhook-cache-unauthorized-ttl",
                                                30.0)),
    ), getattr(config, "reactor", None))
