# -*- test-case-name: tests.apis.test_pod_subresources -*-
"""
The pod subresources over HTTP (the whole chain): C{pods/binding} and C{bindings},
C{pods/eviction}, C{pods/ephemeralcontainers}, C{pods/log}, C{exec}, C{attach},
C{portforward}, C{proxy}, C{nodes/proxy}, C{services/proxy}, and their discovery entries,
with kube-apiserver v1.32's codes and messages.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.support import KubeTestCase

NS = "/api/v1/namespaces/default"
SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
           "code": 201}
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."


def pod(name: str = "p", containers: tuple[str, ...] = ("c",), **spec: Any) -> dict:
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}}
    body["spec"].update(spec)
    return body


def binding(name: str = "p", node: str = "n1", **meta: Any) -> dict:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": dict(name=name, **meta),
            "target": {"kind": "Node", "name": node}}


def eviction(name: str = "p", **extra: Any) -> dict:
    return dict({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}},
                **extra)


def status(code: int, reason: str, message: str, details: Any = None) -> dict:
    out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason}
    if details is not None:
        out["details"] = details
    out["code"] = code
    return out


class _Base(KubeTestCase):
    def make_pod(self, *args: Any, **kw: Any) -> dict:
        code, body, _ = self.request("POST", f"{NS}/pods", pod(*args, **kw))
        self.assertEqual(code, 201, body)
        return body

    def get_pod(self, name: str = "p") -> dict:
        code, body, _ = self.request("GET", f"{NS}/pods/{name}")
        self.assertEqual(code, 200, body)
        return body

    def set_status(self, name: str, **fields: Any) -> dict:
        current = self.get_pod(name)
        current["status"].update(fields)
        code, body, _ = self.request("PUT", f"{NS}/pods/{name}/status", current)
        self.assertEqual(code, 200, body)
        return body


class BindingTests(_Base):
    """C{pods/binding} and C{bindings} (upstream C{BindingREST}, C{LegacyBindingREST})."""

    def test_bind(self) -> None:
        """A binding sets C{spec.nodeName}, merges its annotations and sets the PodScheduled
        condition True; the answer is 201 with a success Status of code 201."""
        self.make_pod()
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding",
                                     binding(annotations={"a": "b"}))
        self.assertEqual((code, body), (201, SUCCESS))
        p = self.get_pod()
        self.assertEqual(p["spec"]["nodeName"], "n1")
        self.assertEqual(p["metadata"]["annotations"], {"a": "b"})
        self.assertEqual(p["status"]["conditions"], [{
            "type": "PodScheduled", "status": "True", "lastProbeTime": None,
            "lastTransitionTime": p["metadata"]["creationTimestamp"]}])

    def test_already_assigned(self) -> None:
        """Binding a bound pod is a 409 Conflict on C{pods/binding}."""
        self.make_pod()
        self.request("POST", f"{NS}/pods/p/binding", binding())
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding", binding(node="n2"))
        self.assertEqual((code, body), (409, status(
            409, "Conflict",
            'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to '
            'node "n1"', {"name": "p", "kind": "pods/binding"})))

    def test_scheduling_gates(self) -> None:
        """A pod with scheduling gates cannot be bound (409 on C{pods/binding})."""
        self.make_pod(schedulingGates=[{"name": "example.com/gate"}])
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding", binding())
        self.assertEqual(code, 409)
        self.assertEqual(body["message"], 'Operation cannot be fulfilled on pods/binding "p": '
                                          "pod p has non-empty .spec.schedulingGates")

    def test_missing_pod(self) -> None:
        """Binding a missing pod is 404 C{pods "p" not found}."""
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding", binding())
        self.assertEqual((code, body["message"], body["reason"]),
                         (404, 'pods "p" not found', "NotFound"))

    def test_name_mismatch(self) -> None:
        """The body must name the pod of the URL (400)."""
        self.make_pod()
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding", binding(name="q"))
        self.assertEqual((code, body), (400, status(
            400, "BadRequest", "name in URL does not match name in Binding object")))

    def test_invalid_target(self) -> None:
        """A target of another kind and no name: upstream's aggregate as a 500 with no
        reason (C{ValidatePodBinding} errors are not a StatusError)."""
        self.make_pod()
        body = binding()
        body["target"] = {"kind": "Pod"}
        code, out, _ = self.request("POST", f"{NS}/pods/p/binding", body)
        self.assertEqual((code, out), (500, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": '[target.kind: Unsupported value: "Pod": supported values: "Node", '
                       '"<empty>", target.name: Required value]', "code": 500}))

    def test_uid_precondition(self) -> None:
        """C{metadata.uid} of the binding is a precondition on the pod (409 on pods)."""
        self.make_pod()
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding", binding(uid="other"))
        self.assertEqual((code, body["reason"]), (409, "Conflict"))
        self.assertTrue(body["message"].startswith(
            'Operation cannot be fulfilled on pods "p": Precondition failed: UID in '
            'precondition: other'), body["message"])
        self.assertNotIn("nodeName", self.get_pod()["spec"])

    def test_dry_run(self) -> None:
        """C{dryRun=All} answers success and binds nothing."""
        self.make_pod()
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding?dryRun=All", binding())
        self.assertEqual((code, body), (201, SUCCESS))
        self.assertNotIn("nodeName", self.get_pod()["spec"])

    def test_bindings_resource(self) -> None:
        """C{POST .../bindings} binds the pod the body names."""
        self.make_pod()
        code, body, _ = self.request("POST", f"{NS}/bindings", binding())
        self.assertEqual((code, body), (201, SUCCESS))
        self.assertEqual(self.get_pod()["spec"]["nodeName"], "n1")

    def test_bindings_only_create(self) -> None:
        """C{bindings} serves no list (405 MethodNotAllowed)."""
        code, _, _ = self.request("GET", f"{NS}/bindings")
        self.assertEqual(code, 405)

    def test_protobuf_binding(self) -> None:
        """A protobuf Binding (client-go's typed clients) is decoded and binds."""
        from kubetwist.runtime import protobuf

        self.make_pod()
        code, body, _ = self.request("POST", f"{NS}/pods/p/binding",
                                     protobuf.encode(binding(node="n9")),
                                     content_type="application/vnd.kubernetes.protobuf")
        self.assertEqual((code, body), (201, SUCCESS))
        self.assertEqual(self.get_pod()["spec"]["nodeName"], "n9")

    def test_wrong_version(self) -> None:
        """A body of another group-version is refused with upstream's message."""
        self.make_pod()
        body = binding()
        body["apiVersion"] = "policy/v1"
        code, out, _ = self.request("POST", f"{NS}/pods/p/binding", body)
        self.assertEqual((code, out["message"]), (400, (
            "the API version in the data (policy/v1) does not match the expected API version "
            "(v1)")))


class EvictionTests(_Base):
    """C{pods/eviction} (upstream C{EvictionREST})."""

    def running(self, name: str = "p", ready: bool = True) -> None:
        self.make_pod(name)
        self.set_status(name, phase="Running", conditions=[
            {"type": "Ready", "status": "True" if ready else "False"}])

    def make_pdb(self, name: str = "pdb", allowed: int = 1, observed: int = 1,
                 current: int = 2, desired: int = 1, **spec: Any) -> dict:
        body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": name},
                "spec": dict({"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
                             **spec)}
        base = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
        code, created, _ = self.request("POST", base, body)
        self.assertEqual(code, 201, created)
        created["status"] = {"observedGeneration": observed, "disruptionsAllowed": allowed,
                             "currentHealthy": current, "desiredHealthy": desired,
                             "expectedPods": 2}
        code, out, _ = self.request("PUT", f"{base}/{name}/status", created)
        self.assertEqual(code, 200, out)
        return out

    def get_pdb(self, name: str = "pdb") -> dict:
        code, body, _ = self.request(
            "GET", f"/apis/policy/v1/namespaces/default/poddisruptionbudgets/{name}")
        self.assertEqual(code, 200, body)
        return body

    def test_no_budget(self) -> None:
        """With no PodDisruptionBudget the pod is deleted: 201, success Status."""
        self.running()
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (201, SUCCESS))
        self.assertEqual(self.request("GET", f"{NS}/pods/p")[0], 404)

    def test_decrements_budget(self) -> None:
        """An allowed eviction decrements C{disruptionsAllowed}, records the pod in
        C{disruptedPods} and sets the DisruptionAllowed condition False at zero."""
        self.running()
        self.make_pdb()
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (201, SUCCESS))
        st = self.get_pdb()["status"]
        now = self.get_pdb()["metadata"]["creationTimestamp"]
        self.assertEqual(st["disruptionsAllowed"], 0)
        self.assertEqual(st["disruptedPods"], {"p": now})
        self.assertEqual(st["conditions"], [{
            "type": "DisruptionAllowed", "status": "False", "observedGeneration": 1,
            "lastTransitionTime": now, "reason": "InsufficientPods", "message": ""}])

    def test_budget_exhausted(self) -> None:
        """No disruption allowed: 429 TooManyRequests with the DisruptionBudget cause."""
        self.running()
        self.make_pdb(allowed=0, current=1, desired=1)
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (429, status(429, "TooManyRequests", VIOLATION, {
            "causes": [{"reason": "DisruptionBudget",
                        "message": "The disruption budget pdb needs 1 healthy pods and has 1 "
                                   "currently"}]})))
        self.assertEqual(self.get_pod()["metadata"]["name"], "p")

    def test_budget_not_observed(self) -> None:
        """A budget whose generation is not yet observed: 429, retry after 10 s."""
        self.running()
        self.make_pdb(observed=0)
        code, body, response = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (429, status(429, "TooManyRequests", VIOLATION, {
            "causes": [{"reason": "DisruptionBudget",
                        "message": "The disruption budget pdb is still being processed by the "
                                   "server."}], "retryAfterSeconds": 10})))
        self.assertEqual(response.headers.getRawHeaders("Retry-After"), ["10"])

    def test_two_budgets(self) -> None:
        """Two matching budgets: a Failure Status with code 500 (HTTP 201, as upstream's
        create handler writes a returned Status)."""
        self.running()
        self.make_pdb("a")
        self.make_pdb("b")
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (201, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                       "subresource does not support.", "code": 500}))

    def test_pending_pod_ignores_budget(self) -> None:
        """A Pending pod is deleted without consulting its (exhausted) budget."""
        self.make_pod()
        self.make_pdb(allowed=0)
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (201, SUCCESS))
        self.assertEqual(self.get_pdb()["status"]["disruptionsAllowed"], 0)

    def test_unready_pod_healthy_budget(self) -> None:
        """A pod that is not ready, with the budget met, is deleted without decrementing."""
        self.running(ready=False)
        self.make_pdb(allowed=0, current=2, desired=1)
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (201, SUCCESS))
        self.assertEqual(self.get_pdb()["status"]["disruptionsAllowed"], 0)

    def test_unready_pod_always_allow(self) -> None:
        """C{unhealthyPodEvictionPolicy: AlwaysAllow} lets an unready pod go even when the
        budget is not met."""
        self.running(ready=False)
        self.make_pdb(allowed=0, current=0, desired=1, unhealthyPodEvictionPolicy="AlwaysAllow")
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (201, SUCCESS))

    def test_too_many_disrupted_pods(self) -> None:
        """More than 2000 unconfirmed evictions in the budget: 403 Forbidden on
        poddisruptionbudget.policy."""
        self.running()
        pdb = self.make_pdb()
        pdb["status"]["disruptedPods"] = {f"x{i}": "2023-01-01T00:00:00Z" for i in range(2001)}
        code, out, _ = self.request(
            "PUT", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb/status", pdb)
        self.assertEqual(code, 200, out)
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body), (403, status(
            403, "Forbidden", 'poddisruptionbudget.policy "pdb" is forbidden: DisruptedPods map '
            "too big - too many evictions not confirmed by PDB controller",
            {"name": "pdb", "group": "policy", "kind": "poddisruptionbudget"})))

    def test_dry_run(self) -> None:
        """C{dryRun=All}: success, the budget and the pod are untouched."""
        self.running()
        self.make_pdb()
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction?dryRun=All", eviction())
        self.assertEqual((code, body), (201, SUCCESS))
        self.assertEqual(self.get_pdb()["status"]["disruptionsAllowed"], 1)
        self.assertEqual([c["type"] for c in self.get_pod()["status"]["conditions"]],
                         ["Ready"])

    def test_dry_run_mismatch(self) -> None:
        """Different dry-run options in the query and the body: a 500."""
        self.running()
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction?dryRun=All", eviction(
            deleteOptions={"dryRun": ["Other"]}))
        self.assertEqual((code, body["message"]), (500, (
            "Non-matching dry-run options in request and content: [All] and [Other]")))

    def test_missing_pod(self) -> None:
        """Evicting a missing pod is 404."""
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction())
        self.assertEqual((code, body["message"]), (404, 'pods "p" not found'))

    def test_name_mismatch(self) -> None:
        """The Eviction must name the pod of the URL."""
        self.running()
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction("q"))
        self.assertEqual((code, body["message"]),
                         (400, "name in URL does not match name in Eviction object"))

    def test_v1beta1(self) -> None:
        """A C{policy/v1beta1} Eviction is accepted; a core one is refused."""
        self.running()
        body = eviction()
        body["apiVersion"] = "policy/v1beta1"
        self.assertEqual(self.request("POST", f"{NS}/pods/p/eviction", body)[:2],
                         (201, SUCCESS))
        self.running("q")
        body = eviction("q")
        body["apiVersion"] = "v1"
        code, out, _ = self.request("POST", f"{NS}/pods/q/eviction", body)
        self.assertEqual((code, out["message"]), (400, (
            "the API version in the data (v1) does not match the expected API version "
            "(policy/v1)")))

    def test_protobuf_v1beta1(self) -> None:
        """A protobuf C{policy/v1beta1} Eviction (the wire form of v1) is accepted."""
        from kubetwist.runtime import protobuf

        self.running()
        raw = protobuf.encode(eviction())
        type_meta = (protobuf._delimited(1, b"policy/v1beta1")
                     + protobuf._delimited(2, b"Eviction"))
        _, _, inner, _, _ = protobuf.split_envelope(raw)
        body = protobuf.MAGIC + protobuf._delimited(1, type_meta) + protobuf._delimited(2, inner)
        code, out, _ = self.request("POST", f"{NS}/pods/p/eviction", body,
                                    content_type="application/vnd.kubernetes.protobuf")
        self.assertEqual((code, out), (201, SUCCESS))

    def test_uid_precondition(self) -> None:
        """A C{deleteOptions} uid precondition that fails: 409 on C{Pod}."""
        self.make_pod()
        code, body, _ = self.request("POST", f"{NS}/pods/p/eviction", eviction(
            deleteOptions={"preconditions": {"uid": "other"}}))
        uid = self.get_pod()["metadata"]["uid"]
        self.assertEqual((code, body["message"]), (409, (
            f'Operation cannot be fulfilled on Pod "p": the UID in the precondition (other) '
            f"does not match the UID in record ({uid}). The object might have been deleted "
            f"and then recreated")))


class EphemeralContainerTests(_Base):
    """C{pods/ephemeralcontainers} (upstream C{podEphemeralContainersStrategy})."""

    DEBUG: ClassVar[dict] = {"name": "debugger", "image": "busybox", "targetContainerName": "c"}

    def patch(self, body: Any, ctype: str = "application/strategic-merge-patch+json"):
        return self.request("PATCH", f"{NS}/pods/p/ephemeralcontainers", body,
                            content_type=ctype)

    def test_add_with_strategic_merge_patch(self) -> None:
        """C{kubectl debug}'s patch adds a defaulted ephemeral container; only that changes."""
        self.make_pod()
        code, body, _ = self.patch({"spec": {"ephemeralContainers": [self.DEBUG]},
                                    "metadata": {"labels": {"x": "y"}}})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["spec"]["ephemeralContainers"], [{
            "name": "debugger", "image": "busybox", "resources": {},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "imagePullPolicy": "Always", "targetContainerName": "c"}])
        self.assertEqual(body["metadata"]["labels"], {"app": "web"})

    def test_get(self) -> None:
        """GET answers the pod."""
        self.make_pod()
        code, body, _ = self.request("GET", f"{NS}/pods/p/ephemeralcontainers")
        self.assertEqual((code, body["kind"], body["metadata"]["name"]), (200, "Pod", "p"))

    def test_forbidden_fields(self) -> None:
        """Ports, probes, lifecycle and resources are Forbidden, unknown targets NotFound,
        duplicate names Duplicate (422 Invalid)."""
        self.make_pod()
        bad = {"name": "c", "image": "busybox", "targetContainerName": "nope",
               "ports": [{"containerPort": 80}],
               "resources": {"limits": {"cpu": "1"}},
               "readinessProbe": {"exec": {"command": ["true"]}},
               "lifecycle": {"preStop": {"exec": {"command": ["true"]}}}}
        code, body, _ = self.patch({"spec": {"ephemeralContainers": [bad]}})
        self.assertEqual((code, body["reason"]), (422, "Invalid"))
        causes = [(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]]
        path = "spec.ephemeralContainers[0]"
        for expected in [
            ("FieldValueDuplicate", f"{path}.name", 'Duplicate value: "c"'),
            ("FieldValueNotFound", f"{path}.targetContainerName", 'Not found: "nope"'),
            ("FieldValueForbidden", f"{path}.ports",
             "Forbidden: cannot be set for an Ephemeral Container"),
            ("FieldValueForbidden", f"{path}.resources",
             "Forbidden: cannot be set for an Ephemeral Container"),
            ("FieldValueForbidden", f"{path}.readinessProbe",
             "Forbidden: cannot be set for an Ephemeral Container"),
            ("FieldValueForbidden", f"{path}.lifecycle",
             "Forbidden: cannot be set for an Ephemeral Container"),
        ]:
            self.assertIn(expected, causes)

    def test_cannot_remove(self) -> None:
        """An existing ephemeral container cannot be removed (merge patch to none)."""
        self.make_pod()
        self.patch({"spec": {"ephemeralContainers": [self.DEBUG]}})
        code, body, _ = self.patch({"spec": {"ephemeralContainers": None}},
                                   "application/merge-patch+json")
        self.assertEqual(code, 422)
        self.assertEqual(body["message"], (
            'Pod "p" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral '
            'containers "debugger" may not be removed\n'))

    def test_cannot_change(self) -> None:
        """An existing ephemeral container cannot be changed."""
        self.make_pod()
        self.patch({"spec": {"ephemeralContainers": [self.DEBUG]}})
        code, body, _ = self.patch({"spec": {"ephemeralContainers": [
            dict(self.DEBUG, image="alpine")]}})
        self.assertEqual(code, 422)
        self.assertTrue(body["message"].startswith(
            'Pod "p" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral '
            'containers "debugger" may not be changed\n'), body["message"])

    def test_pod_update_cannot_add(self) -> None:
        """Creating a pod with ephemeral containers is refused (only the subresource adds)."""
        code, body, _ = self.request("POST", f"{NS}/pods", pod(ephemeralContainers=[
            {"name": "d", "image": "busybox"}]))
        self.assertEqual((code, body["details"]["causes"][-1]["field"]),
                         (422, "spec.ephemeralContainers"))


class ConnectTests(_Base):
    """C{log}, C{exec}, C{attach}, C{portforward} and the proxies without kubelets."""

    def test_log_choose_container(self) -> None:
        """Several containers and none named: 400 listing them (init containers first)."""
        self.make_pod(containers=("a", "b"),
                      initContainers=[{"name": "i", "image": "busybox"}])
        code, body, _ = self.request("GET", f"{NS}/pods/p/log")
        self.assertEqual((code, body), (400, status(
            400, "BadRequest", "a container name must be specified for pod p, choose one of: "
            "[i a b]")))

    def test_log_unknown_container(self) -> None:
        """A container the pod does not have: 400."""
        self.make_pod()
        code, body, _ = self.request("GET", f"{NS}/pods/p/log?container=x")
        self.assertEqual((code, body["message"]), (400, "container x is not valid for pod p"))

    def test_log_unscheduled(self) -> None:
        """A pod on no node has no logs yet: 204 with no body."""
        self.make_pod()
        code, body, _ = self.request("GET", f"{NS}/pods/p/log")
        self.assertEqual((code, body), (204, ""))

    def test_log_missing_pod(self) -> None:
        """404 for a missing pod."""
        code, body, _ = self.request("GET", f"{NS}/pods/p/log")
        self.assertEqual((code, body["message"]), (404, 'pods "p" not found'))

    def test_log_options_invalid(self) -> None:
        """Negative C{tailLines}: 422 on PodLogOptions."""
        code, body, _ = self.request("GET", f"{NS}/pods/p/log?tailLines=-1")
        self.assertEqual((code, body["message"]), (422, (
            'PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than '
            "or equal to 0")))

    def test_log_missing_node(self) -> None:
        """A pod bound to a node that does not exist: 404 C{nodes "n1" not found}."""
        self.make_pod()
        self.request("POST", f"{NS}/pods/p/binding", binding())
        code, body, _ = self.request("GET", f"{NS}/pods/p/log")
        self.assertEqual((code, body["message"]), (404, 'nodes "n1" not found'))

    def test_log_node_without_kubelet(self) -> None:
        """A node with an address but no kubelet: the dial error, as a 500."""
        self.make_pod()
        self.request("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
        node = self.request("GET", "/api/v1/nodes/n1")[1]
        node["status"] = {"addresses": [{"type": "InternalIP", "address": "10.0.0.7"}]}
        self.assertEqual(self.request("PUT", "/api/v1/nodes/n1/status", node)[0], 200)
        self.request("POST", f"{NS}/pods/p/binding", binding())
        code, body, _ = self.request("GET", f"{NS}/pods/p/log?follow=true")
        self.assertEqual((code, body["message"]), (500, (
            'Get "https://10.0.0.7:10250/containerLogs/default/p/c?follow=true": dial tcp '
            '10.0.0.7:10250: connect: connection refused')))

    def test_exec_unscheduled(self) -> None:
        """exec, attach, portforward of a pod on no node: 400 for GET and POST."""
        self.make_pod()
        for method in ("GET", "POST"):
            for sub in ("exec", "attach", "portforward"):
                code, body, _ = self.request(method, f"{NS}/pods/p/{sub}")
                self.assertEqual((code, body["message"]),
                                 (400, "pod p does not have a host assigned"), sub)

    def test_exec_choose_container(self) -> None:
        """exec checks the container before the node."""
        self.make_pod(containers=("a", "b"))
        code, body, _ = self.request("POST", f"{NS}/pods/p/exec?command=ls")
        self.assertEqual((code, body["message"]), (400, (
            "a container name must be specified for pod p, choose one of: [a b]")))

    def test_proxy(self) -> None:
        """pods/proxy of a pod with no IP: 400 C{address not allowed}; bad ids 400."""
        self.make_pod()
        code, body, _ = self.request("GET", f"{NS}/pods/p:8080/proxy/some/path")
        self.assertEqual((code, body["message"]), (400, "address not allowed"))
        code, body, _ = self.request("GET", f"{NS}/pods/a:b:c:d/proxy")
        self.assertEqual((code, body["message"]), (400, 'invalid pod request "a:b:c:d"'))

    def test_node_proxy(self) -> None:
        """nodes/proxy of a missing node: 404."""
        code, body, _ = self.request("GET", "/api/v1/nodes/n1/proxy/stats")
        self.assertEqual((code, body["message"]), (404, 'nodes "n1" not found'))

    def test_service_proxy(self) -> None:
        """services/proxy: 404 without Endpoints, 503 with no addresses or no such port."""
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
               "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}}
        self.assertEqual(self.request("POST", f"{NS}/services", svc)[0], 201)
        code, body, _ = self.request("GET", f"{NS}/services/s/proxy/")
        self.assertEqual((code, body["message"]), (404, 'endpoints "s" not found'))
        self.request("POST", f"{NS}/endpoints", {"apiVersion": "v1", "kind": "Endpoints",
                                                 "metadata": {"name": "s"}})
        code, body, _ = self.request("GET", f"{NS}/services/s/proxy/")
        self.assertEqual((code, body["reason"], body["message"]),
                         (503, "ServiceUnavailable", 'no endpoints available for service "s"'))
        code, body, _ = self.request("GET", f"{NS}/services/s:81/proxy/")
        self.assertEqual((code, body["message"]),
                         (503, 'no service port 81 found for service "s"'))


class DiscoveryTests(KubeTestCase):
    """The discovery entries of the new subresources, as kube-apiserver v1.32 lists them."""

    def test_core_v1(self) -> None:
        """Kinds, groups and verbs of pods/*, bindings, nodes/proxy, services/proxy."""
        code, body, _ = self.request("GET", "/api/v1")
        self.assertEqual(code, 200)
        entries = {r["name"]: r for r in body["resources"]}
        self.assertEqual(entries["bindings"], {
            "name": "bindings", "singularName": "binding", "namespaced": True,
            "kind": "Binding", "verbs": ["create"]})
        expected = {
            "pods/attach": ("PodAttachOptions", ["create", "get"]),
            "pods/binding": ("Binding", ["create"]),
            "pods/ephemeralcontainers": ("Pod", ["get", "patch", "update"]),
            "pods/exec": ("PodExecOptions", ["create", "get"]),
            "pods/log": ("Pod", ["get"]),
            "pods/portforward": ("PodPortForwardOptions", ["create", "get"]),
            "pods/proxy": ("PodProxyOptions", ["create", "delete", "get", "patch", "update"]),
            "nodes/proxy": ("NodeProxyOptions", ["create", "delete", "get", "patch", "update"]),
            "services/proxy": ("ServiceProxyOptions",
                               ["create", "delete", "get", "patch", "update"]),
        }
        for name, (kind, verbs) in expected.items():
            self.assertEqual(entries[name], {
                "name": name, "singularName": "", "namespaced": not name.startswith("nodes"),
                "kind": kind, "verbs": verbs}, name)
        self.assertEqual(entries["pods/eviction"], {
            "name": "pods/eviction", "singularName": "", "namespaced": True,
            "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]})


class ResizeTests(_Base):
    """C{pods/resize} (upstream C{podResizeStrategy}, C{ValidatePodResize}; answers read from
    kube-apiserver v1.32)."""

    def make_burstable(self) -> dict:
        body = pod()
        body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"},
                                                      "limits": {"cpu": "200m"}}
        code, created, _ = self.request("POST", f"{NS}/pods", body)
        self.assertEqual(code, 201, created)
        return created

    def patch(self, body: Any):
        return self.request("PATCH", f"{NS}/pods/p/resize", body,
                            content_type="application/strategic-merge-patch+json")

    def test_get(self) -> None:
        """GET answers the pod."""
        self.make_burstable()
        code, body, _ = self.request("GET", f"{NS}/pods/p/resize")
        self.assertEqual((code, body["kind"], body["metadata"]["name"]), (200, "Pod", "p"))

    def test_resize_marks_proposed(self) -> None:
        """A change of cpu requests is kept and sets status.resize Proposed; other changes in
        the same patch (labels, image) are dropped."""
        self.make_burstable()
        code, body, _ = self.patch({"metadata": {"labels": {"x": "y"}}, "spec": {"containers": [
            {"name": "c", "image": "other", "resources": {"requests": {"cpu": "150m"}}}]}})
        self.assertEqual(code, 200, body)
        c = body["spec"]["containers"][0]
        self.assertEqual((c["resources"]["requests"], c["resources"]["limits"], c["image"],
                          body["status"]["resize"], body["metadata"]["labels"]),
                         ({"cpu": "150m"}, {"cpu": "200m"}, "busybox", "Proposed",
                          {"app": "web"}))

    def test_resize_policy_only(self) -> None:
        """The resize policy may change alone."""
        self.make_burstable()
        code, body, _ = self.patch({"spec": {"containers": [
            {"name": "c", "resizePolicy": [{"resourceName": "cpu",
                                            "restartPolicy": "RestartContainer"}]}]}})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["spec"]["containers"][0]["resizePolicy"],
                         [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}])
        self.assertNotIn("resize", body["status"])

    def test_qos_may_not_change(self) -> None:
        """Making a Burstable pod Guaranteed is 422 Invalid at spec."""
        self.make_burstable()
        code, body, _ = self.patch({"spec": {"containers": [{"name": "c", "resources": {
            "requests": {"cpu": "200m", "memory": "1Gi"},
            "limits": {"cpu": "200m", "memory": "1Gi"}}}]}})
        self.assertEqual((code, body["message"]), (
            422, 'Pod "p" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not '
                 'change as a result of resizing'))

    def test_only_cpu_and_memory(self) -> None:
        """Another resource is Forbidden at spec; an invalid quantity is Invalid at its
        path."""
        self.make_burstable()
        code, body, _ = self.patch({"spec": {"containers": [{"name": "c", "resources": {
            "requests": {"ephemeral-storage": "1Gi"}}}]}})
        self.assertEqual((code, body["details"]["causes"][0]["field"]), (422, "spec"))
        self.assertTrue(body["message"].startswith(
            'Pod "p" is invalid: spec: Forbidden: only cpu and memory resources are mutable\n'),
            body["message"])
        code, body, _ = self.patch({"spec": {"containers": [{"name": "c", "resources": {
            "requests": {"cpu": "-1"}}}]}})
        self.assertEqual((code, body["message"]), (
            422, 'Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid '
                 'value: "-1": must be greater than or equal to 0'))

    def test_static_pod(self) -> None:
        """A mirror pod cannot be resized (Forbidden at the root)."""
        body = pod()
        body["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
        body["spec"]["nodeName"] = "n1"
        code, created, _ = self.request("POST", f"{NS}/pods", body)
        self.assertEqual(code, 201, created)
        code, body, _ = self.patch({"spec": {"containers": [{"name": "c", "resources": {
            "requests": {"cpu": "1"}}}]}})
        self.assertEqual((code, body["message"]), (
            422, 'Pod "p" is invalid: []: Forbidden: static pods cannot be resized'))
