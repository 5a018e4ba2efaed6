# -*- test-case-name: tests.admission.test_podsecurity -*-
"""
The PodSecurity plugin's configuration: upstream C{k8s.io/pod-security-admission/admission/api}
(C{PodSecurityConfiguration} of C{pod-security.admission.config.k8s.io} C{v1}, C{v1beta1} and
C{v1alpha1}; their defaulting, C{load.LoadFromData}, C{validation}, C{ToPolicy}) as
kube-apiserver v1.32's C{PodSecurity} plugin reads it from C{--admission-control-config-file}.

::

    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: privileged, enforce-version: latest, audit: ..., audit-version: ...,
               warn: ..., warn-version: ...}
    exemptions: {usernames: [...], namespaces: [...], runtimeClasses: [...]}

Every default not given is C{privileged} / C{latest}; no configuration at all means that
default everywhere and no exemptions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

import yaml

from kubetwist.admission.plugins.podsecurity.api import (
    LevelError,
    LevelVersion,
    Policy,
    parse_level,
    parse_version,
)
from kubetwist.apimachinery.validation import name_is_dns_label, name_is_dns_subdomain
from kubetwist.runtime import field as fielderr

__all__ = ["GROUP", "VERSIONS", "PodSecurityConfiguration", "ConfigurationError",
           "load_configuration"]

GROUP = "pod-security.admission.config.k8s.io"
#: The versions kube-apiserver v1.32's scheme decodes, newest first.
VERSIONS = ("v1", "v1beta1", "v1alpha1")
KIND = "PodSecurityConfiguration"

_DEFAULT_KEYS = ("enforce", "enforce-version", "audit", "audit-version", "warn", "warn-version")
_EXEMPTION_KEYS = ("usernames", "namespaces", "runtimeClasses")
_GO_DEFAULTS = "PodSecurityDefaults"
_GO_EXEMPTIONS = "PodSecurityExemptions"


class ConfigurationError(ValueError):
    """
    The configuration does not load; the text is upstream's (e.g. C{strict decoding error:
    unknown field "defaults.level"}, C{PodSecurity invalid: exemptions.namespaces[0]: Invalid
    value: ...}).

    @ivar initialization: the error is the plugin's initialisation check (levels, versions,
        exemptions) rather than the decoding of the configuration.
    """

    def __init__(self, message: str, initialization: bool = False) -> None:
        super().__init__(message)
        self.initialization = initialization

    def plugin_error(self) -> str:
        """The text kube-apiserver v1.32 stops with, after C{failed to apply admission: }:
        C{couldn't init admission plugin "PodSecurity": <decoding error>} or C{failed to
        initialize admission plugin "PodSecurity": <initialisation error>}."""
        if self.initialization:
            return f'failed to initialize admission plugin "PodSecurity": {self}'
        return f'couldn\'t init admission plugin "PodSecurity": {self}'


@dataclass
class PodSecurityConfiguration:
    """
    The internal form (upstream C{api.PodSecurityConfiguration}), defaults applied.

    @ivar defaults: C{{"enforce": "privileged", "enforce-version": "latest", ...}}.
    @ivar usernames: exempt user names.
    @ivar namespaces: exempt namespaces.
    @ivar runtime_classes: exempt RuntimeClass names.
    @ivar policy: the defaults as a L{Policy}.
    """

    defaults: dict[str, str] = field(default_factory=lambda: {
        k: ("latest" if k.endswith("-version") else "privileged") for k in _DEFAULT_KEYS})
    usernames: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    runtime_classes: list[str] = field(default_factory=list)
    policy: Optional[Policy] = None


def _go_json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_error(value: Any, struct: str, path: str, go_type: str) -> ConfigurationError:
    return ConfigurationError(
        f"json: cannot unmarshal {_go_json_kind(value)} into Go struct field {struct}.{path} "
        f"of type {go_type}")


def _decode(doc: dict) -> PodSecurityConfiguration:
    """Strict decoding of one versioned document (upstream's codec with C{EnableStrict})."""
    config = PodSecurityConfiguration()
    unknown = [k for k in doc if k not in ("apiVersion", "kind", "defaults", "exemptions")]
    defaults = doc.get("defaults")
    if defaults is not None and not isinstance(defaults, dict):
        raise _type_error(defaults, "PodSecurityConfiguration", "defaults", _GO_DEFAULTS)
    for key, value in (defaults or {}).items():
        if key not in _DEFAULT_KEYS:
            unknown.append(f"defaults.{key}")
        elif value is not None:
            if not isinstance(value, str):
                raise _type_error(value, _GO_DEFAULTS, f"defaults.{key}", "string")
            if value:
                config.defaults[key] = value
    exemptions = doc.get("exemptions")
    if exemptions is not None and not isinstance(exemptions, dict):
        raise _type_error(exemptions, "PodSecurityConfiguration", "exemptions", _GO_EXEMPTIONS)
    lists: dict[str, list[str]] = {}
    for key, value in (exemptions or {}).items():
        if key not in _EXEMPTION_KEYS:
            unknown.append(f"exemptions.{key}")
            continue
        if value is None:
            continue
        if not isinstance(value, list):
            raise _type_error(value, _GO_EXEMPTIONS, f"exemptions.{key}", "[]string")
        for item in value:
            if not isinstance(item, str):
                raise _type_error(item, _GO_EXEMPTIONS, f"exemptions.{key}", "string")
        lists[key] = list(value)
    if unknown:
        raise ConfigurationError("strict decoding error: " + ", ".join(
            f'unknown field "{k}"' for k in unknown))
    config.usernames = lists.get("usernames", [])
    config.namespaces = lists.get("namespaces", [])
    config.runtime_classes = lists.get("runtimeClasses", [])
    return config


def _to_policy(defaults: dict[str, str]) -> Policy:
    """Upstream C{ToPolicy} (C{CompleteConfiguration}).

    @raise ConfigurationError: C{PodSecurity configuration error: enforce: must be one of
        privileged, baseline, restricted} (several errors: C{[a, b]})."""
    errs: list[str] = []
    parsed: dict[str, Any] = {}
    for key in _DEFAULT_KEYS:
        value = defaults.get(key, "")
        if not value:
            errs.append(f"{key}: required")
            continue
        try:
            parsed[key] = parse_version(value) if key.endswith("-version") else parse_level(value)
        except LevelError as e:
            errs.append(f"{key}: {e}")
    if errs:
        unique = list(dict.fromkeys(errs))
        text = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
        raise ConfigurationError(f"PodSecurity configuration error: {text}", True)
    return Policy(*(LevelVersion(parsed[m], parsed[m + "-version"])
                    for m in ("enforce", "audit", "warn")))


def _validate(config: PodSecurityConfiguration) -> list[fielderr.FieldError]:
    """Upstream C{ValidatePodSecurityConfiguration}'s exemption rules (the levels and
    versions already passed L{_to_policy})."""
    errs: list[fielderr.FieldError] = []

    def unique(name: str, values: list[str], check) -> None:
        seen: set[str] = set()
        for i, value in enumerate(values):
            path = fielderr.Path("exemptions", name).index(i)
            problems = check(value)
            if problems:
                errs.append(fielderr.invalid(path, value, ", ".join(problems)))
            elif value in seen:
                errs.append(fielderr.duplicate(path, value))
            else:
                seen.add(value)

    unique("namespaces", config.namespaces, lambda v: name_is_dns_label(v, False))
    unique("runtimeClasses", config.runtime_classes, lambda v: name_is_dns_subdomain(v, False))
    unique("usernames", config.usernames,
           lambda v: [] if v else ["username must not be empty"])
    return errs


def load_configuration(raw: Any = None) -> PodSecurityConfiguration:
    """
    Upstream C{load.LoadFromData} followed by the plugin's C{CompleteConfiguration} and
    C{ValidateConfiguration}.

    @param raw: the plugin's configuration from the AdmissionConfiguration: a dict (the
        embedded C{configuration} object or the decoded file), YAML/JSON text or bytes, or
        C{None} / empty for the defaults.
    @raise ConfigurationError: with upstream's text: an unknown apiVersion or kind, a strict
        decoding error (C{strict decoding error: unknown field "defaults.foo"}), a type error,
        C{PodSecurity configuration error: ...} (levels, versions) or
        C{PodSecurity invalid: ...} (exemptions); L{ConfigurationError.plugin_error} is the
        text kube-apiserver stops with.
    """
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    if isinstance(raw, str):
        if not raw.strip():
            raw = None
        else:
            try:
                raw = yaml.safe_load(raw)
            except yaml.YAMLError as e:
                raise ConfigurationError(f"error converting YAML to JSON: {e}") from None
    if not raw:
        config = PodSecurityConfiguration()
    else:
        if not isinstance(raw, dict):
            raise ConfigurationError(
                "couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{_go_json_kind(raw)} into Go value of type struct {{ APIVersion string "
                '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
        api_version, kind = raw.get("apiVersion") or "", raw.get("kind") or ""
        if not kind:
            raise ConfigurationError(f"Object 'Kind' is missing in '{json.dumps(raw)}'")
        group, _, version = api_version.rpartition("/")
        if group != GROUP or version not in VERSIONS or kind != KIND:
            raise ConfigurationError(
                f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                '"pkg/runtime/scheme.go:100"')
        config = _decode(raw)
    config.policy = _to_policy(config.defaults)
    errs = _validate(config)
    if errs:
        raise ConfigurationError(f"PodSecurity invalid: {fielderr.aggregate_message(errs)}",
                                 True)
    return config
