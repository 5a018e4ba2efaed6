"""Tests for L{kubetwist.apis.flowcontrol}: defaults, validation, printers, the bootstrap
configuration and its producer (post-start hook C{priority-and-fairness-config-producer})."""

from __future__ import annotations

import copy

from twisted.internet.defer import ensureDeferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.flowcontrol import bootstrap, register
from kubetwist.apis.flowcontrol.ensurer import ensure, parse_bool
from kubetwist.apis.flowcontrol.validation import required_entropy_bits
from tests.support import KubeTestCase

FS = register.STRATEGIES["flowschemas"]
PL = register.STRATEGIES["prioritylevelconfigurations"]
BASE = "/apis/flowcontrol.apiserver.k8s.io/v1"
AUTO = "apf.kubernetes.io/autoupdate-spec"


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


def flow_schema(name: str = "fs", **spec) -> dict:
    body = {"priorityLevelConfiguration": {"name": "global-default"},
            "matchingPrecedence": 500,
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "g"}}],
                       "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}]}
    body.update(spec)
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": name}, "spec": body}


def priority_level(name: str = "pl", **limited) -> dict:
    body = {"limitResponse": {"type": "Queue", "queuing": {}}}
    body.update(limited)
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": name}, "spec": {"type": "Limited", "limited": body}}


class DefaultsTests(SynchronousTestCase):
    def test_priority_level_defaults(self) -> None:
        """A nil nominalConcurrencyShares becomes 30, lendablePercent 0, queuing 64/8/50."""
        pl = priority_level()
        PL.default(pl)
        self.assertEqual(pl["spec"]["limited"], {
            "limitResponse": {"type": "Queue", "queuing": {
                "queues": 64, "handSize": 8, "queueLengthLimit": 50}},
            "nominalConcurrencyShares": 30, "lendablePercent": 0})

    def test_zero_shares_kept(self) -> None:
        """v1's nominalConcurrencyShares is a pointer: an explicit 0 is not defaulted."""
        pl = priority_level(nominalConcurrencyShares=0)
        PL.default(pl)
        self.assertEqual(pl["spec"]["limited"]["nominalConcurrencyShares"], 0)
        self.assertEqual(messages(PL.validate(pl)), [])

    def test_exempt_defaults(self) -> None:
        """spec.exempt's nil fields become 0; a missing spec.exempt stays missing."""
        pl = {"metadata": {"name": "exempt"}, "spec": {"type": "Exempt", "exempt": {}}}
        PL.default(pl)
        self.assertEqual(pl["spec"]["exempt"], {"nominalConcurrencyShares": 0,
                                                "lendablePercent": 0})
        bare = {"metadata": {"name": "exempt"}, "spec": {"type": "Exempt"}}
        PL.default(bare)
        self.assertEqual(bare["spec"], {"type": "Exempt"})

    def test_flow_schema_precedence_default(self) -> None:
        """matchingPrecedence 0 or absent becomes 1000."""
        fs = flow_schema(matchingPrecedence=0)
        FS.default(fs)
        self.assertEqual(fs["spec"]["matchingPrecedence"], 1000)


class ValidationTests(SynchronousTestCase):
    def test_flow_schema_spec(self) -> None:
        """Precedence bounds, the reserved precedence 1, distinguisher and level name."""
        fs = flow_schema(matchingPrecedence=1, distinguisherMethod={"type": "ByGroup"},
                         priorityLevelConfiguration={"name": ""})
        self.assertEqual(messages(FS.validate(fs)), [
            ("spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have "
            "matchingPrecedence 1"),
            ('spec.distinguisherMethod.type: Unsupported value: '
            'flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}: supported values: '
            '"ByNamespace", "ByUser"'),
            ("spec.priorityLevelConfiguration.name: Required value: must reference a priority "
            "level"),
        ])
        self.assertEqual(messages(FS.validate(flow_schema(matchingPrecedence=10001))), [
            "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000"])

    def test_rules(self) -> None:
        """Subjects, resource rules and non-resource rules, with upstream's paths and texts."""
        fs = flow_schema(rules=[
            {"subjects": [{"kind": "User", "group": {"name": "g"}},
                          {"kind": "ServiceAccount", "serviceAccount": {"name": "a"}},
                          {"kind": "Robot"}],
             "resourceRules": [{"verbs": ["get", "fly"], "apiGroups": ["*", "apps"],
                                "resources": ["pods"], "namespaces": ["Bad_NS"]}],
             "nonResourceRules": [{"verbs": ["*", "get"], "nonResourceURLs": ["/a/*/b"]}]},
            {"subjects": []},
        ])
        self.assertEqual(messages(FS.validate(fs)), [
            ("spec.rules[0].subjects[0].user: Required value: user is required when subject "
            "kind is 'User'"),
            ("spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind "
            "is not 'Group'"),
            ("spec.rules[0].subjects[1].serviceAccount.namespace: Required value: must specify "
            "namespace for service account"),
            ('spec.rules[0].subjects[2].kind: Unsupported value: "Robot": supported values: '
            '"Group", "ServiceAccount", "User"'),
            ('spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{"get", "fly"}: '
            'supported values: "create", "delete", "deletecollection", "get", "list", "patch", '
            '"proxy", "update", "watch"'),
            ('spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: '
            "if '*' is present, must not specify other api groups"),
            ('spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: "Bad_NS": each member '
            "of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must "
            "consist of lower case alphanumeric characters or '-', and must start and end with "
            "an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
            ('spec.rules[0].nonResourceRules[0].verbs: Invalid value: []string{"*", "get"}: if '
            "'*' is present, must not specify other verbs"),
            ('spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/a/*/b": '
            "wildcard can only do suffix matching"),
            "spec.rules[1].subjects: Required value: subjects must contain at least one value",
            ("spec.rules[1]: Required value: at least one of resourceRules and nonResourceRules "
            "has to be non-empty"),
        ])

    def test_mandatory_flow_schema_fixed(self) -> None:
        """The mandatory schemas' specs must equal the bootstrap ones (after defaulting)."""
        fs = bootstrap.mandatory_flow_schemas()[1]
        FS.default(fs)
        self.assertEqual(messages(FS.validate(fs)), [])
        fs["spec"]["rules"][0]["resourceRules"][0]["clusterScope"] = False
        errs = FS.validate(fs)
        self.assertEqual([(e.type, e.field, e.detail) for e in errs],
                         [("Invalid", "spec", "spec of 'catch-all' must equal the fixed value")])

    def test_priority_level_spec(self) -> None:
        """Type/name pairing, queuing limits and shuffle-sharding entropy."""
        pl = priority_level(nominalConcurrencyShares=-1, lendablePercent=101,
                            borrowingLimitPercent=-2,
                            limitResponse={"type": "Queue", "queuing": {
                                "queues": 128, "handSize": 20, "queueLengthLimit": 0}})
        self.assertEqual(messages(PL.validate(pl)), [
            ("spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative "
            "integer"),
            ("spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be "
            "positive"),
            ("spec.limited.limitResponse.queuing.handSize: Invalid value: 20: required entropy "
            "bits of deckSize 128 and handSize 20 should not be greater than 60"),
            ("spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, "
            "inclusive"),
            ("spec.limited.borrowingLimitPercent: Invalid value: -2: if specified, must be a "
            "non-negative integer"),
        ])
        exempt = {"metadata": {"name": "other"},
                  "spec": {"type": "Exempt", "limited": {}, "exempt": {"lendablePercent": -1}}}
        self.assertEqual(messages(PL.validate(exempt)), [
            ('spec.type: Invalid value: "Exempt": type must be \'Exempt\' if and only if name '
            "is 'exempt'"),
            "spec.limited: Forbidden: must be nil if the type is not Limited",
            ("spec.exempt.lendablePercent: Invalid value: -1: must be between 0 and 100, "
            "inclusive"),
        ])
        reject = priority_level(limitResponse={"type": "Reject", "queuing": {}})
        self.assertEqual(messages(PL.validate(reject)), [
            ("spec.limited.limitResponse.queuing: Forbidden: must be nil if "
            "limited.limitResponse.type is not Limited")])
        self.assertEqual(required_entropy_bits(64, 8), 48)

    def test_mandatory_priority_levels(self) -> None:
        """catch-all is fixed; exempt may change its spec.exempt values."""
        catch_all = bootstrap.mandatory_priority_levels()[0]
        PL.default(catch_all)
        catch_all["spec"]["limited"]["nominalConcurrencyShares"] = 6
        self.assertEqual([(e.field, e.detail) for e in PL.validate(catch_all)],
                         [("spec", "spec of 'catch-all' must equal the fixed value")])
        exempt = bootstrap.mandatory_priority_levels()[1]
        exempt["spec"]["exempt"]["nominalConcurrencyShares"] = 7
        self.assertEqual(messages(PL.validate(exempt)), [])

    def test_status_conditions(self) -> None:
        """Condition types must be unique and non-empty."""
        fs = flow_schema()
        fs["status"] = {"conditions": [{"type": "Dangling"}, {"type": "Dangling"}, {}]}
        old = copy.deepcopy(fs)
        old["metadata"]["resourceVersion"] = "1"
        fs["metadata"]["resourceVersion"] = "1"
        status = register.STRATEGIES["flowschemas/status"]
        self.assertEqual(messages(status.validate_update(fs, old)), [
            'status.conditions[1].type: Duplicate value: "Dangling"',
            "status.conditions[2].type: Required value: must not be empty",
        ])


class PrinterTests(SynchronousTestCase):
    def test_columns(self) -> None:
        """Column names as upstream's printers; FlowSchema lists print by precedence."""
        self.assertEqual([c["name"] for c in FS.table.columns],
                         ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod",
                          "Age", "MissingPL"])
        self.assertEqual([c["name"] for c in PL.table.columns],
                         ["Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize",
                          "QueueLengthLimit", "Age"])
        ordered = FS.table.order([flow_schema("b", matchingPrecedence=5),
                                  flow_schema("a", matchingPrecedence=5),
                                  flow_schema("c", matchingPrecedence=1)])
        self.assertEqual([f["metadata"]["name"] for f in ordered], ["c", "a", "b"])

    def test_rows(self) -> None:
        """Exempt levels print <none>; a FlowSchema without Dangling condition prints ?."""
        exempt = bootstrap.mandatory_priority_levels()[1]
        self.assertEqual(PL.table.row(exempt)[:6],
                         ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"])
        fs = bootstrap.mandatory_flow_schemas()[0]
        self.assertEqual(FS.table.row(fs)[:4] + FS.table.row(fs)[5:],
                         ["exempt", "exempt", 1, "<none>", "?"])
        fs["status"] = {"conditions": [{"type": "Dangling", "status": "False"}]}
        self.assertEqual(FS.table.row(fs)[5], "False")


class BootstrapDataTests(SynchronousTestCase):
    def test_names(self) -> None:
        """The v1.32 bootstrap objects, annotated for auto-update, all valid."""
        self.assertEqual([o["metadata"]["name"] for o in bootstrap.suggested_flow_schemas()], [
            "system-nodes", "system-node-high", "probes", "system-leader-election",
            "workload-leader-election", "endpoint-controller", "kube-controller-manager",
            "kube-scheduler", "kube-system-service-accounts", "service-accounts",
            "global-default"])
        self.assertEqual([o["metadata"]["name"] for o in bootstrap.suggested_priority_levels()],
                         ["system", "node-high", "leader-election", "workload-high",
                          "workload-low", "global-default"])
        for obj in (bootstrap.mandatory_flow_schemas() + bootstrap.suggested_flow_schemas()):
            self.assertEqual(obj["metadata"]["annotations"], {AUTO: "true"})
            FS.default(obj)
            self.assertEqual(messages(FS.validate(obj)), [], obj["metadata"]["name"])
        for obj in (bootstrap.mandatory_priority_levels()
                    + bootstrap.suggested_priority_levels()):
            PL.default(obj)
            self.assertEqual(messages(PL.validate(obj)), [], obj["metadata"]["name"])

    def test_parse_bool(self) -> None:
        """Go's strconv.ParseBool spellings; anything else is unparsable."""
        self.assertEqual([parse_bool(v) for v in ("t", "TRUE", "0", "False", "yes", None)],
                         [True, True, False, False, None, None])


class ProducerTests(KubeTestCase):
    def kube_stores(self):
        g = "flowcontrol.apiserver.k8s.io"
        return (self.kube.stores[(g, "flowschemas")],
                self.kube.stores[(g, "prioritylevelconfigurations")])

    def ensure_again(self) -> None:
        self.successResultOf(ensureDeferred(ensure(*self.kube_stores())))

    def test_objects_after_start(self) -> None:
        """The hook creates every bootstrap object and reports ready."""
        code, body, _ = self.request("GET", BASE + "/flowschemas")
        self.assertEqual(code, 200)
        self.assertEqual(len(body["items"]), 13)
        code, body, _ = self.request("GET", BASE + "/prioritylevelconfigurations/catch-all")
        self.assertEqual(code, 200)
        self.assertEqual(body["spec"], {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"},
            "lendablePercent": 0}})
        self.assertEqual(body["metadata"]["annotations"], {AUTO: "true"})
        self.assertEqual((body["metadata"]["generation"], body["status"]), (1, {}))
        code, body, _ = self.request(
            "GET", "/readyz/poststarthook/priority-and-fairness-config-producer")
        self.assertEqual((code, body), (200, "ok"))

    def test_mandatory_restored(self) -> None:
        """A deleted mandatory object is recreated; a suggested one with autoupdate false keeps
        its spec; an obsolete auto-updated object is removed."""
        code, _, _ = self.request("DELETE", BASE + "/flowschemas/catch-all")
        self.assertEqual(code, 200)
        code, body, _ = self.request("GET", BASE + "/prioritylevelconfigurations/workload-low")
        body["metadata"]["annotations"][AUTO] = "false"
        body["spec"]["limited"]["nominalConcurrencyShares"] = 7
        code, _, _ = self.request("PUT", BASE + "/prioritylevelconfigurations/workload-low",
                                  body)
        self.assertEqual(code, 200)
        stale = priority_level("retired")
        stale["metadata"]["annotations"] = {AUTO: "true"}
        code, _, _ = self.request("POST", BASE + "/prioritylevelconfigurations", stale)
        self.assertEqual(code, 201)
        self.ensure_again()
        code, _, _ = self.request("GET", BASE + "/flowschemas/catch-all")
        self.assertEqual(code, 200)
        code, body, _ = self.request("GET", BASE + "/prioritylevelconfigurations/workload-low")
        self.assertEqual(body["spec"]["limited"]["nominalConcurrencyShares"], 7)
        code, _, _ = self.request("GET", BASE + "/prioritylevelconfigurations/retired")
        self.assertEqual(code, 404)

    def test_suggested_reset_when_auto_updated(self) -> None:
        """A changed suggested object that still auto-updates gets the bootstrap spec back."""
        code, body, _ = self.request("GET", BASE + "/flowschemas/probes")
        body["spec"]["matchingPrecedence"] = 3
        code, body, _ = self.request("PUT", BASE + "/flowschemas/probes", body)
        self.assertEqual((code, body["metadata"]["generation"]), (200, 2))
        self.ensure_again()
        code, body, _ = self.request("GET", BASE + "/flowschemas/probes")
        self.assertEqual((body["spec"]["matchingPrecedence"], body["metadata"]["generation"]),
                         (2, 3))


class HTTPTests(KubeTestCase):
    def test_create_defaults_and_invalid(self) -> None:
        """A created level is defaulted; an invalid one is a 422 with upstream's message."""
        code, body, _ = self.request("POST", BASE + "/prioritylevelconfigurations",
                                     priority_level())
        self.assertEqual(code, 201)
        self.assertEqual(body["spec"]["limited"]["nominalConcurrencyShares"], 30)
        code, body, _ = self.request("POST", BASE + "/prioritylevelconfigurations",
                                     priority_level("bad", nominalConcurrencyShares=-5))
        self.assertEqual(code, 422)
        self.assertEqual(body["message"],
                         'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "bad" is '
                         "invalid: spec.limited.nominalConcurrencyShares: Invalid value: -5: "
                         "must be a non-negative integer")

    def test_status_subresource(self) -> None:
        """Status writes keep the spec; spec writes keep the status and bump generation."""
        code, created, _ = self.request("POST", BASE + "/flowschemas", flow_schema())
        self.assertEqual(code, 201)
        created["status"] = {"conditions": [{"type": "Dangling", "status": "False"}]}
        created["spec"]["matchingPrecedence"] = 700
        code, body, _ = self.request("PUT", BASE + "/flowschemas/fs/status", created)
        self.assertEqual(code, 200)
        self.assertEqual((body["spec"]["matchingPrecedence"], body["metadata"]["generation"],
                          body["status"]["conditions"][0]["type"]), (500, 1, "Dangling"))
        body["spec"]["matchingPrecedence"] = 700
        body["status"] = {}
        code, body, _ = self.request("PUT", BASE + "/flowschemas/fs", body)
        self.assertEqual((body["spec"]["matchingPrecedence"], body["metadata"]["generation"],
                          len(body["status"]["conditions"])), (700, 2, 1))

    def test_table(self) -> None:
        """kubectl's table: rows by precedence; MissingPL from the Dangling condition."""
        code, body, _ = self.request(
            "GET", BASE + "/flowschemas",
            headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        first = body["rows"][0]["cells"]
        self.assertEqual((first[0], first[1], first[2], first[3], first[5]),
                         ("exempt", "exempt", 1, "<none>", "False"))
        self.assertEqual(body["rows"][-1]["cells"][0], "catch-all")

    def test_discovery(self) -> None:
        """Both resources are cluster-scoped, with status, and no short names."""
        code, body, _ = self.request("GET", BASE)
        self.assertEqual(code, 200)
        self.assertEqual(sorted((r["name"], r["namespaced"], "shortNames" in r)
                                for r in body["resources"]),
                         [("flowschemas", False, False), ("flowschemas/status", False, False),
                          ("prioritylevelconfigurations", False, False),
                          ("prioritylevelconfigurations/status", False, False)])


class DanglingTests(KubeTestCase):
    def dangling(self, name: str) -> dict:
        code, body, _ = self.request("GET", BASE + "/flowschemas/" + name)
        self.assertEqual(code, 200)
        return next(c for c in body["status"]["conditions"] if c["type"] == "Dangling")

    def test_bootstrap_schemas_found(self) -> None:
        """After start every bootstrap FlowSchema says its priority level exists."""
        cond = self.dangling("global-default")
        self.assertEqual(cond, {
            "type": "Dangling", "status": "False",
            "lastTransitionTime": cond["lastTransitionTime"], "reason": "Found",
            "message": 'This FlowSchema references the PriorityLevelConfiguration object named '
                       '"global-default" and it exists'})

    def test_managed_fields_as_upstream(self) -> None:
        """The producer's writes are Updates and the consumer's condition a status Apply, under
        upstream's manager names (the entries kube-apiserver v1.32 shows)."""
        code, body, _ = self.request("GET", BASE + "/flowschemas/global-default")
        entries = [(e["manager"], e["operation"], e.get("subresource"))
                   for e in body["metadata"]["managedFields"]]
        self.assertEqual(entries, [
            ("api-priority-and-fairness-config-consumer-v1", "Apply", "status"),
            ("api-priority-and-fairness-config-producer-v1", "Update", None)])
        self.assertEqual(body["metadata"]["managedFields"][0]["fieldsV1"], {"f:status": {
            "f:conditions": {'k:{"type":"Dangling"}': {
                ".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {},
                "f:status": {}, "f:type": {}}}}})
        code, body, _ = self.request("GET", BASE + "/prioritylevelconfigurations/global-default")
        [entry] = body["metadata"]["managedFields"]
        self.assertEqual(entry["fieldsV1"], {
            "f:metadata": {"f:annotations": {".": {}, "f:apf.kubernetes.io/autoupdate-spec": {}}},
            "f:spec": {"f:limited": {".": {}, "f:lendablePercent": {}, "f:limitResponse": {
                ".": {}, "f:queuing": {".": {}, "f:handSize": {}, "f:queueLengthLimit": {},
                                      "f:queues": {}}, "f:type": {}},
                "f:nominalConcurrencyShares": {}}, "f:type": {}}})
        self.assertEqual(body["status"], {})

    def test_follows_changes(self) -> None:
        """A schema naming a missing level turns Dangling True, then False once it exists."""
        fs = flow_schema("orphan", priorityLevelConfiguration={"name": "later"})
        self.assertEqual(self.request("POST", BASE + "/flowschemas", fs)[0], 201)
        self.clock.advance(0)
        self.assertEqual((self.dangling("orphan")["status"], self.dangling("orphan")["reason"],
                          self.dangling("orphan")["message"]),
                         ("True", "NotFound", ('This FlowSchema references the '
                          'PriorityLevelConfiguration object named "later" but there is no '
                          "such object")))
        self.assertEqual(self.request("POST", BASE + "/prioritylevelconfigurations",
                                      priority_level("later"))[0], 201)
        self.clock.advance(0)
        self.assertEqual(self.dangling("orphan")["status"], "False")
        code, body, _ = self.request("GET", BASE + "/flowschemas/orphan")
        self.assertEqual((code, body["metadata"]["generation"]), (200, 1))
