# -*- test-case-name: tests.endpoints.test_decode -*-
"""
The request body decoder: upstream's serializer chain for a write, as
C{k8s.io/apiserver/pkg/endpoints/handlers} (create.go, update.go) runs it through
C{k8s.io/apimachinery/pkg/runtime/serializer} (json, yaml, protobuf, the recognizer and
C{transformDecodeError}), in one function every verb and subresource uses::

    content type -> JSON | YAML | protobuf -> apiVersion/kind (defaulted, checked)
      -> typed conversion (L{kubetwist.runtime.typed}) -> strict field validation
      (L{kubetwist.runtime.strict}, by C{fieldValidation}) -> object

It takes bytes and the expected kind, never a request: the handlers read the request
(C{Content-Type}, C{fieldValidation}) and hand the decoded object on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kubetwist.runtime import codec, errors, gotypes, strict, typed
from kubetwist.runtime import types as typetables

#: Media types a write body may have (protobuf only for kinds with a protobuf definition).
BODY_TYPES = (codec.JSON, codec.YAML, "application/x-yaml", "text/yaml", "")


@dataclass(frozen=True)
class Expect:
    """
    The kind a body must be.

    @ivar versions: the accepted versions, the first being the one a missing C{apiVersion}
        defaults to (Eviction takes C{policy/v1} and C{policy/v1beta1}).
    @ivar scheme: how an unknown kind is refused: C{""} as upstream's API group scheme words
        it (C{no kind "X" is registered for the internal version of group "apps" in
        scheme}), or the scheme's source location for the legacy core scheme of the pod
        subresources (C{no kind "X" is registered for version "v1" in scheme
        "pkg/api/legacyscheme/scheme.go:30"}).
    @ivar typed: apply typed conversion and strict decoding from the kind's type table (when
        there is one).
    @ivar unstructured: a custom resource (decoded as C{unstructured.Unstructured}, whose
        C{metadata} errors have no struct context).
    """

    group: str
    versions: tuple
    kind: str
    scheme: str = ""
    typed: bool = True
    unstructured: bool = False

    @property
    def version(self) -> str:
        return self.versions[0]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def api_versions(self) -> set:
        return {f"{self.group}/{v}" if self.group else v for v in self.versions}

    @property
    def type_name(self) -> Optional[str]:
        """The kind's full type-table name, or C{None} (custom resources)."""
        if not self.typed:
            return None
        return typetables.lookup_kind(self.group, self.version, self.kind)


@dataclass
class Decoded:
    """
    A decoded body.

    @ivar obj: the object, C{apiVersion}, C{kind} and C{metadata} present.
    @ivar warnings: the strict decoding errors to send as C{Warning}s (C{fieldValidation=Warn}).
    """

    obj: dict
    warnings: list


def unrecognized(kind: str, error: str, body: bytes) -> errors.StatusError:
    """400 BadRequest C{the object provided is unrecognized (must be of type Pod): couldn't get
    version/kind; json parse error: <error> (<first bytes>)} (upstream
    C{transformDecodeError} without a kind)."""
    return errors.new_bad_request(
        f"the object provided is unrecognized (must be of type {kind}): couldn't get "
        f"version/kind; json parse error: {error} ({codec.summarize_data(body)})")


def parse(body: bytes, content_type: str, expect: Expect) -> Any:
    """
    JSON or YAML text to a value (upstream's recognizer; YAML is converted to JSON first).

    @raise StatusError: 400 for malformed JSON (with Go's text), YAML, or nesting past
        10000 levels; 415 for another media type.
    """
    if content_type not in BODY_TYPES:
        raise errors.new_unsupported_media_type(content_type)
    try:
        return codec.decode_body(body, content_type or codec.JSON)
    except codec.JSONSyntaxError as e:
        raise unrecognized(expect.kind, str(e), body) from None
    except errors.StatusError as e:
        yaml_error = getattr(e, "yaml_error", None)
        if yaml_error is None:
            raise
        # upstream's YAML serializer error, as transformDecodeError words it
        raise errors.new_bad_request(
            f"the object provided is unrecognized (must be of type {expect.kind}): "
            f"{yaml_error} ({codec.summarize_data(body)})") from None


def check_kind(obj: dict, expect: Expect, body: bytes = b"") -> None:
    """
    Default a missing C{apiVersion} and C{kind} from C{expect} (upstream defaults them from
    the URL) and refuse others.

    @raise StatusError: 400 C{couldn't get version/kind; json parse error: ...} (not
        strings), C{the API version in the data (x) does not match the expected API version
        (y)}, C{X in version "v" cannot be handled as a Y: no kind "X" is registered ...}.
    """
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if (kind is not None and not isinstance(kind, str)) or (
            api_version is not None and not isinstance(api_version, str)):
        what = "kind" if kind is not None and not isinstance(kind, str) else "apiVersion"
        raise unrecognized(expect.kind, "json: cannot unmarshal "
                           f"{typed._json_kind(obj.get(what))} into Go struct field .{what} of "
                           "type string", body)
    if not kind:
        obj["kind"] = kind = expect.kind
    if not api_version:
        obj["apiVersion"] = api_version = expect.api_version
    if expect.scheme:
        if kind != expect.kind:
            raise errors.new_bad_request(
                f'{kind} in version "{api_version.rsplit("/", 1)[-1]}" cannot be handled as a '
                f'{expect.kind}: no kind "{kind}" is registered for version "{api_version}" in '
                f'scheme "{expect.scheme}"')
    if api_version not in expect.api_versions():
        raise errors.new_bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({expect.api_version})")
    if kind != expect.kind:
        version = api_version.rsplit("/", 1)[-1]
        type_name = typetables.lookup_kind(expect.group, version, kind)
        if type_name is not None and kind not in typetables.META_KINDS:
            # a kind the group serves: decoded as itself, then upstream's conversion into the
            # endpoint's internal type fails
            versioned = ".".join(type_name.rsplit(".", 2)[-2:])
            raise errors.new_bad_request(
                f'{kind} in version "{version}" cannot be handled as a {expect.kind}: '
                f"converting ({versioned}) to ({gotypes.internal_package(expect.group)}."
                f"{expect.kind}): unknown conversion")
        raise errors.new_bad_request(
            f'{kind} in version "{version}" cannot be handled as a '
            f'{expect.kind}: no kind "{kind}" is registered for the internal version of group '
            f'"{expect.group}" in scheme')


def cannot_handle(obj: dict, expect: Expect, message: str) -> errors.StatusError:
    """400 BadRequest C{Pod in version "v1" cannot be handled as a Pod: <message>} (upstream
    C{transformDecodeError} with the body's kind)."""
    kind = obj.get("kind") or expect.kind
    version = str(obj.get("apiVersion") or expect.api_version).rsplit("/", 1)[-1]
    return errors.new_bad_request(
        f'{kind} in version "{version}" cannot be handled as a {expect.kind}: {message}')


def decode(body: bytes, content_type: str, expect: Expect,
           field_validation: str = "Warn", protobuf_decoder: Any = None) -> Decoded:
    """
    Decode a write body into an object of kind C{expect}.

    @param content_type: the bare media type (C{application/json}); C{""} is JSON.
    @param field_validation: C{Strict}, C{Warn} or C{Ignore} (upstream C{fieldValidation}):
        unknown and duplicate fields of a kind with a type table are refused (400), returned
        as warnings, or ignored; they are dropped from the object in every mode, as Go's
        decoder drops them.
    @param protobuf_decoder: C{bytes -> dict} for a protobuf body (default
        L{kubetwist.runtime.protobuf.decode} with C{expect} as the default kind).
    @raise StatusError: 400 BadRequest (malformed body, other kind or version, a value of
        the wrong type: C{Pod in version "v1" cannot be handled as a Pod: json: cannot
        unmarshal string into Go struct field FCVolumeSource.spec.volumes.fc.lun of type
        int32}, strict decoding errors under C{Strict}); 415 UnsupportedMediaType.
    """
    if content_type == codec.PROTOBUF:
        if protobuf_decoder is None:
            obj = _protobuf(body, expect)
        else:
            obj = protobuf_decoder(body)
        check_kind(obj, expect, body)
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        return Decoded(obj, [])
    obj = parse(body, content_type, expect)
    if obj is None:
        obj = {}  # JSON null decodes into the zero object
    if not isinstance(obj, dict):
        raise unrecognized(
            expect.kind, f"json: cannot unmarshal {typed._json_kind(obj)} into Go value of type "
            'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
            '"json:\\"kind,omitempty\\"" }', body)
    check_kind(obj, expect, body)
    type_name = expect.type_name
    message = typed.decode_error(obj, type_name, body,
                                 json_body=(content_type or codec.JSON) == codec.JSON)
    if message:
        raise cannot_handle(obj, expect, message)
    typed.zero_null_elements(obj, type_name)
    warnings: list = []
    if type_name is not None:
        errs = []
        if field_validation != "Ignore":
            errs = codec.strict_body_errors(body, content_type or codec.JSON, type_name)
        strict.prune_unknown(obj, type_name)
        if errs and field_validation == "Strict":
            raise cannot_handle(obj, expect, strict.strict_decoding_message(errs))
        if errs and field_validation == "Warn":
            warnings = strict.warnings_of(errs)
    if obj.get("metadata") is None:
        obj["metadata"] = {}
    elif not isinstance(obj["metadata"], dict):
        # a kind without a type table: Go's decoder still has ObjectMeta there
        where = ((), "") if expect.unstructured else (("metadata",), expect.kind)
        raise cannot_handle(obj, expect, typed._Decode.type_error(
            typed._json_kind(obj["metadata"]), where[1], where[0], "v1.ObjectMeta"))
    return Decoded(obj, warnings)


def _protobuf(body: bytes, expect: Expect) -> dict:
    from kubetwist.runtime import protobuf

    try:
        return protobuf.decode(body, default_gvk=(expect.group, expect.version, expect.kind))
    except protobuf.UnsupportedKindError:
        raise errors.make_status(
            415, "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml (protobuf is not supported for "
            f"{expect.kind})") from None
