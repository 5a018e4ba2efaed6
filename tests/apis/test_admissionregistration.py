"""Tests for L{kubetwist.apis.admissionregistration}: webhook configurations,
ValidatingAdmissionPolicies and their bindings (stored, defaulted, validated)."""

from __future__ import annotations

import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.admissionregistration import register
from kubetwist.apis.admissionregistration.strategies import label_selector_string
from tests.support import KubeTestCase

VWC = register.STRATEGIES["validatingwebhookconfigurations"]
MWC = register.STRATEGIES["mutatingwebhookconfigurations"]
VAP = register.STRATEGIES["validatingadmissionpolicies"]
VAP_STATUS = register.STRATEGIES["validatingadmissionpolicies/status"]
BINDING = register.STRATEGIES["validatingadmissionpolicybindings"]
GV = "/apis/admissionregistration.k8s.io/v1"


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


def hook(**fields) -> dict:
    h = {"name": "check.example.com", "sideEffects": "None",
         "admissionReviewVersions": ["v1"],
         "clientConfig": {"service": {"namespace": "default", "name": "hooks"}},
         "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["pods"]}]}
    h.update(fields)
    return h


def webhook_config(*hooks, kind="ValidatingWebhookConfiguration") -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": "hooks"}, "webhooks": list(hooks) or [hook()]}


def policy(**spec) -> dict:
    body = {"matchConstraints": {"resourceRules": [{
                "operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"],
                "apiVersions": ["v1"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= 5"}]}
    body.update(spec)
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "max-replicas"}, "spec": body}


def binding(**spec) -> dict:
    body = {"policyName": "max-replicas", "validationActions": ["Deny"]}
    body.update(spec)
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "max-replicas-binding"}, "spec": body}


class DefaultsTests(SynchronousTestCase):
    def test_webhook_defaults(self) -> None:
        """v1 webhook defaults, rule scope and service port; sideEffects and review versions
        stay unset (they are required)."""
        config = webhook_config(hook(sideEffects=None, admissionReviewVersions=None),
                                kind="MutatingWebhookConfiguration")
        MWC.default(config)
        h = config["webhooks"][0]
        self.assertEqual(
            {k: h[k] for k in ("failurePolicy", "matchPolicy", "namespaceSelector",
                               "objectSelector", "timeoutSeconds", "reinvocationPolicy")},
            {"failurePolicy": "Fail", "matchPolicy": "Equivalent", "namespaceSelector": {},
             "objectSelector": {}, "timeoutSeconds": 10, "reinvocationPolicy": "Never"})
        self.assertEqual(h["rules"][0]["scope"], "*")
        self.assertEqual(h["clientConfig"]["service"]["port"], 443)
        self.assertIsNone(h["sideEffects"])
        validating = webhook_config()
        VWC.default(validating)
        self.assertNotIn("reinvocationPolicy", validating["webhooks"][0])

    def test_policy_defaults(self) -> None:
        """failurePolicy Fail and matchConstraints defaults; binding matchResources too."""
        p = policy()
        VAP.default(p)
        self.assertEqual(p["spec"]["failurePolicy"], "Fail")
        mc = p["spec"]["matchConstraints"]
        self.assertEqual((mc["matchPolicy"], mc["namespaceSelector"], mc["objectSelector"]),
                         ("Equivalent", {}, {}))
        self.assertEqual(mc["resourceRules"][0]["scope"], "*")
        b = binding(matchResources={})
        BINDING.default(b)
        self.assertEqual(b["spec"]["matchResources"], {
            "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}})


class WebhookValidationTests(SynchronousTestCase):
    def validate(self, *hooks) -> list[str]:
        config = webhook_config(*hooks)
        VWC.default(config)
        return messages(VWC.validate(config))

    def test_valid(self) -> None:
        """A defaulted webhook with a service is valid."""
        self.assertEqual(self.validate(hook()), [])

    def test_name_and_uniqueness(self) -> None:
        """Webhook names must be fully qualified and unique."""
        self.assertEqual(self.validate(hook(name="check"), hook(), hook()), [
            ('webhooks[0].name: Invalid value: "check": should be a domain with at least three '
            "segments separated by dots"),
            'webhooks[2].name: Duplicate value: "check.example.com"'])

    def test_client_config(self) -> None:
        """Exactly one of url/service; https without user info, query or fragment."""
        self.assertEqual(self.validate(hook(clientConfig={})), [
            ("webhooks[0].clientConfig: Required value: exactly one of url or service is "
            "required")])
        self.assertEqual(self.validate(hook(clientConfig={
            "url": "http://user@example.com/x?a=b#frag"})), [
            ('webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only '
            "allowed URL scheme; desired format: https://host[/path]"),
            ('webhooks[0].clientConfig.url: Invalid value: "user": user information is not '
            "permitted in the URL"),
            ('webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted '
            "in the URL"),
            ('webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not '
            "permitted in the URL")])
        self.assertEqual(self.validate(hook(clientConfig={"service": {
            "name": "", "namespace": "ns", "port": 0, "path": "/a//B"}})), [
            "webhooks[0].clientConfig.service.name: Required value",
            ("webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must "
            "be between 1 and 65535, inclusive"),
            ('webhooks[0].clientConfig.service.path: Invalid value: "/a//B": segment[1] may '
            "not be empty"),
            ('webhooks[0].clientConfig.service.path: Invalid value: "/a//B": segment[2]: a '
            "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")])

    def test_side_effects_timeout_versions(self) -> None:
        """sideEffects is required and None/NoneOnDryRun; timeouts 1..30; a known
        AdmissionReview version is required."""
        self.assertEqual(self.validate(hook(sideEffects=None)), [
            "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"])
        self.assertEqual(self.validate(hook(sideEffects="Some", timeoutSeconds=31)), [
            ('webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
            '"NoneOnDryRun"'),
            ("webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between "
            "1 and 30 seconds")])
        self.assertEqual(self.validate(hook(admissionReviewVersions=[])), [
            ("webhooks[0].admissionReviewVersions: Required value: must specify one of v1, "
            "v1beta1")])
        self.assertEqual(self.validate(hook(admissionReviewVersions=["v2", "v2"])), [
            'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
            ('webhooks[0].admissionReviewVersions: Invalid value: []string{"v2", "v2"}: must '
            "include at least one of v1, v1beta1")])

    def test_rules(self) -> None:
        """Operations, groups, versions and resources as upstream's validateRule."""
        self.assertEqual(self.validate(hook(rules=[{
            "operations": ["*", "PATCH"], "apiGroups": [], "apiVersions": ["v1", ""],
            "resources": ["*", "pods"], "scope": "Everywhere"}])), [
            ('webhooks[0].rules[0].operations: Invalid value: '
            '[]admissionregistration.OperationType{"*", "PATCH"}: if \'*\' is present, must '
            "not specify other operations"),
            ('webhooks[0].rules[0].operations[1]: Unsupported value: "PATCH": supported '
            'values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'),
            "webhooks[0].rules[0].apiGroups: Required value",
            "webhooks[0].rules[0].apiVersions[1]: Required value",
            ('webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods"}: if \'*\' '
            "is present, must not specify other resources without subresources"),
            ('webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: '
            '"*", "Cluster", "Namespaced"')])

    def test_match_conditions(self) -> None:
        """Match conditions need qualified unique names and boolean CEL expressions."""
        errs = self.validate(hook(matchConditions=[
            {"name": "a", "expression": "object.metadata.name == 'x'"},
            {"name": "a", "expression": "1 + 1"},
            {"name": "bad name", "expression": "object.x =="},
        ]))
        self.assertEqual(errs[0], 'webhooks[0].matchConditions[1].expression: Invalid value: '
                                  '"1 + 1": must evaluate to bool but got int')
        self.assertEqual(errs[1], 'webhooks[0].matchConditions[1].name: Duplicate value: "a"')
        self.assertTrue(errs[2].startswith(
            'webhooks[0].matchConditions[2].expression: Invalid value: "object.x ==": '
            "compilation failed: ERROR: <input>:1:12: Syntax error: "), errs[2])
        self.assertTrue(errs[3].startswith(
            'webhooks[0].matchConditions[2].name: Invalid value: "bad name": name part must '
            "consist of alphanumeric characters"), errs[3])
        self.assertEqual(len(errs), 4)

    def test_update_tolerates_stored_side_effects(self) -> None:
        """An update may keep sideEffects the stored object already had (Some)."""
        old = webhook_config(hook(sideEffects="Some"))
        VWC.default(old)
        old["metadata"]["resourceVersion"] = "3"
        new = copy.deepcopy(old)
        self.assertEqual(VWC.validate_update(new, old), [])

    def test_generation(self) -> None:
        """generation is 1 on create and grows only when webhooks change."""
        config = webhook_config()
        VWC.prepare_for_create(config)
        self.assertEqual(config["metadata"]["generation"], 1)
        new = copy.deepcopy(config)
        new["metadata"]["labels"] = {"a": "b"}
        VWC.prepare_for_update(new, config)
        self.assertEqual(new["metadata"]["generation"], 1)
        new["webhooks"][0]["timeoutSeconds"] = 5
        VWC.prepare_for_update(new, config)
        self.assertEqual(new["metadata"]["generation"], 2)


class PolicyValidationTests(SynchronousTestCase):
    def validate(self, p: dict) -> list[str]:
        VAP.default(p)
        return messages(VAP.validate(p))

    def test_valid(self) -> None:
        """A policy with a resource rule and a boolean validation is valid."""
        self.assertEqual(self.validate(policy()), [])

    def test_required_parts(self) -> None:
        """matchConstraints and validations-or-auditAnnotations are required."""
        p = policy(validations=[])
        del p["spec"]["matchConstraints"]
        self.assertEqual(self.validate(p), [
            "spec.matchConstraints: Required value",
            ("spec.validations: Required value: validations or auditAnnotations must contain at "
            "least one item"),
            ("spec.auditAnnotations: Required value: validations or auditAnnotations must "
            "contain at least one item")])
        self.assertEqual(self.validate(policy(matchConstraints={})), [
            "spec.matchConstraints.resourceRules: Required value"])

    def test_param_kind_and_params(self) -> None:
        """paramKind is checked; params is only declared when paramKind is set."""
        p = policy(validations=[{"expression": "object.spec.replicas <= params.max"}])
        errs = self.validate(p)
        self.assertEqual(len(errs), 1)
        self.assertTrue(errs[0].startswith(
            'spec.validations[0].expression: Invalid value: "object.spec.replicas <= '
            'params.max": compilation failed: ERROR: <input>:1:'), errs[0])
        p["spec"]["paramKind"] = {"apiVersion": "a/b/c", "kind": "Config_Map"}
        self.assertEqual(self.validate(p), [
            ('spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion '
            "string: a/b/c"),
            ('spec.paramKind.kind: Invalid value: "Config_Map": may have mixed case, but should '
            "otherwise match: a DNS-1035 label must consist of lower case alphanumeric "
            "characters or '-', start with an alphabetic character, and end with an "
            "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
            "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")])
        p["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
        self.assertEqual(self.validate(p), [])

    def test_validation_fields(self) -> None:
        """message, messageExpression and reason rules."""
        p = policy(validations=[{"expression": "true", "message": "two\nlines",
                                 "messageExpression": "1", "reason": "NotFound"}])
        self.assertEqual(self.validate(p), [
            ('spec.validations[0].messageExpression: Invalid value: "1": must evaluate to '
            "string but got int"),
            ('spec.validations[0].message: Invalid value: "two\\nlines": message must not '
            "contain line breaks"),
            ('spec.validations[0].reason: Unsupported value: "NotFound": supported values: '
            '"Forbidden", "Invalid", "RequestEntityTooLarge"')])

    def test_variables_and_audit_annotations(self) -> None:
        """Variables need CEL identifiers; audit annotation keys are unique and qualified."""
        p = policy(variables=[{"name": "in", "expression": "object.spec"}],
                   validations=[{"expression": "variables.spec != null"}],
                   auditAnnotations=[{"key": "k", "valueExpression": "'v'"},
                                     {"key": "k", "valueExpression": "1"}])
        self.assertEqual(self.validate(p), [
            'spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier',
            ('spec.auditAnnotations[1].valueExpression: Invalid value: "1": must evaluate to '
            "one of [string null_type] but got int"),
            'spec.auditAnnotations[1].key: Duplicate value: "k"'])

    def test_generation_and_status(self) -> None:
        """Create clears status (generation 1); spec changes bump the generation; the status
        subresource keeps the spec."""
        p = policy()
        p["status"] = {"observedGeneration": 7}
        VAP.prepare_for_create(p)
        self.assertEqual((p["status"], p["metadata"]["generation"]), ({}, 1))
        new = copy.deepcopy(p)
        new["spec"]["validations"][0]["expression"] = "true"
        new["status"] = {"observedGeneration": 1}
        VAP.prepare_for_update(new, p)
        self.assertEqual((new["status"], new["metadata"]["generation"]), ({}, 2))
        status = copy.deepcopy(p)
        status["spec"] = {}
        status["status"] = {"observedGeneration": 1}
        VAP_STATUS.prepare_for_update(status, p)
        self.assertEqual(status["spec"], p["spec"])
        self.assertEqual(status["status"], {"observedGeneration": 1})

    def test_table(self) -> None:
        """NAME VALIDATIONS PARAMKIND AGE, <unset> without paramKind."""
        self.assertEqual([c["name"] for c in VAP.table.columns],
                         ["Name", "Validations", "ParamKind", "Age"])
        self.assertEqual(VAP.table.row(policy())[:3], ["max-replicas", 1, "<unset>"])
        p = policy(paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
        self.assertEqual(VAP.table.row(p)[2], "v1/ConfigMap")


class BindingValidationTests(SynchronousTestCase):
    def test_valid(self) -> None:
        """A binding naming a policy with Deny is valid."""
        self.assertEqual(BINDING.validate(binding()), [])

    def test_errors(self) -> None:
        """policyName and validationActions are required; paramRef rules; the match
        resources path keeps upstream's spelling."""
        b = binding(policyName="", validationActions=[],
                    paramRef={"name": "p", "selector": {}}, matchResources={})
        self.assertEqual(messages(BINDING.validate(b)), [
            "spec.policyName: Required value",
            "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
            "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
            "spec.paramRef.parameterNotFoundAction: Required value",
            "spec.matchResouces.matchPolicy: Required value",
            "spec.matchResouces.namespaceSelector: Required value",
            "spec.matchResouces.objectSelector: Required value",
            ("spec.validationActions: Required value: at least one validation action is "
            "required")])
        b = binding(validationActions=["Deny", "Warn", "Deny", "Log"])
        self.assertEqual(messages(BINDING.validate(b)), [
            'spec.validationActions[2]: Duplicate value: "Deny"',
            ('spec.validationActions[3]: Unsupported value: "Log": supported values: "Audit", '
            '"Deny", "Warn"'),
            ('spec.validationActions: Invalid value: []admissionregistration.ValidationAction'
            '{"Deny", "Warn", "Deny", "Log"}: must not contain both Deny and Warn (repeating '
            "the same validation failure information in the API response and headers serves "
            "no purpose)")])

    def test_table(self) -> None:
        """The ParamRef cell: namespace/name, */name, a selector's Go String(), <unset>."""
        self.assertEqual(BINDING.table.row(binding())[:3],
                         ["max-replicas-binding", "max-replicas", "<unset>"])
        self.assertEqual(BINDING.table.row(binding(paramRef={"name": "c"}))[2], "*/c")
        self.assertEqual(
            BINDING.table.row(binding(paramRef={"name": "c", "namespace": "n"}))[2], "n/c")
        self.assertEqual(
            label_selector_string({"matchLabels": {"b": "2", "a": "1"}}),
            "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},"
            "MatchExpressions:[]LabelSelectorRequirement{},}")


class HTTPTests(KubeTestCase):
    def test_webhook_configuration_round_trip(self) -> None:
        """Create stores the defaults and generation 1; the table counts webhooks; an
        invalid one is a 422."""
        code, body, _ = self.request("POST", GV + "/validatingwebhookconfigurations",
                                     webhook_config())
        self.assertEqual(code, 201, body)
        self.assertEqual(body["metadata"]["generation"], 1)
        self.assertEqual(body["webhooks"][0]["timeoutSeconds"], 10)
        code, table, _ = self.request(
            "GET", GV + "/validatingwebhookconfigurations",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual([c["name"] for c in table["columnDefinitions"]],
                         ["Name", "Webhooks", "Age"])
        self.assertEqual(table["rows"][0]["cells"][:2], ["hooks", 1])
        bad = webhook_config(hook(sideEffects="Some"))
        bad["metadata"]["name"] = "bad"
        code, body, _ = self.request("POST", GV + "/validatingwebhookconfigurations", bad)
        self.assertEqual(code, 422)
        self.assertEqual(body["message"],
                         'ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is '
                         'invalid: webhooks[0].sideEffects: Unsupported value: "Some": '
                         'supported values: "None", "NoneOnDryRun"')

    def test_policy_and_binding(self) -> None:
        """A policy (with status subresource) and its binding are served cluster-scoped."""
        code, body, _ = self.request("POST", GV + "/validatingadmissionpolicies", policy())
        self.assertEqual(code, 201, body)
        self.assertEqual((body["spec"]["failurePolicy"], body["status"]), ("Fail", {}))
        code, body, _ = self.request("POST", GV + "/validatingadmissionpolicybindings",
                                     binding())
        self.assertEqual(code, 201, body)
        code, body, _ = self.request("GET", GV)
        resources = {r["name"]: r for r in body["resources"]}
        self.assertEqual(sorted(resources), [
            "mutatingwebhookconfigurations", "validatingadmissionpolicies",
            "validatingadmissionpolicies/status", "validatingadmissionpolicybindings",
            "validatingwebhookconfigurations"])
        # kube-apiserver v1.32 gives the webhook configurations no short names
        self.assertNotIn("shortNames", resources["validatingwebhookconfigurations"])
        self.assertNotIn("shortNames", resources["mutatingwebhookconfigurations"])
        self.assertEqual(resources["validatingadmissionpolicies"]["categories"],
                         ["api-extensions"])

    def test_openapi_schema(self) -> None:
        """/openapi/v3 publishes the webhook configuration with its list-map webhooks."""
        _, root, _ = self.request("GET", "/openapi/v3")
        _, doc, _ = self.request(
            "GET", root["paths"]["apis/admissionregistration.k8s.io/v1"]["serverRelativeURL"])
        schema = doc["components"]["schemas"][
            "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration"]
        webhooks = schema["properties"]["webhooks"]
        self.assertEqual(
            (webhooks["x-kubernetes-list-type"], webhooks["x-kubernetes-list-map-keys"]),
            ("map", ["name"]))
