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

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetwist.apimachinery.meta import format_rfc3339
from kubetwist.authentication.serviceaccount import TokenGenerator, claims
from kubetwist.runtime import decode as decodelib
from kubetwist.runtime import errors, typed
from kubetwist.runtime import field as fe

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


#: The body's kind (L{kubetwist.runtime.decode.Expect}); TokenRequest has no type table, so
#: L{token_request} does its typed conversion.
EXPECT = decodelib.Expect(GROUP, ("v1",), KIND)


def token_request(obj: dict) -> dict:
    """
    A decoded C{TokenRequest} body (kind and version already checked by the body decoder)
    after Go's typed conversion, as C{{"kind", "apiVersion", "metadata", "spec"}}.

    @raise StatusError: 400 BadRequest C{TokenRequest in version "v1" cannot be handled as a
        TokenRequest: json: cannot unmarshal string into Go struct field
        TokenRequestSpec.spec.expirationSeconds of type int64} for a value of the wrong type.
    """
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise _type_error(meta, "TokenRequest", ("metadata",), "v1.ObjectMeta")
    problem = typed.check({"metadata": meta}, "io.k8s.api.core.v1.ConfigMap") if meta else None
    if problem:
        raise _bad_request(problem)
    spec = obj.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise _type_error(spec, "TokenRequest", ("spec",), "v1.TokenRequestSpec")
    spec = spec or {}
    for key, value in spec.items():
        where = ("spec", key)
        if value is None:
            continue
        if key == "expirationSeconds":
            if isinstance(value, float) or not isinstance(value, int) or isinstance(value, bool) \
                    or not -(2 ** 63) <= value < 2 ** 63:
                what = "number " + typed.number_text(value) if isinstance(value, (int, float)) \
                    and not isinstance(value, bool) else typed._json_kind(value)
                raise _bad_request(typed._Decode.type_error(what, "TokenRequestSpec", where,
                                                            "int64"))
        elif key == "audiences":
            if not isinstance(value, list):
                raise _type_error(value, "TokenRequestSpec", where, "[]string")
            for item in value:
                if item is not None and not isinstance(item, str):
                    raise _type_error(item, "TokenRequestSpec", where, "string")
        elif key == "boundObjectRef":
            if not isinstance(value, dict):
                raise _type_error(value, "TokenRequestSpec", where, "v1.BoundObjectReference")
            for k in ("kind", "apiVersion", "name", "uid"):
                v = value.get(k)
                if v is not None and not isinstance(v, str):
                    raise _type_error(v, "BoundObjectReference", where + (k,),
                                      "types.UID" if k == "uid" else "string")
    return {"kind": KIND, "apiVersion": API_VERSION, "metadata": dict(meta or {}),
            "spec": dict(spec)}


def _bad_request(message: str) -> errors.StatusError:
    return errors.new_bad_request(
        f'{KIND} in version "v1" cannot be handled as a {KIND}: {message}')


def _type_error(value: Any, struct: str, path: tuple, go_type: str) -> errors.StatusError:
    return _bad_request(typed._Decode.type_error(typed._json_kind(value), struct, path, go_type))


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

    #: The body's kind.
    expect = EXPECT

    @staticmethod
    def decode_protobuf(body: bytes) -> dict:
        """A protobuf C{TokenRequest} body."""
        return _decode_protobuf(body)

    async def create(self, namespace: str, name: str, obj: dict, dry_run: list[str],
                     admission: Callable[[str, str], Any]) -> tuple[int, dict, list[str]]:
        """C{POST .../serviceaccounts/<name>/token} with the decoded body: C{(201, the issued
        TokenRequest, warnings)}.  Mutating admission sees the request first, validating
        admission after its static validation (upstream's handler and C{TokenREST.Create})."""
        req = token_request(obj)
        chain = admission(name, "token") if admission is not None else None
        if chain is not None:
            await chain.mutate("CREATE", req, None)
        result, warnings = await self.issue(namespace, name, req, chain)
        return 201, result, warnings

    async def _get(self, store: Any, resource: str, namespace: str, name: str) -> dict:
        if store is None:
            raise errors.new_not_found("", resource, name)
        return await store.get(namespace, name)

    async def issue(self, namespace: str, name: str, req: dict,
                    admission: Any = None) -> tuple[dict, list[str]]:
        """
        Upstream C{TokenREST.Create} on a decoded request.

        @param req: C{{"kind", "apiVersion", "metadata": {...}, "spec": {["audiences"],
            ["expirationSeconds"], ["boundObjectRef"]}}}.
        @return: C{(TokenRequest with status, warnings)}.
        @param admission: the request's admission (its C{validate} runs after the static
            validation), or C{None}.
        @raise StatusError: 422 Invalid (name/namespace mismatch, expirationSeconds out of
            range), an admission refusal, 404 NotFound (the ServiceAccount or the bound
            object), 400 BadRequest (an unsupported bound kind, a Pod of another
            ServiceAccount), 409 Conflict (bound uid mismatch).
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
        if admission is not None:
            await admission.validate("CREATE", {**copy.deepcopy(req), "metadata": {
                **copy.deepcopy(meta), **metadata}}, None)

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
    OIDC discovery documents are L{kubetwist.server.openid.install_openid_routes}).

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
           "install_service_account_tokens", "token_request", "validate_token_request"]
