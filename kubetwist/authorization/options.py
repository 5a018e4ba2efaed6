# -*- test-case-name: tests.authorization.test_options -*-
"""
The authorization flags: upstream C{pkg/kubeapiserver/options/authorization.go}
(C{BuiltInAuthorizationOptions.Validate}, C{buildAuthorizationConfiguration}) and the
structured C{--authorization-config} file (C{k8s.io/apiserver/pkg/apis/apiserver}:
C{AuthorizationConfiguration} C{v1alpha1}, C{v1beta1} and C{v1}, loaded strictly, defaulted
and validated as C{load.LoadFromFile} and C{validation.ValidateAuthorizationConfiguration}).

L{validate_options} runs at start (C{twistd kubeapi} turns its C{ValueError} into the one-line
usage error) and leaves the parsed settings in the options; L{build_authorizer} builds the
union the server runs with.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Optional

import yaml
from twisted.logger import Logger
from zope.interface import implementer

from kubetwist.authorization.authorizer import IAuthorizer, IRuleResolver

__all__ = [
    "AuthorizerEntry", "AuthorizationConfigError", "build_authorizer", "duration_seconds",
    "go_duration", "load_authorization_config", "parse_go_duration", "validate_options",
]

#: Upstream C{modes.AuthorizationModeChoices}, the order of the flag's help.
MODE_CHOICES = ("AlwaysAllow", "AlwaysDeny", "ABAC", "Webhook", "RBAC", "Node")
#: The types an C{AuthorizationConfiguration} knows (upstream's sorted C{knownTypes}).
KNOWN_TYPES = ("ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook")
#: Types that may appear more than once (upstream C{repeatableTypes}).
REPEATABLE_TYPES = ("Webhook",)
_API_VERSIONS = ("apiserver.config.k8s.io/v1alpha1", "apiserver.config.k8s.io/v1beta1",
                 "apiserver.config.k8s.io/v1")
#: The webhook flags whose use excludes C{--authorization-config} (upstream's
#: C{AreLegacyFlagsSet}).
LEGACY_FLAGS = ("authorization-mode", "authorization-webhook-config-file",
                "authorization-webhook-version", "authorization-webhook-cache-authorized-ttl",
                "authorization-webhook-cache-unauthorized-ttl")


log = Logger()


class AuthorizationConfigError(ValueError):
    """A start-up error of the authorization flags or files; C{str()} is upstream's text."""


# --- durations -------------------------------------------------------------------------------

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_go_duration(text: str) -> float:
    """
    Go's C{time.ParseDuration} (signed: C{-1s}) in seconds.

    @raise ValueError: C{time: invalid duration "<text>"}.
    """
    s = str(text).strip()
    sign = 1.0
    if s[:1] in ("-", "+"):
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not s or pos != len(s):
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


def duration_seconds(value: Any) -> float:
    """A flag value that may still be Go duration text, in seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    return parse_go_duration(value)


def go_duration(seconds: float) -> str:
    """Go's C{Duration.String()} of C{seconds} (C{5m0s}, C{30s}, C{1.5s}, C{-1s}, C{0s})."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim(ns / size) + unit
    h, rest = divmod(ns, 3600 * 10**9)
    m, rest = divmod(rest, 60 * 10**9)
    secs = _trim(rest / 1e9)
    if h:
        return f"{sign}{h}h{m}m{secs}s"
    if m:
        return f"{sign}{m}m{secs}s"
    return f"{sign}{secs}s"


_YAML_PROBLEMS = (
    ("expected the node content", "did not find expected node content"),
    ("expected ',' or ']'", "did not find expected ',' or ']'"),
    ("expected ',' or '}'", "did not find expected ',' or '}'"),
    ("mapping values are not allowed here", "mapping values are not allowed in this context"),
    ("could not find expected ':'", "could not find expected ':'"),
    ("found character '\\t' that cannot start any token",
     "found character that cannot start any token"),
)


def yaml_error(e: Exception, data: bytes) -> str:
    """Go's C{sigs.k8s.io/yaml} text (C{yaml: line N: ...}) for a PyYAML error on C{data}."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    for start, go in _YAML_PROBLEMS:
        if problem.startswith(start):
            problem = go
            break
    if mark is None:
        return f"yaml: {problem}"
    line = mark.line + 1
    if mark.index >= len(data.rstrip(b"\n")) and data.endswith(b"\n") and line > 1:
        line -= 1  # Go reports the last line of content at the end of the stream
    return f"yaml: line {line}: {problem}"


def _trim(x: float) -> str:
    text = f"{x:.9f}".rstrip("0").rstrip(".")
    return text or "0"


# --- the structured configuration ------------------------------------------------------------


@dataclass
class AuthorizerEntry:
    """One C{authorizers[]} entry: C{type}, C{name}, and for webhooks their settings."""

    type: str
    name: str
    webhook: Any = None  # a kubetwist.authorization.webhook.WebhookSettings


_DURATION = "duration"
#: The decoded types (upstream C{apiserver/v1beta1} structs): C{(Go struct name, {json field:
#: str | _DURATION | (list element struct) | struct})}.
_MATCH_CONDITION = ("WebhookMatchCondition", {"expression": str})
_CONNECTION_INFO = ("WebhookConnectionInfo", {"type": str, "kubeConfigFile": str})
_WEBHOOK = ("WebhookConfiguration", {
    "authorizedTTL": _DURATION, "unauthorizedTTL": _DURATION, "timeout": _DURATION,
    "subjectAccessReviewVersion": str, "matchConditionSubjectAccessReviewVersion": str,
    "failurePolicy": str, "connectionInfo": _CONNECTION_INFO, "matchConditions": [_MATCH_CONDITION],
})
_AUTHORIZER = ("AuthorizerConfiguration", {"type": str, "name": str, "webhook": _WEBHOOK})
_CONFIGURATION = ("AuthorizationConfiguration", {"apiVersion": str, "kind": str,
                                                 "authorizers": [_AUTHORIZER]})


class _Decoding:
    """Go's C{encoding/json} into the structs above, strict as upstream's decoder: the first
    type mismatch (C{json: cannot unmarshal number into Go struct field
    WebhookConfiguration.authorizers.webhook.timeout of type string}), a bad duration (which
    stops decoding at once), then every unknown field."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.type_error = ""
        self.unknown: list[str] = []

    def _mismatch(self, value: Any, struct: str, path: list[str], go_type: str) -> None:
        from kubetwist.runtime.gofmt import json_kind as _go_type

        if not self.type_error:
            self.type_error = (f"json: cannot unmarshal {_go_type(value)} into Go struct field "
                               f"{struct}.{'.'.join(path)} of type {go_type}")

    def struct(self, obj: dict, spec: tuple, names: list[str], where: str) -> None:
        struct, fields = spec
        for key, value in obj.items():
            p = f"{where}.{key}" if where else str(key)
            kind = fields.get(key)
            if kind is None:
                self.unknown.append(p)
                continue
            if value is None:
                continue
            path = names + [str(key)]
            if kind is str or kind == _DURATION:
                if not isinstance(value, str):
                    self._mismatch(value, struct, path, "string")
                elif kind == _DURATION:
                    parse_go_duration(value)  # raises ValueError: time: invalid duration "x"
            elif isinstance(kind, list):
                elem = kind[0]
                if not isinstance(value, list):
                    self._mismatch(value, struct, path, f"[]{self.version}.{elem[0]}")
                    continue
                for i, item in enumerate(value):
                    if item is None:
                        continue
                    if not isinstance(item, dict):
                        self._mismatch(item, struct, path, f"{self.version}.{elem[0]}")
                        continue
                    self.struct(item, elem, path, f"{p}[{i}]")
            elif not isinstance(value, dict):
                self._mismatch(value, struct, path, f"{self.version}.{kind[0]}")
            else:
                self.struct(value, kind, path, p)


def load_authorization_config(path: str) -> dict:
    """
    Upstream C{load.LoadFromFile}: the file's C{AuthorizationConfiguration} (a dict, webhook
    TTLs defaulted to 5m/30s), decoded strictly.

    @raise AuthorizationConfigError: C{open <path>: no such file or directory}, C{failed to
        load AuthorizationConfiguration from file: <decoding error>}.
    """
    return parse_authorization_config(_read_config(path))


def _read_config(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise AuthorizationConfigError(f"open {path}: no such file or directory") from None
    except IsADirectoryError:
        raise AuthorizationConfigError(f"read {path}: is a directory") from None
    except OSError as e:
        raise AuthorizationConfigError(f"open {path}: {e.strerror or e}") from None


def parse_authorization_config(data: bytes) -> dict:
    """Upstream C{load.LoadFromData} (see L{load_authorization_config})."""
    prefix = "failed to load AuthorizationConfiguration from file: "
    if not data.strip():
        doc: Any = {"authorizers": []}
    else:
        try:
            doc = yaml.safe_load(data)
        except yaml.YAMLError as e:
            raise AuthorizationConfigError(f"{prefix}{yaml_error(e, data)}") from None
        if not isinstance(doc, dict):
            raise AuthorizationConfigError(
                f"{prefix}couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{'array' if isinstance(doc, list) else 'string'} into Go value of type "
                'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
                '"json:\\"kind,omitempty\\"" }')
        api_version, kind = doc.get("apiVersion") or "", doc.get("kind") or ""
        if not kind:
            raise AuthorizationConfigError(f"{prefix}Object 'Kind' is missing in "
                                           f"'{data.decode('utf-8', 'replace').strip()}'")
        if not api_version:
            raise AuthorizationConfigError(f"{prefix}Object 'apiVersion' is missing in "
                                           f"'{data.decode('utf-8', 'replace').strip()}'")
        if kind != "AuthorizationConfiguration" or api_version not in _API_VERSIONS:
            raise AuthorizationConfigError(
                f'{prefix}no kind "{kind}" is registered for version "{api_version}" in scheme '
                '"pkg/apis/apiserver/load/load.go:32"')
        decoding = _Decoding(api_version.rpartition("/")[2])
        try:
            decoding.struct(doc, _CONFIGURATION, [], "")
        except ValueError as e:
            raise AuthorizationConfigError(f"{prefix}{e}") from None
        if decoding.type_error:
            raise AuthorizationConfigError(f"{prefix}{decoding.type_error}")
        unknown = decoding.unknown
        if unknown:
            raise AuthorizationConfigError(
                f"{prefix}strict decoding error: " +
                ", ".join(f'unknown field "{u}"' for u in unknown))
    authorizers = doc.get("authorizers") or []
    for a in authorizers:
        webhook = (a or {}).get("webhook") if isinstance(a, dict) else None
        if isinstance(webhook, dict):
            webhook.setdefault("authorizedTTL", "5m0s")
            webhook.setdefault("unauthorizedTTL", "30s")
    doc["authorizers"] = authorizers
    return doc


_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character "
                "(e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _duration_field(webhook: dict, key: str) -> Optional[float]:
    value = webhook.get(key)
    if value in (None, ""):
        return 0.0
    try:
        return parse_go_duration(value)
    except ValueError:
        return None


def validate_authorization_config(doc: dict) -> tuple[list[AuthorizerEntry], list]:
    """
    Upstream C{ValidateAuthorizationConfiguration} (and C{ValidateWebhookConfiguration}).

    @return: C{(entries, field errors)}; the entries are meaningful only without errors.
    """
    from kubetwist.authorization.webhook import WebhookSettings, compile_match_conditions
    from kubetwist.runtime.field import (
        Path,
        duplicate,
        invalid,
        not_supported,
        required,
    )

    errs: list = []
    entries: list[AuthorizerEntry] = []
    authorizers = doc.get("authorizers") or []
    if not authorizers:
        errs.append(required(Path("authorizers"),
                             "at least one authorization mode must be defined"))
    seen_types: set[str] = set()
    seen_names: set[str] = set()
    for i, a in enumerate(authorizers):
        a = a if isinstance(a, dict) else {}
        p = Path("authorizers").index(i)
        a_type = a.get("type") or ""
        if not a_type:
            errs.append(required(p.child("type"), ""))
            continue
        if a_type not in KNOWN_TYPES:
            errs.append(not_supported(p.child("type"), a_type, KNOWN_TYPES))
            continue
        if a_type in seen_types and a_type not in REPEATABLE_TYPES:
            errs.append(duplicate(p.child("type"), a_type))
            continue
        seen_types.add(a_type)
        name = a.get("name") or ""
        if not name:
            errs.append(required(p.child("name"), ""))
        elif name in seen_names:
            errs.append(duplicate(p.child("name"), name))
        elif len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
            detail = ("must be no more than 253 characters" if len(name) > 253 else _DNS1123_MSG)
            errs.append(invalid(p.child("name"), name, f"authorizer name is invalid: {detail}"))
        seen_names.add(name)
        webhook = a.get("webhook")
        if a_type != "Webhook":
            if webhook is not None:
                errs.append(invalid(p.child("webhook"), "non-null",
                                    "may only be specified when type=Webhook"))
            entries.append(AuthorizerEntry(a_type, name))
            continue
        if webhook is None:
            errs.append(required(p.child("webhook"), "required when type=Webhook"))
            continue
        timeout = _duration_field(webhook, "timeout")
        if timeout == 0:
            errs.append(required(p.child("timeout"), ""))
        elif timeout is None or timeout > 30 or timeout < 0:
            errs.append(invalid(p.child("timeout"), _dur_text(webhook, "timeout", timeout),
                                "must be > 0s and <= 30s"))
        ttls = {}
        for key in ("authorizedTTL", "unauthorizedTTL"):
            ttl = _duration_field(webhook, key)
            ttls[key] = ttl
            if ttl == 0:
                errs.append(required(p.child(key), ""))
            elif ttl is None or ttl < 0:
                errs.append(invalid(p.child(key), _dur_text(webhook, key, ttl), "must be > 0s"))
        version = webhook.get("subjectAccessReviewVersion") or ""
        if not version:
            errs.append(required(p.child("subjectAccessReviewVersion"), ""))
        elif version not in ("v1", "v1beta1"):
            errs.append(not_supported(p.child("subjectAccessReviewVersion"), version,
                                      ["v1", "v1beta1"]))
        conditions = webhook.get("matchConditions") or []
        mc_version = webhook.get("matchConditionSubjectAccessReviewVersion") or ""
        if not mc_version:
            if conditions:
                errs.append(required(p.child("matchConditionSubjectAccessReviewVersion"),
                                     "required if match conditions are specified"))
        elif mc_version != "v1":
            errs.append(not_supported(p.child("matchConditionSubjectAccessReviewVersion"),
                                      mc_version, ["v1"]))
        policy = webhook.get("failurePolicy") or ""
        if not policy:
            errs.append(required(p.child("failurePolicy"), ""))
        elif policy not in ("NoOpinion", "Deny"):
            errs.append(not_supported(p.child("failurePolicy"), policy, ["NoOpinion", "Deny"]))
        conn = webhook.get("connectionInfo") or {}
        conn_type = conn.get("type") or ""
        kubeconfig = conn.get("kubeConfigFile")
        if not conn_type:
            errs.append(required(p.child("connectionInfo", "type"), ""))
        elif conn_type == "InClusterConfig":
            if kubeconfig is not None:
                errs.append(invalid(p.child("connectionInfo", "kubeConfigFile"), kubeconfig,
                                    "can only be set when type=KubeConfigFile"))
        elif conn_type == "KubeConfigFile":
            kp = p.child("connectionInfo", "kubeConfigFile")
            if not kubeconfig:
                errs.append(required(kp, ""))
            elif not os.path.isabs(kubeconfig):
                errs.append(invalid(kp, kubeconfig, "must be an absolute path"))
            elif not os.path.exists(kubeconfig):
                errs.append(invalid(kp, kubeconfig, f"error loading file: stat {kubeconfig}: "
                                                    "no such file or directory"))
            elif not os.path.isfile(kubeconfig):
                errs.append(invalid(kp, kubeconfig, "must be a regular file"))
        else:
            from kubetwist.runtime.field import GoValueError
            from kubetwist.runtime.gofmt import quote

            # upstream prints the whole connectionInfo struct with %#v
            pointer = "(*string)(nil)" if kubeconfig is None else "(*string)(0xc000010000)"
            errs.append(GoValueError(
                "NotSupported", p.child("connectionInfo", "type"),
                f"api.WebhookConnectionInfo{{Type:{quote(conn_type)}, KubeConfigFile:{pointer}}}",
                'supported values: "InClusterConfig", "KubeConfigFile"'))
        _, mc_errs = compile_match_conditions(conditions, p)
        errs.extend(mc_errs)
        entries.append(AuthorizerEntry("Webhook", name, WebhookSettings(
            kubeconfig=kubeconfig or "", version=version,
            authorized_ttl=ttls["authorizedTTL"] or 0.0,
            unauthorized_ttl=ttls["unauthorizedTTL"] or 0.0,
            timeout=timeout or 0.0,
            decision_on_error="deny" if policy == "Deny" else "noopinion",
            match_conditions=list(conditions), name=name,
            in_cluster=conn_type == "InClusterConfig")))
    return entries, errs


def load_and_validate(data: bytes, require_types: frozenset = frozenset()
                      ) -> list[AuthorizerEntry]:
    """
    Upstream C{LoadAndValidateData}: parse, validate, then kube-apiserver's own checks (an
    authorizer other than a webhook is named after its type in lower case; on a reload, the
    types other than C{Webhook} of the start must all remain).

    @raise AuthorizationConfigError: upstream's text (one line, C{[e1, e2]} for several).
    """
    entries, errs = validate_authorization_config(parse_authorization_config(data))
    if errs:
        raise AuthorizationConfigError(_aggregate([str(e) for e in errs]))
    problems: list[str] = []
    seen: set[str] = set()
    for entry in entries:
        if entry.type == "Webhook":
            continue
        seen.add(entry.type)
        if entry.name != entry.type.lower():
            problems.append(f"expected name {entry.type.lower()} for authorizer {entry.type} "
                            f"instead of {entry.name}")
    missing = sorted(set(require_types) - seen)
    if missing:
        problems.append(f"missing required types: [{' '.join(missing)}]")
    if problems:
        raise AuthorizationConfigError(_aggregate(problems))
    return entries


def _dur_text(webhook: dict, key: str, value: Optional[float]) -> str:
    return go_duration(value) if value is not None else str(webhook.get(key))


def _aggregate(texts: list[str]) -> str:
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


# --- the flags -------------------------------------------------------------------------------


def _changed(options: Any, key: str) -> bool:
    defaults = getattr(options, "defaults", None) or {}
    value = options.get(key)
    if isinstance(value, list):  # authorization-mode once parsed
        value = ",".join(value)
    if key not in defaults:
        return bool(value)
    default = defaults[key]
    if isinstance(value, float) and isinstance(default, str):  # a TTL once parsed
        return value != parse_go_duration(default)
    return value != default


def validate_options(options: Any) -> None:
    """
    Upstream C{BuiltInAuthorizationOptions.Validate} and the file loading of
    C{buildAuthorizationConfiguration}: check the authorization flags of C{options} (a
    mapping; C{options.defaults}, when present, tells which flags were given) and read their
    files.  Leaves C{authorization-mode} a list of names, the webhook TTLs in seconds and,
    with C{--authorization-config}, C{authorization-entries} the list of L{AuthorizerEntry}.

    @raise AuthorizationConfigError: upstream's one-line start error (see the tests).
    """
    from kubetwist import authorization

    config_file = options.get("authorization-config") or ""
    legacy_set = any(_changed(options, k) for k in LEGACY_FLAGS)
    for key in ("authorization-webhook-cache-authorized-ttl",
                "authorization-webhook-cache-unauthorized-ttl"):
        value = options.get(key)
        if isinstance(value, str):
            try:
                options[key] = parse_go_duration(value)
            except ValueError as e:
                raise AuthorizationConfigError(
                    f'invalid argument "{value}" for "--{key}" flag: {e}') from None
    if config_file:
        if legacy_set:
            raise AuthorizationConfigError(
                "--authorization-config can not be specified when --authorization-mode or "
                "--authorization-webhook-* flags are defined")
        entries = load_and_validate(_read_config(config_file))
        for entry in entries:
            if entry.type == "ABAC":
                _check_abac(options, required=False)
            elif entry.type == "Webhook":
                _check_webhook(entry.webhook)
            elif entry.type not in authorization.MODE_FACTORIES:
                raise AuthorizationConfigError(
                    f'authorization-mode "{entry.type}" is not a valid mode')
        options["authorization-entries"] = entries
        options["authorization-mode"] = [e.type for e in entries]
        return
    modes = options.get("authorization-mode")
    if isinstance(modes, str):
        modes = [m.strip() for m in modes.split(",") if m.strip()]
    modes = list(modes or [])
    options["authorization-mode"] = modes
    version = options.get("authorization-webhook-version") or "v1beta1"
    for m in modes:
        if m == "ABAC":
            if not options.get("authorization-policy-file"):
                raise AuthorizationConfigError(
                    "authorization-mode ABAC's authorization policy file not passed")
        elif m == "Webhook":
            if not options.get("authorization-webhook-config-file"):
                raise AuthorizationConfigError(
                    "authorization-mode Webhook's authorization config file not passed")
        elif m not in authorization.MODE_FACTORIES:
            raise AuthorizationConfigError(f'authorization-mode "{m}" is not a valid mode')
    errors: list[str] = []
    if options.get("authorization-policy-file") and "ABAC" not in modes:
        errors.append("cannot specify --authorization-policy-file without mode ABAC")
    if options.get("authorization-webhook-config-file") and "Webhook" not in modes:
        errors.append("cannot specify --authorization-webhook-config-file without mode Webhook")
    if len(set(modes)) != len(modes):
        quoted = " ".join('"' + m + '"' for m in modes)
        errors.append(f"authorization-mode [{quoted}] has mode specified more than once")
    if errors:
        raise AuthorizationConfigError(_aggregate(errors))
    if "ABAC" in modes:
        _check_abac(options)
    if "Webhook" in modes:
        from kubetwist.authorization.webhook import WebhookSettings

        if version not in ("v1", "v1beta1"):
            raise AuthorizationConfigError(
                f'invalid authorization config: unsupported webhook authorizer version '
                f'"{version}", supported versions are "v1", "v1beta1"')
        _check_webhook(WebhookSettings(kubeconfig=options["authorization-webhook-config-file"],
                                       version=version))


def _check_abac(options: Any, required: bool = True) -> None:
    from kubetwist.authorization.abac import PolicyLoadError, load_policy_file

    if required and not options.get("authorization-policy-file"):
        raise AuthorizationConfigError(
            "authorization-mode ABAC's authorization policy file not passed")
    try:
        load_policy_file(options.get("authorization-policy-file") or "")
    except PolicyLoadError as e:
        raise AuthorizationConfigError(f"invalid authorization config: {e}") from None


def _check_webhook(settings: Any) -> None:
    from kubetwist.authorization.webhook import load_webhook_kubeconfig, tls_policy_for

    if settings.in_cluster:
        raise AuthorizationConfigError(
            "invalid authorization config: unable to load in-cluster configuration, "
            "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined")
    try:
        tls_policy_for(load_webhook_kubeconfig(settings.kubeconfig))
    except ValueError as e:
        raise AuthorizationConfigError(f"invalid authorization config: {e}") from None


def build_authorizer(options: Any, config: Any) -> Any:
    """
    The server's authorizer for the (validated) C{options}: with C{--authorization-config} a
    L{ReloadingAuthorizer} over the union of the file's C{authorizers} in order, else
    L{from_modes <kubetwist.authorization.from_modes>} over C{--authorization-mode}; both
    behind the privileged-group authorizer.

    @param config: the L{AuthorizerConfig <kubetwist.authorization.AuthorizerConfig>}.
    """
    from kubetwist import authorization

    entries = options.get("authorization-entries")
    if not entries:
        return authorization.from_modes(options["authorization-mode"], config)
    return ReloadingAuthorizer(options["authorization-config"], entries, config)


#: Upstream's C{reloadInterval}: how often the C{--authorization-config} file is read again.
RELOAD_INTERVAL = 60.0


@implementer(IAuthorizer, IRuleResolver)
class ReloadingAuthorizer:
    """
    Upstream C{reloadableAuthorizerResolver}: the union of the C{--authorization-config}
    file's authorizers, rebuilt when the file changes (read every L{RELOAD_INTERVAL} seconds).
    The C{Node}, C{RBAC} and C{ABAC} authorizers are built once, at start, and reused; a new
    file must keep every non-webhook type of the start and may add none.  A file that cannot
    be read or is invalid is logged and the running authorizers stay.

    @param path: the file.
    @param entries: its validated L{AuthorizerEntry} list at start.
    @param config: the L{AuthorizerConfig <kubetwist.authorization.AuthorizerConfig>}
        (C{reactor} schedules the reloads; C{None}: no reloads).
    """

    def __init__(self, path: str, entries: list[AuthorizerEntry], config: Any) -> None:
        from kubetwist import authorization

        self.path = path
        self.config = config
        self.reactor = getattr(config, "reactor", None)
        self.static: dict[str, Any] = {}
        for entry in entries:
            if entry.type in ("Node", "RBAC", "ABAC"):
                self.static[entry.type] = authorization.MODE_FACTORIES[entry.type](config)
        self.required = frozenset(self.static)
        try:
            self.last_data: Optional[bytes] = _read_config(path)
        except AuthorizationConfigError:
            self.last_data = None
        self.entries = entries
        self.current = self._union(entries)
        self.reloads = 0
        self._call: Any = None
        if self.reactor is not None:
            self._call = self.reactor.callLater(RELOAD_INTERVAL, self._tick)

    def _union(self, entries: list[AuthorizerEntry]) -> Any:
        from kubetwist import authorization
        from kubetwist.authorization import webhook

        out: list[Any] = [authorization.PrivilegedGroups()]
        for entry in entries:
            if entry.type == "Webhook":
                out.append(webhook.build(entry.webhook, self.reactor))
            elif entry.type in self.static:
                out.append(self.static[entry.type])
            elif entry.type in ("Node", "RBAC", "ABAC"):
                raise AuthorizationConfigError(
                    f"authorizer type {entry.type} is not allowed if it was not enabled at "
                    "initial server startup")
            else:
                out.append(authorization.MODE_FACTORIES[entry.type](self.config))
        return authorization.UnionAuthorizer(out)

    def _tick(self) -> None:
        self.check_file()
        self._call = self.reactor.callLater(RELOAD_INTERVAL, self._tick)

    def stop(self) -> None:
        """Stop reading the file."""
        if self._call is not None and self._call.active():
            self._call.cancel()
        self._call = None

    def check_file(self) -> bool:
        """Upstream C{checkFile}: reload when the bytes changed; C{True} when reloaded."""
        try:
            data = _read_config(self.path)
        except AuthorizationConfigError as e:
            log.error("reloading authorization config: {err}", err=str(e))
            return False
        if data == self.last_data:
            return False
        log.info("found new authorization config data")
        self.last_data = data
        try:
            entries = load_and_validate(data, self.required)
            if entries == self.entries:
                return False
            current = self._union(entries)
        except (AuthorizationConfigError, ValueError) as e:
            log.error("reloading authorization config: {err}", err=str(e))
            return False
        self.entries = entries
        self.current = current
        self.reloads += 1
        log.info("reloaded authz config")
        return True

    def authorize(self, attributes: Any) -> Any:
        """The current union's decision."""
        return self.current.authorize(attributes)

    def rules_for(self, user: Any, namespace: str) -> tuple[list, list, bool, str]:
        """The current union's rules."""
        return self.current.rules_for(user, namespace)
