# -*- test-case-name: tests.runtime.test_errors -*-
"""
API errors as C{metav1.Status}: upstream C{k8s.io/apimachinery/pkg/api/errors}.

Every failure a client sees is a L{StatusError} carrying the exact C{Status} dict that is written
to the wire; the constructors below produce upstream's codes, reasons and messages.  One writer
(L{kubetwist.endpoints.responses}) serialises them.
"""

from __future__ import annotations

from typing import Any

from kubetwist.runtime.field import FieldError, aggregate_message


def group_resource_string(group: str, resource: str) -> str:
    """C{schema.GroupResource.String()}: C{deployments.apps}, or C{pods} for the core group."""
    return f"{resource}.{group}" if group else resource


def group_kind_string(group: str, kind: str) -> str:
    """C{schema.GroupKind.String()}: C{Deployment.apps}, or C{Pod} for the core group."""
    return f"{kind}.{group}" if group else kind


class StatusError(Exception):
    """
    An error that is also a C{metav1.Status} object (upstream C{errors.StatusError}).

    @ivar status: C{{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": str, "reason": str, "details": {...}, "code": int}}.
    """

    def __init__(self, status: dict) -> None:
        self.status = status
        super().__init__(status.get("message", ""))

    @property
    def code(self) -> int:
        return self.status["code"]

    @property
    def reason(self) -> str:
        return self.status.get("reason", "")

    @property
    def message(self) -> str:
        return self.status.get("message", "")

    def __repr__(self) -> str:
        return f"StatusError({self.code}, {self.reason!r}, {self.message!r})"


def make_status(
    code: int, reason: str, message: str, details: dict | None = None
) -> StatusError:
    """Build a failure L{StatusError}; C{details} is omitted when empty, as upstream."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        status["details"] = details
    status["code"] = code
    return StatusError(status)


def success_status(details: dict | None = None) -> dict:
    """A C{Status} with C{status: Success} (the answer of a delete that returns no object)."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
    }
    if details:
        status["details"] = details
    return status


def _details(group: str, kind: str, name: str) -> dict:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    if kind:
        d["kind"] = kind
    return d


def new_not_found(group: str, resource: str, name: str) -> StatusError:
    """404 C{NotFound}: C{deployments.apps "web" not found}."""
    return make_status(
        404, "NotFound", f'{group_resource_string(group, resource)} "{name}" not found',
        _details(group, resource, name),
    )


def new_already_exists(group: str, resource: str, name: str) -> StatusError:
    """409 C{AlreadyExists}: C{configmaps "x" already exists}."""
    return make_status(
        409, "AlreadyExists", f'{group_resource_string(group, resource)} "{name}" already exists',
        _details(group, resource, name),
    )


def new_generate_name_conflict(group: str, resource: str, name: str) -> StatusError:
    """409 C{AlreadyExists} for a generated name that exists (upstream
    C{NewGenerateNameConflict}, with C{retryAfterSeconds: 1}): C{configmaps "x" already
    exists, the server was not able to generate a unique name for the object}."""
    details = _details(group, resource, name)
    details["retryAfterSeconds"] = 1
    return make_status(
        409, "AlreadyExists",
        f'{group_resource_string(group, resource)} "{name}" already exists, the server was not '
        f"able to generate a unique name for the object",
        details,
    )


#: Upstream's C{OptimisticLockErrorMsg}.
OPTIMISTIC_LOCK_ERROR_MSG = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def new_conflict(group: str, resource: str, name: str, err: str) -> StatusError:
    """409 C{Conflict}: C{Operation cannot be fulfilled on pods "x": <err>}."""
    return make_status(
        409, "Conflict",
        f'Operation cannot be fulfilled on {group_resource_string(group, resource)} '
        f'"{name}": {err}',
        _details(group, resource, name),
    )


def new_invalid(group: str, kind: str, name: str, errors: list[FieldError]) -> StatusError:
    """422 C{Invalid} with one cause per field error (upstream C{NewInvalid})."""
    gk = group_kind_string(group, kind)
    details = _details(group, kind, name)
    details["causes"] = [e.cause() for e in errors]
    if errors:
        message = f'{gk} "{name}" is invalid: {aggregate_message(errors)}'
    else:
        message = f'{gk} "{name}" is invalid'
    return make_status(422, "Invalid", message, details)


def new_bad_request(message: str) -> StatusError:
    """400 C{BadRequest}."""
    return make_status(400, "BadRequest", message)


def new_unauthorized(message: str = "Unauthorized") -> StatusError:
    """401 C{Unauthorized}."""
    return make_status(401, "Unauthorized", message)


def new_forbidden(group: str, resource: str, name: str, err: str) -> StatusError:
    """403 C{Forbidden}: C{pods "x" is forbidden: <err>} (upstream C{NewForbidden})."""
    if not resource:
        message = f"forbidden: {err}"
    elif not name:
        message = f"{group_resource_string(group, resource)} is forbidden: {err}"
    else:
        message = f'{group_resource_string(group, resource)} "{name}" is forbidden: {err}'
    return make_status(403, "Forbidden", message, _details(group, resource, name))


def new_method_not_supported(group: str, resource: str, action: str) -> StatusError:
    """405 C{MethodNotAllowed}: C{<action> is not supported on resources of kind "pods"}."""
    return make_status(
        405, "MethodNotAllowed",
        f'{action} is not supported on resources of kind '
        f'"{group_resource_string(group, resource)}"',
        _details(group, resource, ""),
    )


def new_route_not_found() -> StatusError:
    """
    404 C{NotFound} C{the server could not find the requested resource}, as a go-restful
    container answers a path under its web services that no route serves (upstream
    C{NewGenericServerResponse} with an empty group resource: Go still prints the empty
    C{"details": {}}).
    """
    return StatusError({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server could not find the requested resource", "reason": "NotFound",
        "details": {}, "code": 404})


def new_method_not_allowed() -> StatusError:
    """405 C{MethodNotAllowed} C{the server does not allow this method on the requested
    resource}: a go-restful route exists for the path but not for the method (details as
    L{new_route_not_found})."""
    return StatusError({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server does not allow this method on the requested resource",
        "reason": "MethodNotAllowed", "details": {}, "code": 405})


def new_gone(message: str) -> StatusError:
    """410 C{Gone}."""
    return make_status(410, "Gone", message)


def new_resource_expired(message: str) -> StatusError:
    """410 C{Expired}: a resourceVersion older than what storage still holds."""
    return make_status(410, "Expired", message)


def new_unsupported_media_type(content_type: str) -> StatusError:
    """415 C{UnsupportedMediaType}."""
    return make_status(
        415, "UnsupportedMediaType",
        'the body of the request was in an unknown format - accepted media types include: '
        'application/json, application/yaml, application/vnd.kubernetes.protobuf',
    )


def new_not_acceptable(accepted: str) -> StatusError:
    """406 C{NotAcceptable}."""
    return make_status(
        406, "NotAcceptable",
        f"only the following media types are accepted: {accepted}",
    )


def new_request_entity_too_large(message: str) -> StatusError:
    """413 C{RequestEntityTooLarge}."""
    return make_status(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def new_too_many_requests(message: str, retry_after_seconds: int) -> StatusError:
    """429 C{TooManyRequests} with C{details.retryAfterSeconds}."""
    return make_status(
        429, "TooManyRequests", message, {"retryAfterSeconds": retry_after_seconds}
    )


def new_service_unavailable(message: str) -> StatusError:
    """503 C{ServiceUnavailable}."""
    return make_status(503, "ServiceUnavailable", message)


def new_timeout(message: str, retry_after_seconds: int = 0) -> StatusError:
    """504 C{Timeout} (upstream C{NewTimeoutError})."""
    details = {"retryAfterSeconds": retry_after_seconds} if retry_after_seconds else None
    return make_status(
        504, "Timeout",
        f"Timeout: {message}", details,
    )


def new_internal_error(err: str) -> StatusError:
    """500 C{InternalError}: C{Internal error occurred: <err>}."""
    return make_status(
        500, "InternalError", f"Internal error occurred: {err}",
        {"causes": [{"message": err}]},
    )
