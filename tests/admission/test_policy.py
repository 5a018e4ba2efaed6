# -*- test-case-name: tests.admission.test_policy -*-
"""
Tests for L{kubetwist.admission.plugins.policy}: the C{ValidatingAdmissionPolicy} plugin
through the whole server (matching, params, variables, actions, failure policy, messages,
cost limits), and its compiler and matcher directly.
"""

from __future__ import annotations

from typing import Any, Optional

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.interfaces import Attributes, GroupVersionKind, GroupVersionResource
from kubetwist.admission.plugins.policy import compiler, matching
from kubetwist.admission.plugins.policy.validator import PolicyValidator
from tests.support import KubeTestCase

ARG = "/apis/admissionregistration.k8s.io/v1"


def _policy(name: str, validations: list, **spec: Any) -> dict:
    body = {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{
            "apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
        "validations": validations,
    }
    body.update(spec)
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": body}


def _binding(name: str, policy: str, actions: tuple = ("Deny",), **spec: Any) -> dict:
    body = {"policyName": policy, "validationActions": list(actions)}
    body.update(spec)
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": body}


def _deployment(name: str, replicas: int, labels: Optional[dict] = None) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }


class _Helpers:
    """Creating policies, bindings and Deployments through the server."""

    def install(self, policy: dict, *bindings: dict) -> None:
        code, body, _ = self.request("POST", f"{ARG}/validatingadmissionpolicies", policy)
        self.assertEqual(code, 201, body)
        for b in bindings:
            code, body, _ = self.request("POST", f"{ARG}/validatingadmissionpolicybindings", b)
            self.assertEqual(code, 201, body)

    def create(self, obj: dict, ns: str = "default") -> tuple[int, Any, Any]:
        return self.request("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", obj)


class PolicyServerTests(_Helpers, KubeTestCase):
    """The plugin in the real server chain (default plugins)."""

    def test_deny_message_expression(self) -> None:
        """A failed validation refuses with 422 Invalid, upstream's message (the
        messageExpression's text) and the message as the one cause."""
        self.install(_policy("p", [{
            "expression": "object.spec.replicas <= 2",
            "messageExpression": "'too many: ' + string(object.spec.replicas)"}]),
            _binding("b", "p"))
        code, body, _ = self.create(_deployment("web", 3))
        text = ("ValidatingAdmissionPolicy 'p' with binding 'b' denied request: too many: 3")
        self.assertEqual((code, body["reason"], body["message"]),
                         (422, "Invalid", f'deployments.apps "web" is forbidden: {text}'))
        self.assertEqual(body["details"], {"name": "web", "group": "apps",
                                           "kind": "deployments", "causes": [{"message": text}]})
        code, _, _ = self.create(_deployment("small", 2))
        self.assertEqual(code, 201)

    def test_message_fallbacks(self) -> None:
        """Without messageExpression the message is used; without either, upstream's
        C{failed expression: <expression>}; a reason picks the Status reason and code."""
        self.install(_policy("p", [
            {"expression": "object.spec.replicas != 5", "message": " five is banned "},
            {"expression": "object.spec.replicas != 6"},
            {"expression": "object.spec.replicas != 7", "reason": "Forbidden",
             "message": "seven"},
            {"expression": "object.spec.replicas != 8", "messageExpression": "'a\\nb'",
             "message": "eight"}]),
            _binding("b", "p"))
        prefix = "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
        for n, code, reason, text in ((5, 422, "Invalid", "five is banned"),
                                      (6, 422, "Invalid",
                                       "failed expression: object.spec.replicas != 6"),
                                      (7, 403, "Forbidden", "seven"),
                                      (8, 422, "Invalid", "eight")):
            got, body, _ = self.create(_deployment(f"d{n}", n))
            self.assertEqual((got, body["reason"], body["details"]["causes"]),
                             (code, reason, [{"message": prefix + text}]))

    def test_configmap_param(self) -> None:
        """A ConfigMap param by name (the binding's namespace when none is given); a missing
        param with parameterNotFoundAction Deny refuses with upstream's text, with Allow
        admits."""
        self.request("POST", "/api/v1/namespaces/default/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits"},
            "data": {"maxReplicas": "3"}})
        self.install(
            _policy("p", [{"expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                           "messageExpression": "'at most ' + params.data.maxReplicas"}],
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"}),
            _binding("b", "p", paramRef={"name": "limits",
                                         "parameterNotFoundAction": "Deny"}))
        code, body, _ = self.create(_deployment("big", 4))
        self.assertEqual((code, body["details"]["causes"][0]["message"]), (
            422, "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: at most 3"))
        self.assertEqual(self.create(_deployment("ok", 3))[0], 201)
        self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
        code, body, _ = self.create(_deployment("big", 1), "other")
        self.assertEqual((code, body["message"]), (
            422, 'deployments.apps "big" is forbidden: ValidatingAdmissionPolicy \'p\' with '
            "binding 'b' denied request: failed to configure binding: no params found for "
            "policy binding with `Deny` parameterNotFoundAction"))

    def test_custom_resource_param(self) -> None:
        """A custom resource as the param (cluster-scoped, by name)."""
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "limits.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                     "names": {"plural": "limits", "singular": "limit", "kind": "Limit",
                               "listKind": "LimitList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object", "properties": {
                                           "max": {"type": "integer"}}}}}]}}
        code, body, _ = self.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        self.assertEqual(code, 201, body)
        self.clock.advance(1)
        code, body, _ = self.request("POST", "/apis/example.com/v1/limits", {
            "apiVersion": "example.com/v1", "kind": "Limit", "metadata": {"name": "small"},
            "max": 1})
        self.assertEqual(code, 201, body)
        self.install(
            _policy("p", [{"expression": "object.spec.replicas <= params.max",
                           "messageExpression": "'limit ' + params.kind + ' ' + "
                                                "string(params.max)"}],
                    paramKind={"apiVersion": "example.com/v1", "kind": "Limit"}),
            _binding("b", "p", paramRef={"name": "small",
                                         "parameterNotFoundAction": "Deny"}))
        code, body, _ = self.create(_deployment("two", 2))
        self.assertEqual((code, body["details"]["causes"][0]["message"][-13:]),
                         (422, "limit Limit 1"))
        self.assertEqual(self.create(_deployment("one", 1))[0], 201)

    def test_param_selector_and_allow(self) -> None:
        """Params chosen by a label selector are each evaluated; none found with Allow
        admits."""
        for name, limit in (("a", "5"), ("b", "2")):
            self.request("POST", "/api/v1/namespaces/default/configmaps", {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"limits": "yes"}},
                "data": {"max": limit}})
        self.install(
            _policy("p", [{"expression": "object.spec.replicas <= int(params.data.max)",
                           "messageExpression": "'limit ' + params.metadata.name"}],
                    paramKind={"apiVersion": "v1", "kind": "ConfigMap"}),
            _binding("b", "p", paramRef={
                "selector": {"matchLabels": {"limits": "yes"}},
                "parameterNotFoundAction": "Allow"}))
        code, body, _ = self.create(_deployment("three", 3))
        self.assertEqual((code, body["details"]["causes"][0]["message"][-7:]),
                         (422, "limit b"))
        self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "free"}})
        self.assertEqual(self.create(_deployment("three", 30), "free")[0], 201)

    def test_variables(self) -> None:
        """Variables may use earlier variables; an unused failing variable does not matter;
        a used one fails the expression with upstream's text."""
        self.install(_policy("p", [
            {"expression": "variables.double <= 10"},
            {"expression": "!has(object.metadata.annotations) || variables.bad == 1"}],
            variables=[{"name": "replicas", "expression": "object.spec.replicas"},
                       {"name": "double", "expression": "variables.replicas * 2"},
                       {"name": "bad", "expression": "object.metadata.annotations.missing"}]),
            _binding("b", "p"))
        self.assertEqual(self.create(_deployment("five", 5))[0], 201)
        code, body, _ = self.create(_deployment("six", 6))
        self.assertEqual(body["details"]["causes"][0]["message"][-41:],
                         "failed expression: variables.double <= 10")
        dep = _deployment("ann", 1)
        dep["metadata"]["annotations"] = {"x": "y"}
        code, body, _ = self.create(dep)
        self.assertEqual((code, body["details"]["causes"][0]["message"]), (
            422, "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression "
            "'!has(object.metadata.annotations) || variables.bad == 1' resulted in error: "
            'composited variable "bad" fails to evaluate: no such key: missing'))

    def test_warn_and_audit(self) -> None:
        """Warn adds upstream's Warning header and admits; Audit records the
        validation_failure audit annotation."""
        self.install(_policy("p", [{"expression": "object.spec.replicas < 3",
                                    "message": "keep it small"}]),
                     _binding("b", "p", ("Warn", "Audit")))
        code, _, response = self.create(_deployment("big", 4))
        self.assertEqual(code, 201)
        self.assertEqual(response.headers.getRawHeaders("Warning"), [
            "299 - \"Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': "
            "keep it small\""])

    def test_failure_policy(self) -> None:
        """A runtime error refuses under Fail and is ignored under Ignore."""
        self.install(_policy("fail", [{"expression": "object.spec.nope > 1"}]),
                     _binding("bf", "fail"))
        code, body, _ = self.create(_deployment("x", 1))
        self.assertEqual((code, body["details"]["causes"][0]["message"]), (
            422, "ValidatingAdmissionPolicy 'fail' with binding 'bf' denied request: "
            "expression 'object.spec.nope > 1' resulted in error: no such key: nope"))
        self.request("DELETE", f"{ARG}/validatingadmissionpolicies/fail")
        self.install(_policy("ignore", [{"expression": "object.spec.nope > 1"}],
                             failurePolicy="Ignore"), _binding("bi", "ignore"))
        self.assertEqual(self.create(_deployment("x", 1))[0], 201)

    def test_match_conditions_and_selectors(self) -> None:
        """matchConditions, the binding's objectSelector and excludeResourceRules narrow
        what is checked."""
        policy = _policy("p", [{"expression": "false", "message": "no"}],
                         matchConditions=[{"name": "not-system",
                                           "expression": "object.metadata.name != 'skip'"}])
        policy["spec"]["matchConstraints"]["excludeResourceRules"] = [{
            "apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
            "resources": ["deployments"], "resourceNames": ["excluded"]}]
        self.install(policy, _binding("b", "p", matchResources={
            "objectSelector": {"matchLabels": {"checked": "true"}}}))
        self.assertEqual(self.create(_deployment("free", 1))[0], 201)
        self.assertEqual(self.create(_deployment("skip", 1, {"checked": "true"}))[0], 201)
        self.assertEqual(self.create(_deployment("excluded", 1, {"checked": "true"}))[0],
                         201)
        self.assertEqual(self.create(_deployment("caught", 1, {"checked": "true"}))[0], 422)

    def test_compile_error(self) -> None:
        """An expression that does not compile refuses every matching request under Fail,
        with upstream's compile error text."""
        # the API refuses such a policy; one written straight into storage (or stored by an
        # older server) fails at evaluation
        self.install(_policy("p", [{"expression": "true"}]), _binding("b", "p"))
        store = self.kube.stores[("admissionregistration.k8s.io",
                                  "validatingadmissionpolicies")]

        def breaks(current: dict) -> dict:
            current["spec"]["validations"][0]["expression"] = "authorizer.nonexistent('x')"
            current["metadata"]["generation"] += 1
            return current

        self.successResultOf(store.storage.guaranteed_update(store.key("", "p"), breaks))
        code, body, _ = self.create(_deployment("web", 1))
        self.assertEqual(code, 422)
        self.assertEqual(body["details"]["causes"][0]["message"].split("\n")[0],
                         "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
                         "compilation error: compilation failed: ERROR: <input>:1:23: "
                         "undeclared reference to 'nonexistent' (in container '')")

        def ignores(current: dict) -> dict:
            current["spec"]["failurePolicy"] = "Ignore"
            current["metadata"]["generation"] += 1
            return current

        self.successResultOf(store.storage.guaranteed_update(store.key("", "p"), ignores))
        self.assertEqual(self.create(_deployment("web", 1))[0], 201)
        broken = PolicyValidator({"validations": [{"expression": "object.spec.replicas >"}]})
        result = broken.validate({"object": {}, "oldObject": None, "request": {},
                                  "namespaceObject": None})
        self.assertEqual(result.decisions[0].action, "Deny")
        self.assertTrue(result.decisions[0].message.startswith(
            "compilation error: compilation failed: ERROR: <input>:1:23: Syntax error:"),
            result.decisions[0].message)

    def test_authorizer_expressions_validated(self) -> None:
        """Policies using the authorizer library are compiled at creation: a valid one is
        stored, an unknown function refused (422)."""
        ok = _policy("ok", [{"expression": "authorizer.group('').resource('pods')"
                                           ".check('get').allowed()"}])
        self.assertEqual(self.request("POST", f"{ARG}/validatingadmissionpolicies", ok)[0],
                         201)
        bad = _policy("bad", [{"expression": "authorizer.nonexistent('x')"}])
        code, body, _ = self.request("POST", f"{ARG}/validatingadmissionpolicies", bad)
        self.assertEqual((code, body["details"]["causes"][0]["field"]),
                         (422, "spec.validations[0].expression"))

    def test_policy_change_takes_effect(self) -> None:
        """A binding deleted or a policy changed applies to the next request (the watch)."""
        self.install(_policy("p", [{"expression": "object.spec.replicas < 2"}]),
                     _binding("b", "p"))
        self.assertEqual(self.create(_deployment("two", 2))[0], 422)
        code, current, _ = self.request("GET", f"{ARG}/validatingadmissionpolicies/p")
        current["spec"]["validations"][0]["expression"] = "object.spec.replicas < 3"
        code, _, _ = self.request("PUT", f"{ARG}/validatingadmissionpolicies/p", current)
        self.assertEqual(code, 200)
        self.assertEqual(self.create(_deployment("two", 2))[0], 201)
        self.request("DELETE", f"{ARG}/validatingadmissionpolicybindings/b")
        self.assertEqual(self.create(_deployment("three", 3))[0], 201)

    def test_namespace_selector_and_request(self) -> None:
        """namespaceSelector reads the namespace's labels; request and namespaceObject are
        bound."""
        self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "prod", "labels": {"env": "prod"}}})
        policy = _policy("p", [{
            "expression": "request.operation == 'UPDATE'",
            "messageExpression": "request.userInfo.username + ' ' + request.kind.kind + ' ' "
                                 "+ namespaceObject.metadata.labels.env"}])
        policy["spec"]["matchConstraints"]["namespaceSelector"] = {
            "matchLabels": {"env": "prod"}}
        self.install(policy, _binding("b", "p"))
        self.assertEqual(self.create(_deployment("a", 1))[0], 201)
        code, body, _ = self.create(_deployment("a", 1), "prod")
        self.assertEqual(body["details"]["causes"][0]["message"][-21:],
                         "admin Deployment prod")

    def test_delete_sees_old_object(self) -> None:
        """On DELETE C{object} is null and C{oldObject} the stored object."""
        policy = _policy("p", [{"expression": "object == null && oldObject.spec.replicas < 3",
                                "message": "keep"}])
        policy["spec"]["matchConstraints"]["resourceRules"][0]["operations"] = ["DELETE"]
        self.install(policy, _binding("b", "p"))
        self.create(_deployment("big", 3))
        self.create(_deployment("small", 1))
        code, body, _ = self.request("DELETE", "/apis/apps/v1/namespaces/default/deployments/big")
        self.assertEqual((code, body["message"]), (
            422, "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'p' with "
            "binding 'b' denied request: keep"))
        code, _, _ = self.request("DELETE", "/apis/apps/v1/namespaces/default/deployments/small")
        self.assertEqual(code, 200)

    def test_equivalent_version(self) -> None:
        """matchPolicy Equivalent: a rule on autoscaling/v1 catches a create through
        autoscaling/v2, with C{request.kind} the matched version; Exact does not."""
        hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
               "metadata": {"name": "h"},
               "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                           "name": "web"},
                        "minReplicas": 1, "maxReplicas": 3}}
        policy = _policy("p", [{"expression": "false", "messageExpression":
                                "request.kind.version + ' ' + request.requestKind.version"}])
        policy["spec"]["matchConstraints"]["resourceRules"][0].update(
            apiGroups=["autoscaling"], resources=["horizontalpodautoscalers"])
        self.install(policy, _binding("b", "p"))
        path = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
        code, body, _ = self.request("POST", path, hpa)
        self.assertEqual((code, body["details"]["causes"][0]["message"][-5:]),
                         (422, "v1 v2"))
        _, current, _ = self.request("GET", f"{ARG}/validatingadmissionpolicies/p")
        current["spec"]["matchConstraints"]["matchPolicy"] = "Exact"
        self.request("PUT", f"{ARG}/validatingadmissionpolicies/p", current)
        self.assertEqual(self.request("POST", path, hpa)[0], 201)


def _attrs(operation: str = "CREATE", resource: str = "deployments", subresource: str = "",
           namespace: str = "default", name: str = "web", obj: Optional[dict] = None,
           group: str = "apps") -> Attributes:
    return Attributes(operation, GroupVersionKind(group, "v1", "Deployment"),
                      GroupVersionResource(group, "v1", resource), subresource, namespace,
                      name, obj if obj is not None else {"metadata": {"name": name}})


class MatchingTests(SynchronousTestCase):
    """Upstream's rule matching (C{rules.Matcher})."""

    def rule(self, **kw: Any) -> dict:
        rule = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["deployments"]}
        rule.update(kw)
        return rule

    def test_wildcards_and_subresources(self) -> None:
        a = _attrs()
        s = _attrs("UPDATE", subresource="scale")
        m = matching.rule_matches
        self.assertTrue(m(self.rule(resources=["*"]), a, a.resource))
        self.assertFalse(m(self.rule(resources=["*"], operations=["*"]), s, s.resource))
        self.assertTrue(m(self.rule(resources=["*/*"], operations=["*"]), s, s.resource))
        self.assertTrue(m(self.rule(resources=["deployments/scale"], operations=["UPDATE"]),
                          s, s.resource))
        self.assertTrue(m(self.rule(resources=["*/scale"], operations=["UPDATE"]), s,
                          s.resource))
        self.assertFalse(m(self.rule(resources=["deployments/status"],
                                     operations=["UPDATE"]), s, s.resource))
        self.assertFalse(m(self.rule(operations=["UPDATE"]), a, a.resource))
        self.assertTrue(m(self.rule(apiGroups=["*"], apiVersions=["*"]), a, a.resource))
        self.assertFalse(m(self.rule(apiGroups=[""]), a, a.resource))
        self.assertFalse(m(self.rule(scope="Cluster"), a, a.resource))
        self.assertTrue(m(self.rule(scope="Namespaced"), a, a.resource))

    def test_resource_names(self) -> None:
        rules = [self.rule(resourceNames=["web"])]
        self.assertIsNotNone(matching.matches_resource_rules(rules, "Exact", _attrs(), None))
        self.assertIsNone(matching.matches_resource_rules(rules, "Exact", _attrs(name="db"),
                                                          None))

    def test_equivalent(self) -> None:
        """Equivalent matches another served version of the resource; Exact does not."""
        rules = [self.rule(apiVersions=["v1beta1"])]

        def equivalents(group: str, resource: str) -> list:
            return [("v1", "Deployment"), ("v1beta1", "Deployment")]

        found = matching.matches_resource_rules(rules, "Equivalent", _attrs(), equivalents)
        self.assertEqual(found.resource.version, "v1beta1")
        self.assertIsNone(matching.matches_resource_rules(rules, "Exact", _attrs(),
                                                          equivalents))


#: about 60,000 each on L{_LONG} (cel-go's regex cost: string length times pattern length)
_MATCH = "object.s.matches('(a|b)+c')"
_LONG = "ab" * 150000
#: about 960,000: below the per-call limit
_EXPENSIVE = " && ".join([_MATCH] * 16)


class CompilerTests(SynchronousTestCase):
    """Compilation errors and cost limits (upstream's texts)."""

    def test_return_type(self) -> None:
        self.assertEqual(compiler.compile_expression("1", ("bool",)).error,
                         "must evaluate to bool but got int")
        self.assertIsNone(compiler.compile_expression("object.x", ("bool",)).error)

    def test_params_undeclared_without_param_kind(self) -> None:
        self.assertIn("undeclared reference to 'params",
                      compiler.compile_expression("params.x == 1").error)
        self.assertIsNone(compiler.compile_expression("params.x == 1", has_params=True).error)

    def test_per_call_limit(self) -> None:
        """An evaluation above the per-call limit fails with cel-go's error."""
        c = compiler.compile_expression(" && ".join([_MATCH] * 17))
        ctx = compiler.Context({"object": {"s": _LONG}}, {})
        value, _ = ctx.evaluate(c, compiler.RUNTIME_CEL_COST_BUDGET)
        self.assertEqual(value.message, f"expression '{c.expression}' resulted in error: "
                                        "operation cancelled: actual cost limit exceeded")

    def test_budget(self) -> None:
        """The evaluations of one input share the budget; past it upstream's error."""
        v = PolicyValidator({"validations": [{"expression": _EXPENSIVE}] * 11})
        data = {"object": {"s": _LONG}, "oldObject": None, "request": {},
                "namespaceObject": None}
        result = v.validate(data)
        self.assertEqual([(d.action, d.message) for d in result.decisions], [
            ("Deny", compiler.OUT_OF_BUDGET)])
        self.assertEqual(len(PolicyValidator({"validations": [
            {"expression": _EXPENSIVE}] * 10}).validate(data).decisions), 10)
        ignore = PolicyValidator({"failurePolicy": "Ignore",
                                  "validations": [{"expression": _EXPENSIVE}] * 11})
        result = ignore.validate(data)
        self.assertEqual(result.decisions[0].action, "Admit")

    def test_audit_annotations(self) -> None:
        v = PolicyValidator({"auditAnnotations": [
            {"key": "replicas", "valueExpression": "'n=' + string(object.n)"},
            {"key": "none", "valueExpression": "null"}]})
        result = v.validate({"object": {"n": 2}, "oldObject": None, "request": {},
                             "namespaceObject": None})
        self.assertEqual([(a.key, a.action, a.value) for a in result.audit_annotations],
                         [("replicas", "publish", "n=2"), ("none", "exclude", "")])


class TypeCheckingTests(KubeTestCase):
    """The status controller fills C{status.typeChecking} and C{observedGeneration}."""

    def test_type_warnings(self) -> None:
        """Upstream's e2e type-check case: two warnings, one per expression, naming the
        kind and cel-go's overload error."""
        policy = _policy("confused", [{
            "expression": "object.spec.replicas > '1'",
            "messageExpression": "'wants replicas > 1, got ' + object.spec.replicas"}])
        self.request("POST", f"{ARG}/validatingadmissionpolicies", policy)
        self.clock.advance(0)
        _, got, _ = self.request("GET", f"{ARG}/validatingadmissionpolicies/confused")
        self.assertEqual(got["status"]["observedGeneration"], 1)
        warnings = got["status"]["typeChecking"]["expressionWarnings"]
        self.assertEqual(warnings, [
            {"fieldRef": "spec.validations[0].expression",
             "warning": "apps/v1, Kind=Deployment: compilation failed: ERROR: <input>:1:22: "
                        "found no matching overload for '_>_' applied to '(int, string)'\n"
                        " | object.spec.replicas > '1'\n | .....................^\n"},
            {"fieldRef": "spec.validations[0].messageExpression",
             "warning": "apps/v1, Kind=Deployment: compilation failed: ERROR: <input>:1:28: "
                        "found no matching overload for '_+_' applied to '(string, int)'\n"
                        " | 'wants replicas > 1, got ' + object.spec.replicas\n"
                        " | ...........................^\n"}])

    def test_no_warnings(self) -> None:
        """A well-typed policy gets an empty typeChecking; a spec change is checked again."""
        self.request("POST", f"{ARG}/validatingadmissionpolicies",
                     _policy("fine", [{"expression": "object.spec.replicas > 1"}]))
        self.clock.advance(0)
        _, got, _ = self.request("GET", f"{ARG}/validatingadmissionpolicies/fine")
        self.assertEqual(got["status"], {"observedGeneration": 1, "typeChecking": {}})
        got["spec"]["validations"][0]["expression"] = "object.metadata.name > 1"
        self.request("PUT", f"{ARG}/validatingadmissionpolicies/fine", got)
        self.clock.advance(0)
        _, got, _ = self.request("GET", f"{ARG}/validatingadmissionpolicies/fine")
        self.assertEqual(got["status"]["observedGeneration"], 2)
        self.assertEqual(len(got["status"]["typeChecking"]["expressionWarnings"]), 1)

    def test_custom_resource(self) -> None:
        """Policies on custom resources are checked against the CRD's schema."""
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                     "names": {"plural": "crontabs", "singular": "crontab",
                               "kind": "CronTab", "listKind": "CronTabList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object", "properties": {"spec": {
                                           "type": "object", "properties": {
                                               "replicas": {"type": "integer"}}}}}}}]}}
        code, body, _ = self.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        self.assertEqual(code, 201, body)
        self.clock.advance(1)
        policy = _policy("crd", [{"expression": "object.spec.replicas > '1'"}])
        policy["spec"]["matchConstraints"]["resourceRules"][0].update(
            apiGroups=["stable.example.com"], resources=["crontabs"])
        self.request("POST", f"{ARG}/validatingadmissionpolicies", policy)
        self.clock.advance(0)
        _, got, _ = self.request("GET", f"{ARG}/validatingadmissionpolicies/crd")
        warnings = got["status"]["typeChecking"]["expressionWarnings"]
        self.assertEqual([w["warning"].split(": ")[0] for w in warnings],
                         ["stable.example.com/v1, Kind=CronTab"])


class AuthorizerLibraryTests(_Helpers, KubeTestCase):
    """The CEL C{authorizer} library answers from the server's authorizer (RBAC here)."""

    modes = ("RBAC",)

    def test_checks(self) -> None:
        """Resource and path checks for the requesting user and for a service account,
        C{authorizer.requestResource}, and the decision's accessors."""
        self.install(_policy("p", [
            {"expression": "authorizer.group('apps').resource('deployments')"
                           ".namespace('default').check('create').allowed()"},
            {"expression": "authorizer.requestResource.check('create').allowed()"},
            {"expression": "authorizer.path('/healthz').check('get').allowed()"},
            {"expression": "!authorizer.serviceAccount('default', 'nobody').group('')"
                           ".resource('secrets').check('get').allowed()"},
            {"expression": "object.spec.replicas < 2 || authorizer.serviceAccount("
                           "'default', 'nobody').group('').resource('secrets').name('s')"
                           ".check('get').allowed()",
             "message": "not allowed"},
            {"expression": "!authorizer.serviceAccount('default', 'nobody').group('')"
                           ".resource('secrets').check('get').errored()"}]),
            _binding("b", "p"))
        self.assertEqual(self.create(_deployment("one", 1))[0], 201)
        code, body, _ = self.create(_deployment("two", 2))
        self.assertEqual(code, 422)
        self.assertEqual(body["details"]["causes"][0]["message"],
                         "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
                         "not allowed")

    def test_structured_variable(self) -> None:
        """A variable holding a map or list is usable by other expressions."""
        v = PolicyValidator({
            "variables": [{"name": "labels", "expression":
                           "has(object.metadata.labels) ? object.metadata.labels : {}"},
                          {"name": "names", "expression": "[object.metadata.labels]"}],
            "validations": [{"expression": "!('deny' in variables.labels)"},
                            {"expression": "variables.names[0].app == 'web'"}]})
        result = v.validate({"object": {"metadata": {"labels": {"app": "web"}}},
                             "oldObject": None, "request": {}, "namespaceObject": None})
        self.assertEqual([d.action for d in result.decisions], ["Admit", "Admit"])


class AuditTests(_Helpers, KubeTestCase):
    """Audit annotations the plugin records on the request's attributes."""

    def validate(self, obj: dict) -> Attributes:
        from twisted.internet.defer import ensureDeferred

        from kubetwist.admission.plugins.policy.plugin import ValidatingAdmissionPolicy

        plugin = next(p for p in self.kube.admission.plugins
                      if isinstance(p, ValidatingAdmissionPolicy))
        a = _attrs(obj=obj, name=obj["metadata"]["name"])
        self.successResultOf(ensureDeferred(plugin.validate(a)))
        return a

    def test_audit_action_and_annotations(self) -> None:
        """Audit records upstream's validation_failure JSON; auditAnnotations are published
        as <policy>/<key>."""
        policy = _policy("p", [{"expression": "object.spec.replicas < 2",
                                "message": "a <b> & c"}],
                         auditAnnotations=[{"key": "replicas", "valueExpression":
                                            "'n=' + string(object.spec.replicas)"}])
        self.install(policy, _binding("b", "p", ("Audit",)))
        a = self.validate(_deployment("web", 3))
        self.assertEqual(a.annotations, {
            "p/replicas": "n=3",
            "validation.policy.admission.k8s.io/validation_failure":
                '[{"message":"a \\u003cb\\u003e \\u0026 c","policy":"p","binding":"b",'
                '"expressionIndex":0,"validationActions":["Audit"]}]'})
