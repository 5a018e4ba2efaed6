# -*- test-case-name: tests.integration.test_field_validation -*-
"""
kubectl's default C{fieldValidation=Strict} (and C{--validate=warn}) against a real
C{twistd -n kubeapi}: unknown fields of built-in kinds are refused or warned about with
kube-apiserver's wording, on create and on a client-side apply (a strategic merge patch).
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units


def _configmap(**extra) -> dict:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
            "data": {"a": "1"}}
    body.update(extra)
    return body


class KubectlFieldValidationTests(ServerTestMixin, SynchronousTestCase):
    def test_create_strict_and_warn(self) -> None:
        """C{kubectl create} refuses an unknown field (Strict is kubectl's default);
        C{--validate=warn} creates the object without it and prints the warning."""
        ns = self.namespace()
        bad = json.dumps(_configmap(bogus=1))
        result = self.server.kubectl("create", "-n", ns, "-f", "-", input=bad, check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn('Error from server (BadRequest): error when creating "STDIN": ConfigMap '
                      'in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
                      'unknown field "bogus"', result.stderr)
        result = self.server.kubectl("create", "--validate=warn", "-n", ns, "-f", "-",
                                     input=bad)
        self.assertIn('Warning: unknown field "bogus"', result.stderr)
        self.assertNotIn("bogus", self.server.kubectl("get", "cm", "cm", "-n", ns,
                                                      "-o", "json").stdout)

    def test_apply_patch_strict(self) -> None:
        """A client-side C{kubectl apply} of a known object succeeds twice (create, then a
        strategic merge patch under Strict); a typo in the second apply is refused as
        422 Invalid on the patch."""
        ns = self.namespace()
        self.server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(_configmap()))
        self.server.kubectl("apply", "-n", ns, "-f", "-",
                            input=json.dumps(_configmap(data={"a": "2"})))
        result = self.server.kubectl("apply", "-n", ns, "-f", "-", check=False,
                                     input=json.dumps(_configmap(dta={"a": "3"})))
        self.assertEqual(result.returncode, 1)
        self.assertIn('strict decoding error: unknown field "dta"', result.stderr)
        self.assertIn('is invalid: patch: Invalid value: "map[', result.stderr)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
