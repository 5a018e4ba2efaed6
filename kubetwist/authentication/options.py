# -*- test-case-name: tests.authentication.test_options -*-
"""
kube-apiserver's authentication flags turned into the request authenticator: upstream
C{pkg/kubeapiserver/options/authentication.go} (C{Validate}, C{ApplyAuthorization},
C{ToAuthenticationConfig}) and C{pkg/kubeapiserver/authenticator/config.go} (C{New}).

L{check_authentication_flags} runs at flag parsing (every file is read and checked there, so
a bad one is a one-line start-up error); L{build_authentication} assembles, in upstream's
order: requestheader, x509, then the bearer tokens (token file, service accounts, bootstrap
tokens, JWT authenticators, webhook), the authenticated-group adder and anonymous.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

from cryptography import x509

from kubetwist.authentication.authnconfig import ConfigError, authentication_config
from kubetwist.authentication.serviceaccount_lookup import StorageObjectGetter
from kubetwist.authentication.webhook import VERSIONS, load_webhook_kubeconfig

#: The flags of this module: name -> parsed default (tap.py lists them with help texts).
LIST_FLAGS = ("requestheader-allowed-names", "requestheader-username-headers",
              "requestheader-uid-headers", "requestheader-group-headers",
              "requestheader-extra-headers-prefix", "oidc-signing-algs")


def _bool(value: Any) -> bool:
    return str(value).lower() in ("true", "1", "t")


def _certs(path: str, flag: str) -> list[x509.Certificate]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ConfigError(f"--{flag}: open {path}: {(e.strerror or str(e)).lower()}") from None
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError:
        certs = []
    if not certs:
        raise ConfigError(f"--{flag}: {path}: data does not contain any valid RSA or ECDSA "
                          f"certificates")
    return certs


def check_authentication_flags(o: Any) -> None:
    """
    Parse and check the authentication flags in place (C{o} a mapping of flag name to
    value; durations already in seconds): lists split on commas, booleans parsed, the
    C{--authentication-config} file, C{--oidc-ca-file}, the webhook kubeconfig and the
    requestheader CA read and checked.  Afterwards C{o["authentication-config-parsed"]} holds
    the JWT and anonymous configuration (L{authentication_config}).

    @raise ConfigError: the first problem, in one line (upstream's text where it has one).
    """
    for key in LIST_FLAGS:
        value = o.get(key)
        if not isinstance(value, list):
            o[key] = [v.strip() for v in str(value or "").split(",") if v.strip()]
    o["enable-bootstrap-token-auth"] = _bool(o.get("enable-bootstrap-token-auth", False))
    for key in ("requestheader-username-headers", "requestheader-group-headers",
                "requestheader-extra-headers-prefix", "requestheader-allowed-names",
                "requestheader-uid-headers"):
        if any(not v.strip() for v in o.get(key) or []):
            raise ConfigError(f"empty value in {key}")
    issuer, client_id = o.get("oidc-issuer-url") or "", o.get("oidc-client-id") or ""
    # the v1.32.0 binary starts with a half-configured OIDC (issuer without client id: no
    # OIDC) and ignores the --oidc-* flags next to --authentication-config, without an error
    oidc = None
    if issuer and client_id and not o.get("authentication-config"):
        ca = ""
        if o.get("oidc-ca-file"):
            try:
                with open(o["oidc-ca-file"]) as f:
                    ca = f.read()
            except OSError as e:
                raise ConfigError(f"open {o['oidc-ca-file']}: {(e.strerror or '').lower()}") \
                    from None
        from kubetwist.authentication.oidc import ALL_SIGNING_ALGORITHMS

        for alg in o.get("oidc-signing-algs") or []:
            if alg not in ALL_SIGNING_ALGORITHMS:
                raise ConfigError(f'oidc: unsupported signing alg: "{alg}"')
        oidc = {"issuer_url": issuer, "client_id": client_id,
                "username_claim": o.get("oidc-username-claim") or "sub",
                "username_prefix": o.get("oidc-username-prefix") or "",
                "groups_claim": o.get("oidc-groups-claim") or "",
                "groups_prefix": o.get("oidc-groups-prefix") or "", "ca_pem": ca,
                "required_claims": dict(o.get("oidc-required-claim") or {})}
    o["authentication-config-parsed"] = authentication_config(
        o.get("authentication-config") or "", _bool(o.get("anonymous-auth", True)),
        bool(o.get("anonymous-auth-set")), oidc, list(o.get("service-account-issuer") or []))
    version = o.get("authentication-token-webhook-version") or "v1beta1"
    if version not in VERSIONS:
        raise ConfigError(f'unsupported authentication webhook version "{version}", supported '
                          f'versions are "v1", "v1beta1"')
    if o.get("authentication-token-webhook-config-file"):
        try:
            o["authentication-token-webhook-parsed"] = load_webhook_kubeconfig(
                o["authentication-token-webhook-config-file"])
        except ValueError as e:
            raise ConfigError(str(e)) from None
    if o.get("requestheader-client-ca-file"):
        o["requestheader-client-ca-file"] = os.path.abspath(o["requestheader-client-ca-file"])
        ca = _certs(o["requestheader-client-ca-file"], "requestheader-client-ca-file")
        if o.get("client-ca-file") and not o.get("requestheader-allowed-names"):
            client = _certs(o["client-ca-file"], "client-ca-file")
            if any(c in ca for c in client):
                raise ConfigError(
                    "--requestheader-client-ca-file and --client-ca-file contain overlapping "
                    "certificates; --requestheader-allowed-names must be specified to ensure "
                    "regular client certificates cannot set authenticating proxy headers for "
                    "arbitrary users")


@dataclass
class Authentication:
    """
    The assembled authentication.

    @ivar authenticator: the request authenticator (or C{None}: nothing configured).
    @ivar getter: the storage reader of the service-account lookup and bootstrap tokens;
        L{set_storage} gives it the storage once it exists.
    @ivar x509_cas: the CAs client certificates authenticate against (without the
        requestheader CA).
    """

    authenticator: Any
    getter: StorageObjectGetter
    x509_cas: list

    def set_storage(self, storage: Any) -> None:
        self.getter.storage = storage


def anonymous_enabled(config: dict, modes: list[str]) -> tuple[bool, Optional[list[str]]]:
    """
    Upstream C{ApplyAuthorization} and the anonymous configuration: C{(enabled, paths)};
    C{--anonymous-auth} is ignored with the C{AlwaysAllow} authorizer (anonymous configured
    in the file is not); C{paths} is C{None} for every path, else the condition paths.
    """
    anonymous = config.get("anonymous") or {}
    enabled = bool(anonymous.get("enabled"))
    if enabled and anonymous.get("flag") and "AlwaysAllow" in modes:
        enabled = False
    paths = [c.get("path", "") for c in anonymous.get("conditions") or []] or None
    return enabled, paths


def build_authentication(o: Any, reactor: Any, client_ca_certs: list, token_authenticators:
                         list, sa_authenticator: Any = None, warn: Any = None) -> Authentication:
    """
    The request authenticator of the checked flags C{o} (see L{check_authentication_flags}).

    @param client_ca_certs: every CA the TLS layer accepts client certificates from.
    @param token_authenticators: the token file and service-account authenticators, in
        that order (the bootstrap, JWT and webhook authenticators follow them).
    @param sa_authenticator: the service-account authenticator, given the lookup when
        C{--service-account-lookup}.
    """
    from kubetwist.authentication.bootstrap import BootstrapTokenAuthenticator
    from kubetwist.authentication.config import new_request_authenticator
    from kubetwist.authentication.oidc import JWTAuthenticator, https_fetcher
    from kubetwist.authentication.requestheader import (
        RequestHeaderAuthenticator,
        RequestHeaderConfig,
    )
    from kubetwist.authentication.tokencache import CachedTokenAuthenticator

    getter = StorageObjectGetter(None)
    if sa_authenticator is not None and _bool(o.get("service-account-lookup", True)):
        sa_authenticator.lookup = getter
    config = o.get("authentication-config-parsed") or {"jwt": [], "anonymous": {
        "enabled": _bool(o.get("anonymous-auth", True)), "flag": True}}
    tokens = list(token_authenticators)
    if o.get("enable-bootstrap-token-auth"):
        tokens.append(BootstrapTokenAuthenticator(getter, reactor))
    for a in config.get("jwt") or []:
        from kubetwist.authentication.httpclient import http_client, tls_policy

        ca = ((a.get("issuer") or {}).get("certificateAuthority") or "").encode() or None
        fetch = https_fetcher(http_client(reactor, tls_policy(ca)))
        algs = None if o.get("authentication-config") else (o.get("oidc-signing-algs")
                                                              or ["RS256"])
        tokens.append(JWTAuthenticator(a, fetch, reactor, algs))
    if o.get("authentication-token-webhook-parsed") is not None:
        from kubetwist.authentication.webhook import WebhookTokenAuthenticator, treq_poster

        wc = o["authentication-token-webhook-parsed"]
        audiences = list(o.get("api-audiences") or o.get("service-account-issuer") or [])
        hook = WebhookTokenAuthenticator(
            treq_poster(reactor, wc), o.get("authentication-token-webhook-version") or
            "v1beta1", audiences, float(o.get("authentication-token-webhook-cache-ttl", 120)),
            reactor, wc.server)
        tokens.append(hook)
    request_header = None
    x509_cas = list(client_ca_certs)
    if o.get("requestheader-client-ca-file"):
        rh_cas = _certs(o["requestheader-client-ca-file"], "requestheader-client-ca-file")
        keep = []
        if o.get("client-ca-file"):
            keep = _certs(o["client-ca-file"], "client-ca-file")
        x509_cas = [c for c in client_ca_certs if c not in rh_cas or c in keep]
        request_header = RequestHeaderAuthenticator(RequestHeaderConfig(
            client_cas=rh_cas, username_headers=list(o.get("requestheader-username-headers")
                                                     or []),
            uid_headers=list(o.get("requestheader-uid-headers") or []),
            group_headers=list(o.get("requestheader-group-headers") or []),
            extra_header_prefixes=list(o.get("requestheader-extra-headers-prefix") or []),
            allowed_names=list(o.get("requestheader-allowed-names") or [])))
    enabled, paths = anonymous_enabled(config, list(o.get("authorization-mode") or []))
    authenticator = new_request_authenticator(
        client_ca_certs=x509_cas, token_authenticators=tokens, anonymous=enabled,
        anonymous_paths=paths, warn=warn, request_header=request_header,
        token_cache=lambda auth: CachedTokenAuthenticator(auth, reactor))
    return Authentication(authenticator, getter, x509_cas)


__all__ = ["Authentication", "anonymous_enabled", "build_authentication",
           "check_authentication_flags"]
