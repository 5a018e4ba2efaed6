# -*- test-case-name: tests.extension.test_server -*-
"""
Strategies of an extension server's kinds: upstream C{k8s.io/apiserver/pkg/registry/rest}
(C{RESTCreateStrategy}, C{RESTUpdateStrategy}, C{BeforeCreate}'s common validation) as
sample-apiserver's C{strategy.go} files use them.

L{new_strategy} returns a L{Strategy <kubetwist.registry.rest.Strategy>} whose C{validate}
runs the kind's own validation and then, when that found nothing, upstream's common
C{ObjectMeta} validation (C{ValidateObjectMetaAccessor} with C{ValidatePathSegmentName}),
exactly as C{rest.BeforeCreate} does; on update the generic Store runs the common checks
itself before the kind's C{validate_update}.  Built-in kinds validate their metadata in
their own strategies instead.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from kubetwist.apimachinery.validation import validate_object_meta
from kubetwist.registry.rest import Strategy, TableConvertor
from kubetwist.runtime.field import FieldError, Path

__all__ = ["new_strategy", "validate_path_segment_name"]


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """Upstream C{path.ValidatePathSegmentName}: not C{.} or C{..}, no C{/} or C{%}."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def new_strategy(kind: str, group: str, *, namespaced: bool = True,
                 validate: Optional[Callable[[dict], list[FieldError]]] = None,
                 validate_update: Optional[Callable[[dict, dict], list[FieldError]]] = None,
                 default: Optional[Callable[[dict], None]] = None,
                 prepare_for_create: Optional[Callable[[dict], None]] = None,
                 prepare_for_update: Optional[Callable[[dict, dict], None]] = None,
                 table: Optional[TableConvertor] = None,
                 allow_create_on_update: bool = False,
                 allow_unconditional_update: bool = False,
                 **extra: Any) -> Strategy:
    """
    A L{Strategy} for a kind of an extension server.

    @param kind: C{Flunder}; with C{group}, named in 422 messages
        (C{Flunder.wardle.example.com "x" is invalid: ...}).
    @param validate: C{obj -> [FieldError]}: the kind's validation on create (upstream
        C{Validate}); the common C{ObjectMeta} validation follows when it finds nothing.
    @param validate_update: C{(new, old) -> [FieldError]} (upstream C{ValidateUpdate}).
    @param default: the served version's defaulting (upstream C{SetDefaults_*}), run on every
        decoded body.
    @param table: printer columns; C{None} for upstream's default table (C{Name},
        C{Created At}).
    @param allow_unconditional_update: upstream C{AllowUnconditionalUpdate} (sample-apiserver:
        C{false}: an update must name the C{resourceVersion}).
    @param extra: any other L{Strategy} field.
    """
    own_validate = validate or (lambda obj: [])

    def validate_with_meta(obj: dict) -> list[FieldError]:
        errs = own_validate(obj)
        if errs:
            return errs
        return validate_object_meta(obj.get("metadata") or {}, namespaced,
                                    validate_path_segment_name, Path("metadata"))

    fields: dict[str, Any] = dict(
        kind=kind, group=group, namespaced=namespaced, validate=validate_with_meta,
        table=table, allow_create_on_update=allow_create_on_update,
        allow_unconditional_update=allow_unconditional_update)
    if validate_update is not None:
        fields["validate_update"] = validate_update
    if default is not None:
        fields["default"] = default
    if prepare_for_create is not None:
        fields["prepare_for_create"] = prepare_for_create
    if prepare_for_update is not None:
        fields["prepare_for_update"] = prepare_for_update
    fields.update(extra)
    return Strategy(**fields)
