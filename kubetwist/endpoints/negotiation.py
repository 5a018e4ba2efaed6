# -*- test-case-name: tests.endpoints.test_negotiation -*-
"""
Output content negotiation: upstream C{k8s.io/apiserver/pkg/endpoints/handlers/negotiation}
(C{NegotiateOutputMediaType}, C{NegotiateMediaTypeOptions}, C{acceptMediaTypeOptions}),
C{RequestScope.AllowsMediaTypeTransform} and the response transforms of
C{handlers/response.go} (C{transformObject}, C{asTable}, C{asPartialObjectMetadata[List]}).

A resource endpoint negotiates once, before doing anything (a create with an unacceptable
C{Accept} creates nothing: 406); the transform to C{Table} / C{PartialObjectMetadata[List]}
runs on the result and can still refuse it with a 406 (the write has then happened, as
upstream).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from kubetwist.runtime import codec, errors, gotypes

#: The media types of the built-in serializers, in upstream's order (C{SupportedMediaTypes}).
SERIALIZERS = (codec.JSON, codec.YAML, codec.PROTOBUF)
#: Kinds a client may ask the server to transform a response into (C{as=}).
META_GROUP = "meta.k8s.io"
META_VERSIONS = ("v1", "v1beta1")


@dataclass
class Output:
    """
    The negotiated response form.

    @ivar kind: C{object}, C{table}, C{partial} (C{PartialObjectMetadata}) or C{partiallist}
        (C{PartialObjectMetadataList}).
    @ivar media: the bare media type of the body (C{application/json}, C{application/yaml},
        C{application/vnd.kubernetes.protobuf}).
    @ivar content_type: the C{Content-Type} header; upstream writes the serializer's own media
        type, without the C{as=} parameters.
    @ivar version: the C{v=} of a transform (C{v1}, C{v1beta1}).
    @ivar pretty: indent JSON (C{?pretty=1} or a curl/Wget/browser C{User-Agent}).
    """

    kind: str
    media: str
    content_type: str
    version: str = "v1"
    pretty: bool = False


def not_acceptable(supported: tuple[str, ...] = SERIALIZERS) -> errors.StatusError:
    """406 C{NotAcceptable}: C{only the following media types are accepted: <types>}
    (upstream C{negotiation.NewNotAcceptableError})."""
    return errors.new_not_acceptable(", ".join(supported))


def transform_not_acceptable(message: str) -> errors.StatusError:
    """406 C{NotAcceptable} with a free-form message (upstream C{handlers.errNotAcceptable})."""
    return errors.make_status(406, "NotAcceptable", message)


def _parse_bool(text: str) -> Optional[bool]:
    """Go's C{strconv.ParseBool}; C{None} when invalid."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def is_pretty(request: Any) -> bool:
    """
    Upstream C{isPrettyPrint}: C{?pretty=<bool>} when given, else a C{User-Agent} starting
    with C{curl}, C{Wget} or C{Mozilla/5.0}.
    """
    uri = getattr(request, "uri", b"") or b""
    query = uri.partition(b"?")[2]
    if b"pretty" in query:
        from urllib.parse import parse_qs

        values = parse_qs(query.decode("latin-1"), keep_blank_values=True).get("pretty")
        if values and values[0]:
            return bool(_parse_bool(values[0]))
    agent = request.getHeader(b"user-agent") or b""
    if agent.startswith((b"curl", b"Wget", b"Mozilla/5.0")):
        return True
    # the Accept parameter pretty=1 (acceptMediaTypeOptions)
    accept = request.getHeader(b"accept") or b""
    return b"pretty=1" in accept.replace(b" ", b"")


def _accept_ranges(request: Any) -> Optional[list[codec.MediaType]]:
    header = request.getHeader(b"accept")
    if not header:
        return None
    ranges = codec.parse_accept(header.decode("latin-1"))
    # goautoneg orders the clauses: higher q first, then specific types before wildcards
    # (a stable insertion sort for the short lists clients send)
    return sorted(ranges, key=lambda r: (-r.q, r.type.split("/", 1)[0] == "*",
                                         r.type.partition("/")[2] == "*"))


#: What a built-in resource route produces besides the serializers' types: list and watch
#: routes also the stream types (upstream's installer: C{allMediaTypes}).
STREAMS = (f"{codec.JSON};stream=watch", f"{codec.PROTOBUF};stream=watch")


def check_route_accept(request: Any, collection: bool = False) -> None:
    """
    go-restful's route selection for built-in resources and group-version discovery: some
    C{Accept} range, parameters dropped, must be C{*/*} or exactly a type the route produces
    (no other wildcards), else 406 before anything runs.

    @param collection: a list/watch route (it also produces L{STREAMS}).
    @raise StatusError: 406 C{NotAcceptable} C{406: Not Acceptable\\n\\nAvailable
        representations: application/json, ...} with empty C{details} (upstream
        C{NewGenericServerResponse} of go-restful's error).
    """
    header = request.getHeader(b"accept")
    if not header:
        return
    produces = SERIALIZERS + STREAMS if collection else SERIALIZERS
    bare = {p.split(";", 1)[0] for p in produces}
    for part in header.decode("latin-1").split(","):
        media = part.split(";", 1)[0].strip()
        if media == "*/*" or media in bare:
            return
    err = errors.make_status(406, "NotAcceptable", "406: Not Acceptable\n\nAvailable "
                             f"representations: {', '.join(produces)}")
    err.status["details"] = {}
    err.status["code"] = err.status.pop("code")
    raise err


def negotiate_media(request: Any, serializers: tuple[str, ...] = SERIALIZERS,
                    table: bool = False, partial: bool = False,
                    standard: Optional[tuple[str, ...]] = None) -> Optional[Output]:
    """
    Upstream C{NegotiateMediaTypeOptions} with an endpoint's restrictions.

    @param serializers: the media types the endpoint's serializer offers.
    @param table: C{as=Table} is allowed (the endpoint has a C{TableConvertor}; JSON/YAML only).
    @param partial: C{as=PartialObjectMetadata[List]} is allowed (every resource endpoint).
    @param standard: the media types allowed without a transform (custom resources: JSON and
        YAML), or C{None} for all of C{serializers}.
    @return: the first acceptable form, or C{None}.
    """
    ranges = _accept_ranges(request)
    pretty = is_pretty(request)
    if ranges is None:
        return Output("object", serializers[0], serializers[0], pretty=pretty)
    for r in ranges:
        main, _, sub = r.type.partition("/")
        for media in serializers:
            m_main, _, m_sub = media.partition("/")
            if not (r.type == media or (main == m_main and sub == "*") or r.type == "*/*"):
                continue
            if r.stream and (r.stream != "watch" or media == codec.YAML):
                # only JSON and protobuf have stream serializers
                continue
            if r.as_kind or r.group or r.version:
                if r.group != META_GROUP or r.version not in META_VERSIONS:
                    continue
                if r.as_kind == "Table":
                    if not table or media not in (codec.JSON, codec.YAML):
                        continue
                    return Output("table", media, media, r.version, pretty)
                if r.as_kind in ("PartialObjectMetadata", "PartialObjectMetadataList"):
                    if not partial:
                        continue
                    kind = "partial" if r.as_kind == "PartialObjectMetadata" else "partiallist"
                    return Output(kind, media, media, r.version, pretty)
                continue
            if standard is not None and media not in standard:
                continue
            return Output("object", media, media, pretty=pretty)
    return None


def negotiate(request: Any, allow_transform: bool = True, *, table: Optional[bool] = None,
              serializers: tuple[str, ...] = SERIALIZERS,
              standard: Optional[tuple[str, ...]] = None, restful: bool = True,
              collection: bool = False) -> Output:
    """
    Choose a resource endpoint's response form from C{Accept} (upstream
    C{negotiation.NegotiateOutputMediaType} with the C{RequestScope} as restrictions), after
    go-restful's route check (L{check_route_accept}) for built-in resources.

    @param allow_transform: C{False} for endpoints without a C{TableConvertor} and whose
        handler cannot transform its result (subresources answering other kinds).
    @param table: overrides C{allow_transform} for C{as=Table} alone (C{False} for resources
        without a C{TableConvertor}: the reviews, whose C{as=PartialObjectMetadata} still works).
    @param restful: a built-in resource's route (C{False} for custom resources, which the
        CRD handler serves without go-restful).
    @param collection: a list or watch request.
    @raise StatusError: 406 C{NotAcceptable} C{only the following media types are accepted:
        application/json, application/yaml, application/vnd.kubernetes.protobuf}, or
        L{check_route_accept}'s.
    """
    if restful:
        check_route_accept(request, collection)
    out = negotiate_media(request, serializers,
                          table=allow_transform if table is None else table,
                          partial=allow_transform, standard=standard)
    if out is None:
        raise not_acceptable(serializers)
    return out


#: The aggregated discovery document's versions (C{as=APIGroupDiscoveryList}).
AGGREGATED_GROUP = "apidiscovery.k8s.io"
AGGREGATED_VERSIONS = ("v2", "v2beta1")


def negotiate_discovery(request: Any) -> Output:
    """
    The form of C{/api} and C{/apis} (upstream's discovery C{WrappedHandler} with
    C{DiscoveryEndpointRestrictions}): the aggregated document (C{kind} C{aggregated},
    C{version} its C{v=}, C{Content-Type} with the C{g}/C{v}/C{as} parameters) when the first
    acceptable range asks for it, else the legacy document, in JSON, YAML or protobuf.

    @raise StatusError: 406 C{NotAcceptable} C{only the following media types are accepted:
        ...}.
    """
    ranges = _accept_ranges(request)
    pretty = is_pretty(request)
    if ranges is None:
        return Output("object", codec.JSON, codec.JSON, pretty=pretty)
    for r in ranges:
        main, _, sub = r.type.partition("/")
        for media in SERIALIZERS:
            m_main, _, _ = media.partition("/")
            if not (r.type == media or (main == m_main and sub == "*") or r.type == "*/*"):
                continue
            if r.as_kind or r.group or r.version:
                if r.as_kind == "APIGroupDiscoveryList" and r.group == AGGREGATED_GROUP \
                        and r.version in AGGREGATED_VERSIONS:
                    return Output("aggregated", media, f"{media};g={AGGREGATED_GROUP};"
                                  f"v={r.version};as=APIGroupDiscoveryList", r.version, pretty)
                continue
            return Output("object", media, media, pretty=pretty)
    raise not_acceptable()


def negotiate_error(request: Any, serializers: tuple[str, ...] = SERIALIZERS) -> Optional[Output]:
    """
    The form of an error C{Status} (upstream C{ErrorNegotiated} with
    C{DefaultEndpointRestrictions}: no transforms), or C{None} when nothing is acceptable (the
    caller then writes indented JSON, as C{WriteRawJSON}).
    """
    return negotiate_media(request, serializers)


# --- transforms (handlers/response.go) --------------------------------------------------------

def internal_type(group: str, kind: str, custom: bool = False) -> str:
    """The Go type upstream's messages print for an internal object (C{%T})."""
    if custom:
        return "*unstructured.UnstructuredList" if kind.endswith("List") \
            else "*unstructured.Unstructured"
    return f"*{gotypes.internal_package(group)}.{kind}"


def check_transform(out: Output, obj: dict, is_list: bool, group: str, kind: str,
                    custom: bool = False) -> None:
    """
    Refuse a transform the result cannot take (upstream C{asPartialObjectMetadata[List]});
    C{Status} results pass through unchanged.

    @param kind: the result's kind (C{NamespaceList} for a list).
    @raise StatusError: 406 C{NotAcceptable} C{you requested PartialObjectMetadata, but the
        requested object is a list (*core.NamespaceList)} / C{you requested
        PartialObjectMetadataList, but the requested object is not a list (*core.Namespace)}.
    """
    if obj.get("kind") == "Status" or out.kind in ("object", "table"):
        return
    if out.kind == "partial" and is_list:
        raise transform_not_acceptable(
            "you requested PartialObjectMetadata, but the requested object is a list "
            f"({internal_type(group, kind, custom)})")
    if out.kind == "partiallist" and not is_list:
        raise transform_not_acceptable(
            "you requested PartialObjectMetadataList, but the requested object is not a list "
            f"({internal_type(group, kind, custom)})")
