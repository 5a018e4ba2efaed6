# -*- test-case-name: tests.authentication.test_oidc -*-
"""
The structured authentication configuration (C{--authentication-config}, kind
C{AuthenticationConfiguration} of C{apiserver.config.k8s.io/v1alpha1} or C{v1beta1}, v1.32)
and the legacy C{--oidc-*} flags: upstream C{pkg/kubeapiserver/options/authentication.go}
(C{ToAuthenticationConfig}) and C{k8s.io/apiserver/pkg/apis/apiserver/validation}
(C{ValidateAuthenticationConfiguration}).

Both become one wire-form dict C{{"jwt": [JWTAuthenticator...], "anonymous": {"enabled",
"conditions": [{"path"}]} | None}}; every error is one line (a L{ConfigError}), never a
traceback.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional
from urllib.parse import urlsplit

import yaml

from kubetwist.runtime.field import (
    FieldError,
    Path,
    aggregate_message,
    duplicate,
    invalid,
    required,
    too_many,
)

GROUP = "apiserver.config.k8s.io"
VERSIONS = ("v1alpha1", "v1beta1")
KIND = "AuthenticationConfiguration"


class ConfigError(ValueError):
    """A configuration that cannot be used; the text is the one-line start-up error."""


def load_authentication_config(path: str) -> dict:
    """
    Read and decode C{--authentication-config} (YAML or JSON).

    @return: the configuration dict (C{jwt} a list, C{anonymous} a dict or absent).
    @raise ConfigError: C{failed to load authentication configuration from file "<path>":
        <reason>}.
    """
    def fail(reason: str) -> ConfigError:
        return ConfigError(f'failed to load authentication configuration from file "{path}": '
                           f"{reason}")

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise fail(f"open {path}: {e.strerror.lower() if e.strerror else e}") from None
    if not data.strip():
        raise fail("empty config file")
    try:
        obj = yaml.safe_load(data)
    except yaml.YAMLError as e:
        raise fail(f"error converting YAML to JSON: {str(e).splitlines()[0]}") from None
    if not isinstance(obj, dict):
        raise fail("couldn't get version/kind; json parse error: cannot unmarshal into Object")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not kind:
        raise fail(f"Object 'Kind' is missing in '{data.decode('utf-8', 'replace').strip()}'")
    group, _, version = str(api_version or "").rpartition("/")
    if group != GROUP or version not in VERSIONS or kind != KIND:
        raise fail(f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                   f'"pkg/runtime/scheme.go:100"')
    jwt = obj.get("jwt")
    if jwt is not None and not isinstance(jwt, list):
        raise fail("json: cannot unmarshal object into Go struct field "
                   "AuthenticationConfiguration.jwt of type []v1beta1.JWTAuthenticator")
    anonymous = obj.get("anonymous")
    if anonymous is not None and not isinstance(anonymous, dict):
        raise fail("json: cannot unmarshal into Go struct field "
                   "AuthenticationConfiguration.anonymous of type v1beta1.AnonymousAuthConfig")
    for i, a in enumerate(jwt or []):
        if not isinstance(a, dict):
            raise fail(f"jwt[{i}]: not an object")
    return {"jwt": list(jwt or []), "anonymous": anonymous}


def oidc_flags_config(issuer_url: str, client_id: str, username_claim: str = "sub",
                      username_prefix: str = "", groups_claim: str = "",
                      groups_prefix: str = "", ca_pem: str = "",
                      required_claims: Optional[dict] = None) -> dict:
    """
    Upstream's conversion of the C{--oidc-*} flags into one JWT authenticator: usernames of
    claims other than C{email} are prefixed C{<issuer>#} unless C{--oidc-username-prefix} is
    given (C{-}: no prefix).
    """
    prefix = username_prefix
    if username_prefix == "" and username_claim != "email":
        prefix = issuer_url + "#"
    if username_prefix == "-":
        prefix = ""
    out: dict[str, Any] = {
        "issuer": {"url": issuer_url, "audiences": [client_id]},
        "claimMappings": {"username": {"claim": username_claim, "prefix": prefix}},
    }
    if groups_claim:
        out["claimMappings"]["groups"] = {"claim": groups_claim, "prefix": groups_prefix}
    if ca_pem:
        out["issuer"]["certificateAuthority"] = ca_pem
    if required_claims:
        out["claimValidationRules"] = [{"claim": k, "requiredValue": v}
                                       for k, v in required_claims.items()]
    return out


_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _validate_url(url: str, disallowed: set, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if url in disallowed:
        errs.append(invalid(path, url, "URL must not overlap with disallowed issuers: "
                                       "[" + " ".join(sorted(disallowed)) + "]"))
    try:
        u = urlsplit(url)
    except ValueError as e:
        return errs + [invalid(path, url, str(e))]
    if u.scheme != "https":
        errs.append(invalid(path, url, "URL scheme must be https"))
    if "@" in u.netloc:
        errs.append(invalid(path, url, "URL must not contain a username or password"))
    if u.query:
        errs.append(invalid(path, url, "URL must not contain a query"))
    if u.fragment:
        errs.append(invalid(path, url, "URL must not contain a fragment"))
    return errs


def _validate_issuer(issuer: dict, disallowed: set, path: Path) -> list[FieldError]:
    from kubetwist.authentication.httpclient import certificates_from_pem

    errs: list[FieldError] = []
    url = issuer.get("url") or ""
    if not url:
        errs.append(required(path.child("url"), "URL is required"))
    else:
        errs += _validate_url(url, disallowed, path.child("url"))
    discovery = issuer.get("discoveryURL") or ""
    if discovery:
        if url and url.rstrip("/") == discovery.rstrip("/"):
            errs.append(invalid(path.child("discoveryURL"), discovery,
                                "discoveryURL must be different from URL"))
        errs += _validate_url(discovery, set(), path.child("discoveryURL"))
    auds = issuer.get("audiences") or []
    policy = issuer.get("audienceMatchPolicy") or ""
    apath = path.child("audiences")
    if not auds:
        errs.append(required(apath, f"at least one {apath} is required"))
    else:
        seen: set = set()
        for i, a in enumerate(auds):
            if not a:
                errs.append(required(apath.index(i), "audience can't be empty"))
            if a in seen:
                errs.append(duplicate(apath.index(i), a))
            seen.add(a)
        if len(auds) > 1 and policy != "MatchAny":
            errs.append(invalid(path.child("audienceMatchPolicy"), policy,
                                "audienceMatchPolicy must be MatchAny for multiple audiences"))
        if len(auds) == 1 and policy and policy != "MatchAny":
            errs.append(invalid(path.child("audienceMatchPolicy"), policy,
                                "audienceMatchPolicy must be empty or MatchAny for single "
                                "audience"))
    ca = issuer.get("certificateAuthority") or ""
    if ca:
        try:
            certificates_from_pem(ca.encode())
        except ValueError as e:
            errs.append(invalid(path.child("certificateAuthority"), "<omitted>", str(e)))
    return errs


def _compile(var: str, expression: str, path: Path) -> list[FieldError]:
    from kubetwist.authentication.oidc import compile_cel

    _, err = compile_cel(var, expression)
    # cel's message goes on with the source line and a caret: the first line says it all
    return [invalid(path, expression, err.splitlines()[0])] if err else []


def _validate_prefixed(m: dict, path: Path, required_: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    claim, expression = m.get("claim") or "", m.get("expression") or ""
    if claim and expression:
        errs.append(invalid(path, "", "claim and expression can't both be set"))
    elif not claim and not expression and required_:
        errs.append(required(path, "claim or expression is required"))
    elif expression:
        if m.get("prefix") is not None:
            errs.append(invalid(path.child("prefix"), m["prefix"],
                                "prefix can't be set when expression is set"))
        errs += _compile("claims", expression, path.child("expression"))
    elif claim and m.get("prefix") is None:
        errs.append(required(path.child("prefix"), "prefix is required when claim is set. It "
                                                   "can be set to an empty string to disable "
                                                   "prefixing"))
    return errs


def _is_domain_prefixed_path(key: str, path: Path) -> list[FieldError]:
    if not key:
        return [required(path, "")]
    parts = key.split("/", 1)
    if len(parts) != 2:
        return [invalid(path, key, "must be a domain-prefixed path (such as \"acme.io/foo\")")]
    host, rest = parts
    errs = []
    if not host or len(host) > 253 or not _DNS1123_SUBDOMAIN.match(host):
        errs.append(invalid(path, host, "a lowercase RFC 1123 subdomain must consist of lower "
                                        "case alphanumeric characters, '-' or '.', and must "
                                        "start and end with an alphanumeric character (e.g. "
                                        "'example.com', regex used for validation is "
                                        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
                                        "([-a-z0-9]*[a-z0-9])?)*')"))
    if not rest or not re.match(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$", rest):
        errs.append(invalid(path, rest, "Invalid path"))
    return errs


def _validate_jwt(a: dict, path: Path, disallowed: set) -> list[FieldError]:
    errs = _validate_issuer(a.get("issuer") or {}, disallowed, path.child("issuer"))
    seen_claims: set = set()
    seen_exprs: set = set()
    rpath = path.child("claimValidationRules")
    for i, rule in enumerate(a.get("claimValidationRules") or []):
        p = rpath.index(i)
        claim, expression = rule.get("claim") or "", rule.get("expression") or ""
        if claim and expression:
            errs.append(invalid(p, claim, "claim and expression can't both be set"))
        elif not claim and not expression:
            errs.append(required(p, "claim or expression is required"))
        elif claim:
            if rule.get("message"):
                errs.append(invalid(p.child("message"), rule["message"],
                                    "message can't be set when claim is set"))
            if claim in seen_claims:
                errs.append(duplicate(p.child("claim"), claim))
            seen_claims.add(claim)
        else:
            if rule.get("requiredValue"):
                errs.append(invalid(p.child("requiredValue"), rule["requiredValue"],
                                    "requiredValue can't be set when expression is set"))
            if expression in seen_exprs:
                errs.append(duplicate(p.child("expression"), expression))
                continue
            seen_exprs.add(expression)
            errs += _compile("claims", expression, p.child("expression"))
    mpath = path.child("claimMappings")
    m = a.get("claimMappings") or {}
    errs += _validate_prefixed(m.get("username") or {}, mpath.child("username"), True)
    errs += _validate_prefixed(m.get("groups") or {}, mpath.child("groups"), False)
    uid = m.get("uid") or {}
    if uid.get("claim") and uid.get("expression"):
        errs.append(invalid(mpath.child("uid"), "", "claim and expression can't both be set"))
    elif uid.get("expression"):
        errs += _compile("claims", uid["expression"], mpath.child("uid", "expression"))
    seen_keys: set = set()
    for i, e in enumerate(m.get("extra") or []):
        p = mpath.child("extra").index(i)
        key = e.get("key") or ""
        errs += _is_domain_prefixed_path(key, p.child("key"))
        if key != key.lower():
            errs.append(invalid(p.child("key"), key, "key must be lowercase"))
        domain = key.split("/", 1)[0] if "/" in key else ""
        if domain in ("kubernetes.io", "k8s.io") or domain.endswith((".kubernetes.io",
                                                                     ".k8s.io")):
            errs.append(invalid(p.child("key"), key, "k8s.io, kubernetes.io and their "
                                                     "subdomains are reserved for Kubernetes "
                                                     "use"))
        if key in seen_keys:
            errs.append(duplicate(p.child("key"), key))
            continue
        seen_keys.add(key)
        if not e.get("valueExpression"):
            errs.append(required(p.child("valueExpression"), "valueExpression is required"))
            continue
        errs += _compile("claims", e["valueExpression"], p.child("valueExpression"))
    upath = path.child("userValidationRules")
    seen_exprs = set()
    for i, rule in enumerate(a.get("userValidationRules") or []):
        p = upath.index(i)
        expression = rule.get("expression") or ""
        if not expression:
            errs.append(required(p.child("expression"), "expression is required"))
            continue
        if expression in seen_exprs:
            errs.append(duplicate(p.child("expression"), expression))
            continue
        seen_exprs.add(expression)
        errs += _compile("user", expression, p.child("expression"))
    return errs


def validate_authentication_config(config: dict, disallowed_issuers: list[str] = ()) \
        -> list[FieldError]:
    """
    Upstream C{ValidateAuthenticationConfiguration} (v1.32, every feature gate at its
    default): at most 64 JWT authenticators, each valid, unique issuer URLs and discovery
    URLs; C{anonymous.conditions} only when enabled.

    @param disallowed_issuers: the service-account issuers (a JWT issuer may not be one).
    """
    root = Path("jwt")
    jwts = config.get("jwt") or []
    if len(jwts) > 64:
        return [too_many(root, len(jwts), 64)]
    errs: list[FieldError] = []
    seen_urls: set = set()
    seen_discovery: set = set()
    for i, a in enumerate(jwts):
        p = root.index(i)
        errs += _validate_jwt(a, p, set(disallowed_issuers))
        issuer = a.get("issuer") or {}
        url = issuer.get("url", "")
        if url in seen_urls:
            errs.append(duplicate(p.child("issuer", "url"), url))
        seen_urls.add(url)
        d = issuer.get("discoveryURL") or ""
        if d:
            if d in seen_discovery:
                errs.append(duplicate(p.child("issuer", "discoveryURL"), d))
            seen_discovery.add(d)
    anonymous = config.get("anonymous")
    if anonymous is not None:
        conditions = anonymous.get("conditions") or []
        if not anonymous.get("enabled") and conditions:
            from kubetwist.runtime.field import invalid_go

            printed = "[]apiserver.AnonymousAuthCondition{" + ", ".join(
                "apiserver.AnonymousAuthCondition{Path:" + json.dumps(str(c.get("path", "")))
                + "}" for c in conditions) + "}"
            errs.append(invalid_go(Path("anonymous", "conditions"), printed,
                                   "enabled should be set to true when conditions are "
                                   "defined"))
    return errs


def authentication_config(config_file: str, anonymous_flag: bool, anonymous_flag_set: bool,
                          oidc: Optional[dict], disallowed_issuers: list[str]) -> dict:
    """
    Upstream C{ToAuthenticationConfig}'s JWT and anonymous part: the file's configuration, or
    (without a file) the C{--oidc-*} flags' one JWT authenticator, and the anonymous
    configuration of the file or of C{--anonymous-auth}.  As the v1.32.0 binary does, a
    file's C{anonymous} wins over C{--anonymous-auth} and a file makes the C{--oidc-*} flags
    ignored, without an error (the source's C{FlagsSet} checks do not fire there).

    @param oidc: keyword arguments of L{oidc_flags_config}, or C{None} (no C{--oidc-*}).
    @return: C{{"jwt": [...], "anonymous": {"enabled": bool, "conditions": [...]}}}
        (C{"flag": True} in C{anonymous} when it comes from C{--anonymous-auth}).
    @raise ConfigError: a bad file, C{--anonymous-auth} given with a file C{anonymous}
        (C{anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is
        configured in authentication configuration file}), or C{invalid authentication
        configuration: <errors>}.
    """
    if config_file:
        config = load_authentication_config(config_file)
    else:
        config = {"jwt": [oidc_flags_config(**oidc)] if oidc else [], "anonymous": None}
    errs = validate_authentication_config(config, disallowed_issuers)
    if errs:
        raise ConfigError(aggregate_message(errs))
    if config.get("anonymous") is None:
        config["anonymous"] = {"enabled": anonymous_flag, "flag": True}
    return config


__all__ = ["ConfigError", "authentication_config", "load_authentication_config",
           "oidc_flags_config", "validate_authentication_config"]
