# -*- test-case-name: tests.runtime.test_errors -*-
"""
Tests for L{kubetwist.runtime.errors}: API errors as C{metav1.Status} objects, with the codes,
reasons, messages and details of upstream C{k8s.io/apimachinery/pkg/api/errors}.
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import errors, field


class StatusShapeTests(SynchronousTestCase):
    """The Status object itself."""

    def test_failure_field_order(self) -> None:
        """A failure Status has Go's field order (kind, apiVersion, metadata, status, message,
        reason, details, code) and no details when there are none."""
        err = errors.new_bad_request("bad")
        self.assertEqual(list(err.status), ["kind", "apiVersion", "metadata", "status",
                                            "message", "reason", "code"])
        self.assertEqual((err.code, err.reason, err.message, str(err)),
                         (400, "BadRequest", "bad", "bad"))
        self.assertEqual(repr(err), "StatusError(400, 'BadRequest', 'bad')")
        self.assertEqual(json.loads(json.dumps(err.status))["status"], "Failure")

    def test_success(self) -> None:
        """A success Status carries details only when given."""
        self.assertEqual(errors.success_status(),
                         {"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Success"})
        self.assertEqual(errors.success_status({"name": "a"})["details"], {"name": "a"})

    def test_group_strings(self) -> None:
        """GroupResource and GroupKind print C{resource.group}, bare for the core group."""
        self.assertEqual((errors.group_resource_string("apps", "deployments"),
                          errors.group_resource_string("", "pods"),
                          errors.group_kind_string("apps", "Deployment"),
                          errors.group_kind_string("", "Pod")),
                         ("deployments.apps", "pods", "Deployment.apps", "Pod"))


class ConstructorTests(SynchronousTestCase):
    """One test per constructor: upstream's code, reason, message and details."""

    def test_not_found(self) -> None:
        err = errors.new_not_found("apps", "deployments", "web")
        self.assertEqual((err.code, err.reason, err.message), (
            404, "NotFound", 'deployments.apps "web" not found'))
        self.assertEqual(err.status["details"],
                         {"name": "web", "group": "apps", "kind": "deployments"})

    def test_already_exists(self) -> None:
        err = errors.new_already_exists("", "configmaps", "x")
        self.assertEqual((err.code, err.reason, err.message), (
            409, "AlreadyExists", 'configmaps "x" already exists'))
        self.assertEqual(err.status["details"], {"name": "x", "kind": "configmaps"})

    def test_conflict(self) -> None:
        err = errors.new_conflict("", "pods", "p", errors.OPTIMISTIC_LOCK_ERROR_MSG)
        self.assertEqual((err.code, err.reason, err.message), (
            409, "Conflict",
            'Operation cannot be fulfilled on pods "p": the object has been modified; please '
            'apply your changes to the latest version and try again'))

    def test_invalid(self) -> None:
        """422 with the aggregate of the field errors and one cause each; the kind names the
        details."""
        errs = [field.required("spec.a", ""), field.invalid("spec.b", "x", "bad")]
        err = errors.new_invalid("apps", "Deployment", "web", errs)
        self.assertEqual((err.code, err.reason), (422, "Invalid"))
        self.assertEqual(err.message, 'Deployment.apps "web" is invalid: [spec.a: Required value, '
                                      'spec.b: Invalid value: "x": bad]')
        self.assertEqual(err.status["details"], {
            "name": "web", "group": "apps", "kind": "Deployment", "causes": [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.a"},
                {"reason": "FieldValueInvalid", "message": 'Invalid value: "x": bad',
                 "field": "spec.b"}]})

    def test_invalid_without_errors(self) -> None:
        self.assertEqual(errors.new_invalid("", "Pod", "p", []).message, 'Pod "p" is invalid')

    def test_forbidden(self) -> None:
        """Three shapes: with a name, without one, without a resource."""
        self.assertEqual(errors.new_forbidden("", "pods", "p", "no").message,
                         'pods "p" is forbidden: no')
        self.assertEqual(errors.new_forbidden("apps", "deployments", "", "no").message,
                         "deployments.apps is forbidden: no")
        err = errors.new_forbidden("", "", "", "no")
        self.assertEqual((err.code, err.reason, err.message), (403, "Forbidden", "forbidden: no"))

    def test_method_not_supported(self) -> None:
        err = errors.new_method_not_supported("apps", "deployments", "watch")
        self.assertEqual((err.code, err.reason, err.message), (
            405, "MethodNotAllowed",
            'watch is not supported on resources of kind "deployments.apps"'))
        self.assertEqual(err.status["details"], {"group": "apps", "kind": "deployments"})

    def test_internal_error(self) -> None:
        err = errors.new_internal_error("boom")
        self.assertEqual((err.code, err.reason, err.message), (
            500, "InternalError", "Internal error occurred: boom"))
        self.assertEqual(err.status["details"], {"causes": [{"message": "boom"}]})

    def test_timeout(self) -> None:
        """504 with C{retryAfterSeconds} only when given."""
        err = errors.new_timeout("request did not complete within 60s", 2)
        self.assertEqual((err.code, err.reason, err.message, err.status["details"]), (
            504, "Timeout", "Timeout: request did not complete within 60s",
            {"retryAfterSeconds": 2}))
        self.assertNotIn("details", errors.new_timeout("x").status)

    def test_too_many_requests(self) -> None:
        err = errors.new_too_many_requests("slow down", 1)
        self.assertEqual((err.code, err.reason, err.status["details"]),
                         (429, "TooManyRequests", {"retryAfterSeconds": 1}))

    def test_simple_codes(self) -> None:
        """The constructors without details: code and reason."""
        made = [errors.new_unauthorized(), errors.new_gone("g"),
                errors.new_resource_expired("e"), errors.new_unsupported_media_type("text/x"),
                errors.new_not_acceptable("application/json"),
                errors.new_request_entity_too_large("limit is 3145728"),
                errors.new_service_unavailable("s")]
        self.assertEqual([(e.code, e.reason) for e in made], [
            (401, "Unauthorized"), (410, "Gone"), (410, "Expired"),
            (415, "UnsupportedMediaType"), (406, "NotAcceptable"),
            (413, "RequestEntityTooLarge"), (503, "ServiceUnavailable")])
        self.assertEqual(made[4].message,
                         "only the following media types are accepted: application/json")
        self.assertEqual(made[5].message, "Request entity too large: limit is 3145728")
