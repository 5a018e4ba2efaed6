"""The built-in admission plugins (LimitRanger, DefaultStorageClass, ...), each on its own and
through an assembled server; messages as kube-apiserver v1.32 words them."""

from __future__ import annotations

import copy
from typing import Any

from twisted.internet import defer
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.admission.interfaces import Attributes
from kubetwist.admission.plugins import limitranger
from kubetwist.registry.rest import ResourceSpec
from kubetwist.runtime.errors import StatusError
from tests.support import KubeTestCase

PODS = ResourceSpec("", "v1", "pods", "Pod", "pod")
PVCS = ResourceSpec("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim",
                    "persistentvolumeclaim")


def attrs(spec: ResourceSpec, obj: Any, operation: str = "CREATE", old: Any = None,
          namespace: str = "ns", subresource: str = "", **kw: Any) -> Attributes:
    name = (obj or old or {}).get("metadata", {}).get("name", "")
    return Attributes.for_spec(operation, spec, subresource, namespace, name, obj, old, **kw)


def run(test: SynchronousTestCase, coro: Any) -> Any:
    """The result of a coroutine that waits on nothing (plugins over in-memory listers)."""
    return test.successResultOf(defer.ensureDeferred(coro))


def refused(test: SynchronousTestCase, coro: Any) -> StatusError:
    failure = test.failureResultOf(defer.ensureDeferred(coro), StatusError)
    return failure.value


def lister(*items: dict):
    async def items_():
        return copy.deepcopy(list(items))
    return items_


def pod(*containers: dict, init: tuple = (), name: str = "p") -> dict:
    spec: dict = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": spec}


def container(name: str = "c", requests: Any = None, limits: Any = None, **kw: Any) -> dict:
    c = {"name": name, "image": "i", **kw}
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        c["resources"] = res
    return c


def limit_range(*items: dict, namespace: str = "ns", name: str = "lr") -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"limits": list(items)}}


class LimitRangerTests(SynchronousTestCase):
    def plugin(self, *lrs: dict) -> limitranger.LimitRanger:
        return limitranger.LimitRanger(lister(*lrs))

    def test_defaults(self):
        """Missing requests and limits come from the Container item; what was set is noted in
        the annotation; set values stay; other namespaces' ranges do not apply."""
        p = self.plugin(
            limit_range({"type": "Container", "default": {"cpu": "500m", "memory": "1Gi"},
                         "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}),
            limit_range({"type": "Container", "default": {"cpu": "9"}}, namespace="other"))
        obj = pod(container("a"), container("b", requests={"cpu": "200m"}),
                  init=(container("i"),))
        run(self, p.admit(attrs(PODS, obj)))
        self.assertEqual(obj["spec"]["containers"][0]["resources"], {
            "limits": {"cpu": "500m", "memory": "1Gi"},
            "requests": {"cpu": "100m", "memory": "256Mi"}})
        self.assertEqual(obj["spec"]["containers"][1]["resources"], {
            "limits": {"cpu": "500m", "memory": "1Gi"},
            "requests": {"cpu": "200m", "memory": "256Mi"}})
        self.assertEqual(obj["metadata"]["annotations"], {
            "kubernetes.io/limit-ranger":
                "LimitRanger plugin set: cpu, memory request for container a; cpu, memory limit "
                "for container a; memory request for container b; cpu, memory limit for "
                "container b; cpu, memory request for init container i; cpu, memory limit for "
                "init container i"})

    def test_pod_update_and_subresources_untouched(self):
        p = self.plugin(limit_range({"type": "Container", "default": {"cpu": "1"}}))
        obj = pod(container())
        run(self, p.admit(attrs(PODS, obj, "UPDATE", old=pod(container()))))
        run(self, p.admit(attrs(PODS, obj, subresource="status")))
        self.assertNotIn("resources", obj["spec"]["containers"][0])

    def test_container_max(self):
        """The brief's message: a limit above max."""
        p = self.plugin(limit_range({"type": "Container", "max": {"cpu": "1"}}))
        err = refused(self, p.validate(attrs(PODS, pod(container(limits={"cpu": "2"})))))
        self.assertEqual(err.code, 403)
        self.assertEqual(err.status["reason"], "Forbidden")
        self.assertEqual(err.status["message"], 'pods "p" is forbidden: maximum cpu usage per '
                                                'Container is 1, but limit is 2')

    def test_messages(self):
        cases = [
            ({"type": "Container", "max": {"cpu": "1"}}, container(),
             "maximum cpu usage per Container is 1.  No limit is specified"),
            ({"type": "Container", "max": {"memory": "1Gi"}},
             container(requests={"memory": "2Gi"}, limits={"memory": "512Mi"}),
             "maximum memory usage per Container is 1Gi, but request is 2Gi"),
            ({"type": "Container", "min": {"cpu": "100m"}}, container(),
             "minimum cpu usage per Container is 100m.  No request is specified"),
            ({"type": "Container", "min": {"cpu": "100m"}}, container(requests={"cpu": "50m"}),
             "minimum cpu usage per Container is 100m, but request is 50m"),
            ({"type": "Container", "min": {"cpu": "100m"}},
             container(requests={"cpu": "200m"}, limits={"cpu": "50m"}),
             "minimum cpu usage per Container is 100m, but limit is 50m"),
            ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
             container(requests={"cpu": "100m"}, limits={"cpu": "1"}),
             "cpu max limit to request ratio per Container is 2, but provided ratio is "
             "10.000000"),
            ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
             container(limits={"cpu": "1"}),
             "cpu max limit to request ratio per Container is 2, but no request is specified "
             "or request is 0"),
            ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
             container(requests={"cpu": "1"}),
             "cpu max limit to request ratio per Container is 2, but no limit is specified or "
             "limit is 0"),
            ({"type": "Container", "max": {"cpu": "1", "memory": "1Gi"}},
             container(limits={"cpu": "2", "memory": "2Gi"}),
             "[maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per "
             "Container is 1Gi, but limit is 2Gi]"),
        ]
        for item, c, message in cases:
            err = refused(self, self.plugin(limit_range(item)).validate(attrs(PODS, pod(c))))
            self.assertEqual(err.status["message"], 'pods "p" is forbidden: ' + message)

    def test_pod_totals(self):
        """Pod items check the sum of the containers, sidecars included, against the largest
        init container."""
        lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
        ok = pod(container("a", requests={"cpu": "400m"}, limits={"cpu": "400m"}),
                 container("b", requests={"cpu": "400m"}, limits={"cpu": "400m"}),
                 init=(container("i", requests={"cpu": "1"}, limits={"cpu": "1"}),))
        run(self, self.plugin(lr).validate(attrs(PODS, ok)))
        over = pod(container("a", requests={"cpu": "400m"}, limits={"cpu": "400m"}),
                   init=(container("s", requests={"cpu": "700m"}, limits={"cpu": "700m"},
                                   restartPolicy="Always"),))
        err = refused(self, self.plugin(lr).validate(attrs(PODS, over)))
        self.assertEqual(err.status["message"], 'pods "p" is forbidden: maximum cpu usage per '
                                                'Pod is 1, but limit is 1100m')

    def test_pvc(self):
        lr = limit_range({"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"},
                          "max": {"storage": "10Gi"}})
        claim = {"metadata": {"name": "c"}, "spec": {"resources": {"requests":
                                                                   {"storage": "20Gi"}}}}
        err = refused(self, self.plugin(lr).validate(attrs(PVCS, claim)))
        self.assertEqual(err.status["message"], 'persistentvolumeclaims "c" is forbidden: '
                         'maximum storage usage per PersistentVolumeClaim is 10Gi, but request '
                         'is 20Gi')
        claim["spec"]["resources"]["requests"]["storage"] = "512Mi"
        err = refused(self, self.plugin(lr).validate(attrs(PVCS, claim, "UPDATE", old=claim)))
        self.assertIn("minimum storage usage per PersistentVolumeClaim is 1Gi, but request is "
                      "512Mi", err.status["message"])
        claim["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        run(self, self.plugin(lr).validate(attrs(PVCS, claim, "UPDATE", old=claim)))

    def test_generate_name(self):
        p = self.plugin(limit_range({"type": "Container", "max": {"cpu": "1"}}))
        obj = pod(container(limits={"cpu": "2"}), name="")
        obj["metadata"]["generateName"] = "gen-"
        err = refused(self, p.validate(attrs(PODS, obj)))
        self.assertTrue(err.status["message"].startswith('pods "gen-" is forbidden: '))


class LimitRangerServerTests(KubeTestCase):
    """Through the assembled server (LimitRanger is on by default)."""

    def test_defaults_and_refusal(self):
        self.assertEqual(self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})[0], 201)
        code, body, _ = self.request("POST", "/api/v1/namespaces/ns/limitranges", limit_range(
            {"type": "Container", "default": {"cpu": "500m"}, "defaultRequest": {"cpu": "250m"},
             "max": {"cpu": "1"}}))
        self.assertEqual(code, 201, body)
        code, body, _ = self.request("POST", "/api/v1/namespaces/ns/pods", pod(container()))
        self.assertEqual(code, 201, body)
        self.assertEqual(body["spec"]["containers"][0]["resources"],
                         {"limits": {"cpu": "500m"}, "requests": {"cpu": "250m"}})
        self.assertEqual(body["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
                         "LimitRanger plugin set: cpu request for container c; cpu limit for "
                         "container c")
        code, body, _ = self.request("POST", "/api/v1/namespaces/ns/pods",
                                     pod(container(limits={"cpu": "2"}), name="q"))
        self.assertEqual((code, body["message"]), (403, 'pods "q" is forbidden: maximum cpu '
                                                        'usage per Container is 1, but limit '
                                                        'is 2'))
        self.assertEqual(self.request("GET", "/api/v1/namespaces/ns/pods/q")[0], 404)
