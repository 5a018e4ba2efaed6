# -*- test-case-name: tests.admission.test_config -*-
"""
C{--admission-control-config-file}: upstream C{k8s.io/apiserver/pkg/admission/config.go}
(C{ReadAdmissionConfiguration}, C{GetAdmissionPluginConfigurationFor}) over the
C{AdmissionConfiguration} kind of C{k8s.io/apiserver/pkg/apis/apiserver} (versions
C{apiserver.config.k8s.io/v1}, C{apiserver.config.k8s.io/v1alpha1} and the older
C{apiserver.k8s.io/v1alpha1}).

The file names plugins, each with an inline C{configuration} or a C{path} to a YAML/JSON file
(relative paths resolve against the file's directory).  Each plugin's configuration reaches it
as a dict (L{PluginContext.config <kubetwist.admission.registry.PluginContext.config>}); the
plugin decodes its own kind, as upstream's plugins do.  Names no plugin has are ignored, as
upstream ignores them.
"""

from __future__ import annotations

import errno as _errno
import json
import os
from typing import Any, Iterable

import yaml

from kubetwist.runtime import codec

__all__ = ["AdmissionConfigError", "read_admission_configuration"]

#: The group-versions that serve C{AdmissionConfiguration}.
API_VERSIONS = ("apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1",
                "apiserver.k8s.io/v1alpha1")
KIND = "AdmissionConfiguration"
#: Upstream's scheme name in its "no kind is registered" error.
_SCHEME = "pkg/server/options/admission.go:50"
_TOP_FIELDS = ("apiVersion", "kind", "plugins")
_PLUGIN_FIELDS = ("name", "path", "configuration")


class AdmissionConfigError(ValueError):
    """The start error for a bad configuration file; C{str()} is upstream's text (what
    kube-apiserver's C{command failed} line or fatal log prints)."""


def _fail(reason: str) -> AdmissionConfigError:
    return AdmissionConfigError(f"failed to apply admission: failed to read plugin config: "
                                f"{reason}")


def _go_os_error(e: OSError) -> str:
    """Go's text for an C{os} error's cause (C{no such file or directory})."""
    if e.errno == _errno.EISDIR:
        return "is a directory"
    return (e.strerror or str(e)).lower()


def _decode(data: bytes) -> Any:
    """The document as JSON values (JSON, or YAML converted as C{sigs.k8s.io/yaml} does).

    @raise AdmissionConfigError: upstream's text for malformed JSON/YAML.
    """
    if data.lstrip()[:1] == b"{":
        try:
            return json.loads(data)
        except ValueError as e:
            text = codec.go_json_error(data, e)
            if "property name" in str(e):  # Go: an object key must be a string
                text = text.replace("beginning of value", "beginning of object key string")
            raise _fail("couldn't get version/kind; json parse error: " + text) from None
    try:
        return yaml.load(data, Loader=codec.YAML_LOADER)  # noqa: S506
    except yaml.YAMLError as e:
        raise _fail("error converting YAML to JSON: " + codec.go_yaml_error(e, data)) from None


def _read_plugin_file(path: str) -> Any:
    """A plugin's C{path}: its document as JSON values.

    @raise AdmissionConfigError: upstream's fatal C{Couldn't open admission plugin
        configuration <path>: &fs.PathError{...}}, or a YAML error.
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        op = "read" if e.errno == _errno.EISDIR else "open"
        raise AdmissionConfigError(
            f"Couldn't open admission plugin configuration {path}: &fs.PathError{{Op:\"{op}\", "
            f"Path:\"{path}\", Err:{hex(e.errno or 0)}}}") from None
    if not data.strip():
        return None
    try:
        return yaml.load(data, Loader=codec.YAML_LOADER)  # noqa: S506
    except yaml.YAMLError as e:
        raise AdmissionConfigError(
            f"admission plugin configuration {path}: error converting YAML to JSON: "
            f"{codec.go_yaml_error(e, data)}") from None


def read_admission_configuration(path: str, plugin_names: Iterable[str]) -> dict[str, Any]:
    """
    Read C{--admission-control-config-file} (upstream C{ReadAdmissionConfiguration}, then
    C{ConfigFor} of each enabled plugin).

    @param path: the file (C{""}: none, no configuration).
    @param plugin_names: the enabled plugins: only their C{path} files are read, as upstream
        reads them (a file named for a disabled plugin is never opened).
    @return: C{{plugin name: configuration}} (the first entry of a name wins): the inline
        C{configuration} as given, or the C{path} file's document (a dict for every real
        configuration kind); plugins with neither are absent.
    @raise AdmissionConfigError: with upstream's text: C{unable to read admission control
        configuration from "<path>" [open <path>: no such file or directory]}, C{Object 'Kind'
        is missing in '<data>'}, C{no kind "AdmissionConfiguration" is registered for version
        "<v>" in scheme "..."}, C{strict decoding error: unknown field "plugins[0].x"}, each
        after C{failed to apply admission: failed to read plugin config: }; a plugin file that
        cannot be opened gives upstream's fatal C{Couldn't open admission plugin configuration
        <path>: &fs.PathError{...}}.
    """
    if not path:
        return {}
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        op = "read" if e.errno == _errno.EISDIR else "open"
        raise _fail(f'unable to read admission control configuration from "{path}" '
                    f"[{op} {path}: {_go_os_error(e)}]") from None
    doc = _decode(data)
    if doc is None:
        doc = {}
    text = data.decode("utf-8", "replace")
    if not isinstance(doc, dict):
        raise _fail("couldn't get version/kind; json parse error: json: cannot unmarshal "
                    f"{_go_json_type(doc)} into Go value of type struct {{ APIVersion string "
                    '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not kind:
        raise _fail(f"Object 'Kind' is missing in '{text}'")
    if not api_version:
        raise _fail(f"Object 'apiVersion' is missing in '{text}'")
    if api_version not in API_VERSIONS or kind != KIND:
        raise _fail(f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                    f'"{_SCHEME}"')
    unknown = [f'unknown field "{k}"' for k in doc if k not in _TOP_FIELDS]
    plugins = doc.get("plugins") or []
    if not isinstance(plugins, list):
        raise _fail("json: cannot unmarshal " + _go_json_type(plugins) + " into Go struct "
                    "field AdmissionConfiguration.plugins of type []"
                    + _go_package(api_version) + ".AdmissionPluginConfiguration")
    for i, p in enumerate(plugins):
        if not isinstance(p, dict):
            raise _fail("json: cannot unmarshal " + _go_json_type(p) + " into Go struct field "
                        "AdmissionConfiguration.plugins of type "
                        + _go_package(api_version) + ".AdmissionPluginConfiguration")
        unknown += [f'unknown field "plugins[{i}].{k}"' for k in p if k not in _PLUGIN_FIELDS]
    if unknown:
        raise _fail("strict decoding error: " + ", ".join(unknown))
    base = os.path.dirname(path)
    enabled = set(plugin_names)
    out: dict[str, Any] = {}
    for p in plugins:
        name = p.get("name") or ""
        if name in out:
            continue  # upstream's ConfigFor answers the first entry of a name
        if p.get("configuration") is not None:
            out[name] = p["configuration"]
        elif p.get("path") and name in enabled:
            plugin_path = p["path"]
            if not os.path.isabs(plugin_path):
                plugin_path = os.path.join(base or os.getcwd(), plugin_path)
            out[name] = _read_plugin_file(plugin_path)
    return out


def _go_json_type(value: Any) -> str:
    """Go's C{encoding/json} name of a JSON value's type (C{cannot unmarshal <type>})."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"


def _go_package(api_version: str) -> str:
    return api_version.rpartition("/")[2]
