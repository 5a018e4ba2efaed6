# -*- test-case-name: tests.registry.test_serviceaccount_token -*-
"""
The C{serviceaccounts/<name>/token} subresource: upstream
C{pkg/registry/core/serviceaccount/storage/token.go} (C{TokenREST}), with the defaulting of
C{k8s.io/api/authentication/v1} (C{expirationSeconds} 3600) and
C{pkg/apis/authentication/validation ValidateTokenRequest}.

C{POST} an C{authentication.k8s.io/v1} C{TokenRequest}; the answer is C{201} with the request
echoed (defaults filled in) and C{status: {"token", "expirationTimestamp"}}.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetwist.apimachinery import field as fe
from kubetwist.apimachinery.meta import format_rfc3339
from kubetwist.authentication.serviceaccount import TokenGenerator, claims
from kubetwist.endpoints.responses import write_object
from kubetwist.runtime import codec, errors

GROUP = "authentication.k8s.io"
API_VERSION = "authentication.k8s.io/v1"
KIND = "TokenRequest"

#: v1 defaulting of C{spec.expirationSeconds}.
DEFAULT_EXPIRATION_SECONDS = 3600
#: The shortest lifetime C{ValidateTokenRequest} allows (10 minutes).
MIN_EXPIRATION_SECONDS = 600
#: The longest (C{math.MaxUint32}).
MAX_EXPIRATION_SECONDS = 2 ** 32 - 1
#: Upstream C{WarnOnlyBoundTokenExpirationSeconds}: kubelet's projected-token request that
#: C{--service-account-extend-token-expiration} turns into a one-year token with C{warnafter}.
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7
#: Upstream C{ExpirationExtensionSeconds} (one year).
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60

_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _decode_protobuf(body: bytes) -> dict:
    """A protobuf C{TokenRequest} (no shared tables exist for the authentication group):
    C{metadata}=1, C{spec}=2 (C{audiences}=1, C{boundObjectRef}=3 (kind, apiVersion, name, uid),
    C{expirationSeconds}=4)."""
    from kubetwist.runtime import protobuf

    try:
        api_version, kind, raw, _, _ = protobuf.split_envelope(body)
        out: dict[str, Any] = {"kind": kind or KIND, "apiVersion": api_version or API_VERSION,
                               "metadata": {}, "spec": {}}
        for number, wire, value in protobuf.iter_fields(raw or b"", KIND):
            if number == 1 and wire == 2:
                out["metadata"] = protobuf.decode_message(_META, value)
            elif number == 2 and wire == 2:
                spec = out["spec"]
                for n2, w2, v2 in protobuf.iter_fields(value, "TokenRequestSpec"):
                    if n2 == 1 and w2 == 2:
                        spec.setdefault("audiences", []).append(v2.decode("utf-8", "replace"))
                    elif n2 == 4 and w2 == 0:
                        spec["expirationSeconds"] = v2 - (1 << 64) if v2 >= 1 << 63 else v2
                    elif n2 == 3 and w2 == 2:
                        ref = {}
                        for n3, w3, v3 in protobuf.iter_fields(v2, "BoundObjectReference"):
                            if w3 == 2 and 1 <= n3 <= 4:
                                ref[("kind", "apiVersion", "name", "uid")[n3 - 1]] = \
                                    v3.decode("utf-8", "replace")
                        spec["boundObjectRef"] = ref
        return out
    except protobuf.ProtobufError as e:
        raise errors.new_bad_request(str(e)) from None


def decode_token_request(request: Any, body: bytes) -> dict:
    """
    The request body as a C{TokenRequest} dict (JSON, YAML or protobuf), kind and version
    checked against C{authentication.k8s.io/v1 TokenRequest} (defaulted when absent).

    @raise StatusError: 400 BadRequest (malformed, other kind/version, wrong field types),
        415 UnsupportedMediaType.
    """
    ctype = codec.content_type_of(
        (request.getHeader(b"content-type") or b"application/json").decode("latin-1"))
    if ctype == codec.PROTOBUF:
        obj = _decode_protobuf(body)
    elif ctype in (codec.JSON, codec.YAML, "application/x-yaml", "text/yaml", ""):
        try:
            obj = codec.decode_body(body, ctype or codec.JSON)
        except codec.JSONSyntaxError as e:
            raise errors.new_bad_request(
                f"the object provided is unrecognized (must be of type {KIND}): couldn't get "
                f"version/kind; json parse error: {e} ({codec.summarize_data(body)})") from None
    else:
        raise errors.new_unsupported_media_type(ctype)
    if obj is None:
        obj = {}
    if not isinstance(obj, dict):
        raise errors.new_bad_request(f"the object provided is unrecognized (must be of type "
                                     f"{KIND}): couldn't get version/kind")
    kind = obj.get("kind") or KIND
    api_version = obj.get("apiVersion") or API_VERSION
    if api_version != API_VERSION:
        raise errors.new_bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({API_VERSION})")
    if kind != KIND:
        raise errors.new_bad_request(
            f'{kind} in version "v1" cannot be handled as a {KIND}: no kind "{kind}" is '
            f'registered for the internal version of group "{GROUP}" in scheme')
    for key, go_type in (("metadata", "v1.ObjectMeta"), ("spec", "v1.TokenRequestSpec")):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            raise _type_error(f"{KIND}.{key}", go_type)
    spec = obj.get("spec") or {}
    exp = spec.get("expirationSeconds")
    if exp is not None and (isinstance(exp, bool) or not isinstance(exp, int)):
        raise _type_error("TokenRequestSpec.spec.expirationSeconds", "int64")
    auds = spec.get("audiences")
    if auds is not None and (not isinstance(auds, list)
                             or not all(isinstance(a, str) for a in auds)):
        raise _type_error("TokenRequestSpec.spec.audiences", "[]string")
    ref = spec.get("boundObjectRef")
    if ref is not None and (not isinstance(ref, dict)
                            or not all(isinstance(v, str) for v in ref.values())):
        raise _type_error("TokenRequestSpec.spec.boundObjectRef", "v1.BoundObjectReference")
    return {"kind": KIND, "apiVersion": API_VERSION, "metadata": dict(obj.get("metadata") or {}),
            "spec": dict(spec)}


def _type_error(field: str, go_type: str) -> errors.StatusError:
    return errors.new_bad_request(
        f'{KIND} in version "v1" cannot be handled as a {KIND}: json: cannot unmarshal into '
        f"Go struct field {field} of type {go_type}")


def validate_token_request(req: dict) -> list[fe.FieldError]:
    """Upstream C{ValidateTokenRequest}: C{spec.expirationSeconds} in [600, 4294967295]."""
    errs = []
    exp = req["spec"]["expirationSeconds"]
    if exp < MIN_EXPIRATION_SECONDS:
        errs.append(fe.invalid("spec.expirationSeconds", exp,
                               "may not specify a duration less than 10 minutes"))
    if exp > MAX_EXPIRATION_SECONDS:
        errs.append(fe.too_long("spec.expirationSeconds", exp, MAX_EXPIRATION_SECONDS))
    return errs


def _gvk_string(api_version: str, kind: str) -> str:
    """Go's C{schema.FromAPIVersionAndKind(...).String()}: C{apps/v1, Kind=Deployment}."""
    group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
    if api_version.count("/") > 1:
        group, version = "", ""
    return f"{group}/{version}, Kind={kind}"


class TokenREST:
    """
    The subresource storage (the L{kubetwist.registry.generic.scale.ScaleREST} protocol; only
    C{create}).

    @ivar audiences: C{--api-audiences}, the default C{spec.audiences}.
    @ivar max_expiration_seconds: C{--service-account-max-token-expiration} in seconds (0: no
        limit); longer requests are shortened, with a warning.
    """

    def __init__(self, serviceaccounts: Any, generator: TokenGenerator, audiences: Sequence[str],
                 clock: Any, *, pods: Any = None, secrets: Any = None, nodes: Any = None,
                 max_expiration_seconds: int = 0, extend_expiration: bool = True) -> None:
        """
        @param serviceaccounts: the ServiceAccount L{Store}; C{pods}, C{secrets}, C{nodes}
            likewise (for C{spec.boundObjectRef}).
        @param clock: C{IReactorTime}; tokens are issued at whole seconds of it.
        """
        self.serviceaccounts = serviceaccounts
        self.generator = generator
        self.audiences = list(audiences)
        self.clock = clock
        self.pods = pods
        self.secrets = secrets
        self.nodes = nodes
        self.max_expiration_seconds = max_expiration_seconds
        self.extend_expiration = extend_expiration

    async def create(self, request: Any, handlers: Any, namespace: str, name: str) -> None:
        """C{POST .../serviceaccounts/<name>/token}: write 201 with the issued TokenRequest."""
        from kubetwist.endpoints.handlers.rest import negotiate, read_body

        out = negotiate(request, allow_transform=False)
        req = decode_token_request(request, read_body(request))
        result, warnings = await self.issue(namespace, name, req)
        if warnings:
            request.kube_warnings = list(getattr(request, "kube_warnings", None) or []) + warnings
        write_object(request, 201, result, out.media)

    async def _get(self, store: Any, resource: str, namespace: str, name: str) -> dict:
        if store is None:
            raise errors.new_not_found("", resource, name)
        return await store.get(namespace, name)

    async def issue(self, namespace: str, name: str, req: dict) -> tuple[dict, list[str]]:
        """
        Upstream C{TokenREST.Create} on a decoded request.

        @param req: C{{"kind", "apiVersion", "metadata": {...}, "spec": {["audiences"],
            ["expirationSeconds"], ["boundObjectRef"]}}}.
        @return: C{(TokenRequest with status, warnings)}.
        @raise StatusError: 422 Invalid (name/namespace mismatch, expirationSeconds out of
            range), 404 NotFound (the ServiceAccount or the bound object), 400 BadRequest
            (an unsupported bound kind, a Pod of another ServiceAccount), 409 Conflict (bound
            uid mismatch).
        """
        meta = req["metadata"]
        spec = req["spec"]
        if spec.get("expirationSeconds") is None:
            spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
        if meta.get("name") and meta["name"] != name:
            raise errors.new_invalid(GROUP, KIND, name, [fe.invalid(
                "metadata.name", meta["name"], "must match the service account name if "
                "specified")])
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise errors.new_invalid(GROUP, KIND, name, [fe.invalid(
                "metadata.namespace", meta["namespace"], "must match the service account "
                "namespace if specified")])
        sa = await self.serviceaccounts.get(namespace, name)
        if not spec.get("audiences"):
            spec["audiences"] = list(self.audiences)
        now = int(self.clock.seconds())
        metadata = {"name": meta.get("name") or name,
                    "namespace": meta.get("namespace") or namespace,
                    "creationTimestamp": format_rfc3339(now)}
        metadata.update({k: v for k, v in meta.items() if k not in metadata})
        errs = validate_token_request(req)
        if errs:
            raise errors.new_invalid(GROUP, KIND, "", errs)

        pod = secret = node = None
        ref = spec.get("boundObjectRef")
        if ref is not None:
            api_version, kind = ref.get("apiVersion", ""), ref.get("kind", "")
            group = api_version.rpartition("/")[0] if "/" in api_version else ""
            uid = ""
            if group == "" and kind == "Pod":
                pod = await self._get(self.pods, "pods", namespace, ref.get("name", ""))
                pod_sa = (pod.get("spec") or {}).get("serviceAccountName", "")
                if name != pod_sa:
                    raise errors.new_bad_request(
                        f'cannot bind token for serviceaccount "{name}" to pod running with '
                        f"different serviceaccount name.")
                uid = pod["metadata"].get("uid", "")
                node_name = (pod.get("spec") or {}).get("nodeName")
                if node_name and self.nodes is not None:
                    try:
                        node = await self.nodes.get("", node_name)
                    except errors.StatusError:
                        node = None
            elif group == "" and kind == "Node":
                node = await self._get(self.nodes, "nodes", "", ref.get("name", ""))
                uid = node["metadata"].get("uid", "")
            elif group == "" and kind == "Secret":
                secret = await self._get(self.secrets, "secrets", namespace, ref.get("name", ""))
                uid = secret["metadata"].get("uid", "")
            else:
                raise errors.new_bad_request(
                    f"cannot bind token to object of type {_gvk_string(api_version, kind)}")
            if ref.get("uid") and ref["uid"] != uid:
                raise errors.new_conflict(
                    group, kind, ref.get("name", ""),
                    f"the UID in the bound object reference ({ref['uid']}) does not match the "
                    f"UID in record. The object might have been deleted and then recreated")
            spec["boundObjectRef"] = {k: ref[k] for k in ("kind", "apiVersion", "name", "uid")
                                      if ref.get(k)}

        warnings = []
        exp = spec["expirationSeconds"]
        if self.max_expiration_seconds > 0 and exp > self.max_expiration_seconds:
            warnings.append(f"requested expiration of {exp} seconds shortened to "
                            f"{self.max_expiration_seconds} seconds")
            exp = spec["expirationSeconds"] = self.max_expiration_seconds
        token_exp, warnafter = exp, 0
        if self.extend_expiration and pod is not None and \
                exp == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS:
            token_exp, warnafter = EXPIRATION_EXTENSION_SECONDS, exp
        token = self.generator.generate(claims(
            sa, now, token_exp, spec["audiences"], pod=pod, secret=secret, node=node,
            warnafter=warnafter))
        result = {
            "kind": KIND, "apiVersion": API_VERSION, "metadata": metadata,
            "spec": {"audiences": spec["audiences"], "expirationSeconds": exp,
                     "boundObjectRef": spec.get("boundObjectRef")},
            "status": {"token": token, "expirationTimestamp": format_rfc3339(now + exp)},
        }
        return result, warnings


@dataclass
class ServiceAccountTokenConfig:
    """
    The service-account token options of kube-apiserver.

    @ivar issuer: C{--service-account-issuer} (the first; the C{iss} of new tokens).
    @ivar signing_key: the private key of C{--service-account-signing-key-file}.
    @ivar public_keys: the verification keys (C{--service-account-key-file}).
    @ivar audiences: C{--api-audiences} (default: the issuers).
    @ivar max_expiration_seconds: C{--service-account-max-token-expiration} (0: none).
    @ivar jwks_uri: C{--service-account-jwks-uri}, or C{""} for
        C{https://<advertise address>:<port>/openid/v1/jwks}.
    @ivar extra_issuers: further accepted issuers.
    """

    issuer: str
    signing_key: Any
    public_keys: list = field(default_factory=list)
    audiences: list = field(default_factory=list)
    max_expiration_seconds: int = 0
    jwks_uri: str = ""
    extra_issuers: list = field(default_factory=list)

    @property
    def issuers(self) -> list[str]:
        return [self.issuer] + [i for i in self.extra_issuers if i != self.issuer]

    @property
    def api_audiences(self) -> list[str]:
        return list(self.audiences) or self.issuers

    def verification_keys(self) -> list:
        return list(self.public_keys) or [self.signing_key.public_key()]

    def authenticator(self, clock: Any) -> Any:
        """The L{ServiceAccountTokenAuthenticator} for these options (an C{ITokenAuthenticator}
        for L{kubetwist.authentication.config.new_request_authenticator})."""
        from kubetwist.authentication.serviceaccount import ServiceAccountTokenAuthenticator

        return ServiceAccountTokenAuthenticator(self.issuers, self.verification_keys(),
                                                self.api_audiences, clock)


def install_service_account_tokens(server: Any, stores: dict, config: ServiceAccountTokenConfig,
                                   clock: Any) -> TokenREST:
    """
    Add C{serviceaccounts/token} (create) to the core C{v1} group-version of C{server} (the
    OIDC discovery documents are L{kubetwist.authentication.serviceaccount.install_openid_routes}).

    @param stores: C{{(group, resource): Store}} of the kube-apiserver.
    """
    rest = TokenREST(
        stores[("", "serviceaccounts")], TokenGenerator(config.issuer, config.signing_key),
        config.api_audiences, clock, pods=stores.get(("", "pods")),
        secrets=stores.get(("", "secrets")), nodes=stores.get(("", "nodes")),
        max_expiration_seconds=config.max_expiration_seconds)
    server.group_versions["/api/v1"].add_subresource("serviceaccounts", "token", ["create"],
                                                     rest)
    return rest


__all__ = ["DEFAULT_EXPIRATION_SECONDS", "ServiceAccountTokenConfig", "TokenREST",
           "decode_token_request", "install_service_account_tokens", "validate_token_request"]
