"""
Tests for server-side printing: L{kubetwist.apis.printers}, L{kubetwist.apis.core.printers},
L{kubetwist.apis.apps.printers} and L{kubetwist.apis.coordination.printers}.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis import printers
from kubetwist.apis.apps.printers import (
    CONTROLLERREVISION_TABLE,
    DAEMONSET_TABLE,
    DEPLOYMENT_TABLE,
    REPLICASET_TABLE,
    STATEFULSET_TABLE,
)
from kubetwist.apis.coordination.printers import LEASE_TABLE
from kubetwist.apis.core.printers import (
    CONFIGMAP_TABLE,
    DEFAULT_TABLE_COLUMNS,
    ENDPOINTS_TABLE,
    EVENT_TABLE,
    NAMESPACE_TABLE,
    POD_TABLE,
    SECRET_TABLE,
    SERVICE_TABLE,
    SERVICEACCOUNT_TABLE,
    pod_row_conditions,
)

# 2024-01-01T00:00:00Z
T0 = 1704067200.0
CREATED = "2024-01-01T00:00:00Z"

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)


def _heads(table) -> list[tuple]:
    return [(c["name"], c["type"], c["format"], c["priority"]) for c in table.columns]


class ClockMixin:
    def setUp(self) -> None:
        previous = printers.set_clock(lambda: T0 + 300)
        self.addCleanup(printers.set_clock, previous)


class SharedTests(ClockMixin, SynchronousTestCase):
    def test_age_uses_injected_clock(self) -> None:
        """Ages are measured against the clock given to set_clock (5 minutes here)."""
        self.assertEqual(printers.age(CREATED), "5m")
        printers.set_clock(lambda: T0 + 3 * 86400 + 4 * 3600)
        self.assertEqual(printers.age(CREATED), "3d4h")

    def test_age_unknown(self) -> None:
        """A missing timestamp prints <unknown>."""
        self.assertEqual(printers.age(None), "<unknown>")

    def test_column_shape(self) -> None:
        """A column definition carries all five wire keys."""
        self.assertEqual(
            printers.column("X", "integer", "d", priority=1),
            {"name": "X", "type": "integer", "format": "", "description": "d", "priority": 1},
        )

    def test_name_column_description(self) -> None:
        """The Name column's description is ObjectMeta.name's OpenAPI text."""
        self.assertEqual(printers.name_column()["description"], NAME_DESCRIPTION)
        self.assertEqual(printers.name_column()["format"], "name")

    def test_default_table(self) -> None:
        """The default table has Name and Created At (type date) and prints RFC 3339 seconds."""
        self.assertEqual(
            [(c["name"], c["type"], c["format"]) for c in DEFAULT_TABLE_COLUMNS],
            [("Name", "string", "name"), ("Created At", "date", "")],
        )
        row = printers.default_row(
            {"metadata": {"name": "a", "creationTimestamp": "2024-01-01T00:00:00.5+01:00"}}
        )
        self.assertEqual(row, ["a", "2023-12-31T23:00:00Z"])
        self.assertEqual(
            printers.default_row({"metadata": {"name": "b"}}), ["b", "0001-01-01T00:00:00Z"]
        )

    def test_format_labels(self) -> None:
        """Labels print sorted k=v, or <none>."""
        self.assertEqual(printers.format_labels({"b": "2", "a": "1"}), "a=1,b=2")
        self.assertEqual(printers.format_labels({}), "<none>")


class CoreTableTests(ClockMixin, SynchronousTestCase):
    def test_service_columns(self) -> None:
        """Service columns are NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE and wide SELECTOR."""
        self.assertEqual(
            _heads(SERVICE_TABLE),
            [
                ("Name", "string", "name", 0),
                ("Type", "string", "", 0),
                ("Cluster-IP", "string", "", 0),
                ("External-IP", "string", "", 0),
                ("Port(s)", "string", "", 0),
                ("Age", "string", "", 0),
                ("Selector", "string", "", 1),
            ],
        )
        self.assertTrue(
            SERVICE_TABLE.columns[1]["description"].startswith(
                "type determines how the Service is exposed. Defaults to ClusterIP."
            )
        )

    def test_service_row_load_balancer_pending(self) -> None:
        """A LoadBalancer without ingress shows <pending> and node ports in PORT(S)."""
        svc = {
            "metadata": {"name": "web", "creationTimestamp": CREATED},
            "spec": {
                "type": "LoadBalancer",
                "clusterIP": "10.0.0.5",
                "clusterIPs": ["10.0.0.5"],
                "ports": [
                    {"port": 80, "nodePort": 30080, "protocol": "TCP"},
                    {"port": 53, "protocol": "UDP"},
                ],
                "selector": {"app": "web", "tier": "fe"},
            },
            "status": {"loadBalancer": {}},
        }
        self.assertEqual(
            SERVICE_TABLE.row(svc),
            [
                "web",
                "LoadBalancer",
                "10.0.0.5",
                "<pending>",
                "80:30080/TCP,53/UDP",
                "5m",
                "app=web,tier=fe",
            ],
        )

    def test_service_row_external(self) -> None:
        """External IPs and ingress are joined; ExternalName prints the name; headless None."""
        lb = {
            "metadata": {"name": "lb"},
            "spec": {"type": "LoadBalancer", "externalIPs": ["1.2.3.4"]},
            "status": {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "a.example"}]}},
        }
        self.assertEqual(
            SERVICE_TABLE.row(lb)[2:5], ["<none>", "5.6.7.8,a.example,1.2.3.4", "<none>"]
        )
        en = {
            "metadata": {"name": "e"},
            "spec": {"type": "ExternalName", "externalName": "db.example"},
        }
        self.assertEqual(SERVICE_TABLE.row(en)[3], "db.example")
        hl = {"metadata": {"name": "h"}, "spec": {"type": "ClusterIP", "clusterIPs": ["None"]}}
        self.assertEqual(SERVICE_TABLE.row(hl)[2:4], ["None", "<none>"])
        self.assertEqual(SERVICE_TABLE.row(hl)[5:], ["<unknown>", "<none>"])

    def test_namespace_configmap_secret_sa_rows(self) -> None:
        """Simple tables print phase, data counts (data + binaryData), type and secret counts."""
        meta = {"name": "x", "creationTimestamp": CREATED}
        self.assertEqual(
            NAMESPACE_TABLE.row({"metadata": meta, "status": {"phase": "Active"}}),
            ["x", "Active", "5m"],
        )
        self.assertEqual(
            CONFIGMAP_TABLE.row({"metadata": meta, "data": {"a": "1"}, "binaryData": {"b": ""}}),
            ["x", 2, "5m"],
        )
        self.assertEqual(
            SECRET_TABLE.row({"metadata": meta, "type": "Opaque", "data": {"a": "MQ=="}}),
            ["x", "Opaque", 1, "5m"],
        )
        self.assertEqual(SERVICEACCOUNT_TABLE.row({"metadata": meta}), ["x", 0, "5m"])
        self.assertEqual([c["name"] for c in SECRET_TABLE.columns], ["Name", "Type", "Data", "Age"])

    def test_endpoints_row(self) -> None:
        """Endpoints print up to three host:port pairs, IPv6 in brackets, then '+ N more...'."""
        ep = {
            "metadata": {"name": "e"},
            "subsets": [
                {
                    "addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
                    "ports": [{"port": 80}, {"port": 443}],
                },
            ],
        }
        self.assertEqual(
            ENDPOINTS_TABLE.row(ep)[1], "10.0.0.1:80,[fd00::1]:80,10.0.0.1:443 + 1 more..."
        )
        self.assertEqual(ENDPOINTS_TABLE.row({"metadata": {"name": "e"}})[1], "<none>")
        headless = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}]}]}
        self.assertEqual(ENDPOINTS_TABLE.row(headless)[1], "10.0.0.1")

    def test_event_columns_and_row(self) -> None:
        """Events print LAST SEEN, TYPE, REASON, OBJECT, ..., COUNT and NAME (wide)."""
        self.assertEqual(
            _heads(EVENT_TABLE),
            [
                ("Last Seen", "string", "", 0),
                ("Type", "string", "", 0),
                ("Reason", "string", "", 0),
                ("Object", "string", "", 0),
                ("Subobject", "string", "", 1),
                ("Source", "string", "", 1),
                ("Message", "string", "", 0),
                ("First Seen", "string", "", 1),
                ("Count", "string", "", 1),
                ("Name", "string", "name", 1),
            ],
        )
        event = {
            "metadata": {"name": "p.1"},
            "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{c}"},
            "reason": "Pulled",
            "message": " done \n",
            "type": "Normal",
            "source": {"component": "kubelet", "host": "node1"},
            "firstTimestamp": "2024-01-01T00:00:00Z",
            "lastTimestamp": "2024-01-01T00:04:00Z",
            "count": 3,
        }
        self.assertEqual(
            EVENT_TABLE.row(event),
            [
                "60s",
                "Normal",
                "Pulled",
                "pod/p",
                "spec.containers{c}",
                "kubelet, node1",
                "done",
                "5m",
                3,
                "p.1",
            ],
        )

    def test_event_row_new_style(self) -> None:
        """An events.k8s.io-style event uses eventTime, the reporting fields and count 1."""
        event = {
            "metadata": {"name": "n"},
            "involvedObject": {"kind": "Node"},
            "eventTime": "2024-01-01T00:03:00.000000Z",
            "reportingComponent": "sched",
            "firstTimestamp": None,
            "lastTimestamp": None,
        }
        self.assertEqual(
            EVENT_TABLE.row(event), ["2m", "", "", "node", "", "sched", "", "2m", 1, "n"]
        )

    def test_pod_columns(self) -> None:
        """Pod columns as upstream, with string RESTARTS and four wide columns."""
        self.assertEqual(
            _heads(POD_TABLE),
            [
                ("Name", "string", "name", 0),
                ("Ready", "string", "", 0),
                ("Status", "string", "", 0),
                ("Restarts", "string", "", 0),
                ("Age", "string", "", 0),
                ("IP", "string", "", 1),
                ("Node", "string", "", 1),
                ("Nominated Node", "string", "", 1),
                ("Readiness Gates", "string", "", 1),
            ],
        )

    def test_pod_pending_creating(self) -> None:
        """A pending pod whose container waits shows the waiting reason and <none> wide cells."""
        pod = {
            "metadata": {"name": "p", "creationTimestamp": CREATED},
            "spec": {"containers": [{"name": "c"}]},
            "status": {
                "phase": "Pending",
                "containerStatuses": [
                    {
                        "name": "c",
                        "ready": False,
                        "restartCount": 0,
                        "state": {"waiting": {"reason": "ContainerCreating"}},
                    }
                ],
            },
        }
        self.assertEqual(
            POD_TABLE.row(pod),
            [
                "p",
                "0/1",
                "ContainerCreating",
                "0",
                "5m",
                "<none>",
                "<none>",
                "<none>",
                "<none>",
            ],
        )
        self.assertEqual(
            POD_TABLE.row({"metadata": {"name": "q"}, "status": {"phase": "Pending"}})[1:4],
            ["0/0", "Pending", "0"],
        )

    def test_pod_init_and_running(self) -> None:
        """Init progress prints Init:i/n; a running pod counts ready containers and restarts."""
        init = {
            "metadata": {"name": "p"},
            "spec": {
                "initContainers": [{"name": "i"}, {"name": "j"}],
                "containers": [{"name": "c"}],
            },
            "status": {
                "phase": "Pending",
                "initContainerStatuses": [
                    {"name": "i", "state": {"terminated": {"exitCode": 0}}},
                    {"name": "j", "state": {"running": {}}},
                ],
            },
        }
        self.assertEqual(POD_TABLE.row(init)[1:3], ["0/1", "Init:1/2"])
        crash = {
            "metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]},
            "status": {
                "phase": "Pending",
                "initContainerStatuses": [
                    {"name": "i", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
                ],
            },
        }
        self.assertEqual(POD_TABLE.row(crash)[2], "Init:CrashLoopBackOff")
        running = {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [{"name": "a"}, {"name": "b"}],
                "nodeName": "n1",
                "readinessGates": [{"conditionType": "x/ready"}],
            },
            "status": {
                "phase": "Running",
                "podIPs": [{"ip": "10.1.0.4"}],
                "conditions": [{"type": "x/ready", "status": "True"}],
                "containerStatuses": [
                    {
                        "name": "a",
                        "ready": True,
                        "restartCount": 2,
                        "state": {"running": {}},
                        "lastState": {
                            "terminated": {"exitCode": 1, "finishedAt": "2024-01-01T00:02:00Z"}
                        },
                    },
                    {"name": "b", "ready": True, "restartCount": 0, "state": {"running": {}}},
                ],
            },
        }
        self.assertEqual(
            POD_TABLE.row(running)[1:],
            [
                "2/2",
                "Running",
                "2 (3m ago)",
                "<unknown>",
                "10.1.0.4",
                "n1",
                "<none>",
                "1/1",
            ],
        )

    def test_pod_terminal_and_deleting(self) -> None:
        """Deleting pods print Terminating (not when completed); completed rows get conditions."""
        pod = {
            "metadata": {"name": "p", "deletionTimestamp": CREATED},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Running"},
        }
        self.assertEqual(POD_TABLE.row(pod)[2], "Terminating")
        pod["status"] = {
            "phase": "Succeeded",
            "containerStatuses": [
                {"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
            ],
        }
        self.assertEqual(POD_TABLE.row(pod)[2], "Completed")
        self.assertEqual(
            pod_row_conditions(pod),
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "reason": "Succeeded",
                    "message": "The pod has completed successfully.",
                }
            ],
        )
        pod["status"] = {
            "phase": "Failed",
            "containerStatuses": [
                {"name": "c", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
            ],
        }
        self.assertEqual(POD_TABLE.row(pod)[2], "Signal:9")


class AppsTableTests(ClockMixin, SynchronousTestCase):
    TEMPLATE = {
        "spec": {
            "containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox"}],
            "nodeSelector": {"disk": "ssd"},
        }
    }

    def test_deployment(self) -> None:
        """Deployments print READY x/y, UP-TO-DATE, AVAILABLE, AGE, CONTAINERS, IMAGES, SELECTOR."""
        self.assertEqual(
            [c["name"] for c in DEPLOYMENT_TABLE.columns],
            ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"],
        )
        d = {
            "metadata": {"name": "d", "creationTimestamp": CREATED},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "d"}},
                "template": self.TEMPLATE,
            },
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        }
        self.assertEqual(
            DEPLOYMENT_TABLE.row(d), ["d", "2/3", 3, 2, "5m", "a,b", "nginx:1,busybox", "app=d"]
        )

    def test_replicaset_statefulset_daemonset(self) -> None:
        """ReplicaSets, StatefulSets and DaemonSets print their counts as upstream."""
        rs = {
            "metadata": {"name": "r"},
            "spec": {"replicas": 2, "template": self.TEMPLATE},
            "status": {"replicas": 2, "readyReplicas": 1},
        }
        self.assertEqual(
            REPLICASET_TABLE.row(rs),
            ["r", 2, 2, 1, "<unknown>", "a,b", "nginx:1,busybox", "<none>"],
        )
        ss = {
            "metadata": {"name": "s"},
            "spec": {"replicas": 3, "template": self.TEMPLATE},
            "status": {},
        }
        self.assertEqual(
            STATEFULSET_TABLE.row(ss), ["s", "0/3", "<unknown>", "a,b", "nginx:1,busybox"]
        )
        ds = {
            "metadata": {"name": "ds"},
            "spec": {"selector": {"matchLabels": {"k": "v"}}, "template": self.TEMPLATE},
            "status": {
                "desiredNumberScheduled": 3,
                "currentNumberScheduled": 3,
                "numberReady": 2,
                "updatedNumberScheduled": 3,
                "numberAvailable": 2,
            },
        }
        self.assertEqual(
            DAEMONSET_TABLE.row(ds),
            ["ds", 3, 3, 2, 3, 2, "disk=ssd", "<unknown>", "a,b", "nginx:1,busybox", "k=v"],
        )
        self.assertEqual(
            [c["type"] for c in DAEMONSET_TABLE.columns][:7],
            ["string", "integer", "integer", "integer", "integer", "integer", "string"],
        )

    def test_controller_revision(self) -> None:
        """The Controller cell is kind.group/name of the controlling owner, lower-cased."""
        cr = {
            "metadata": {
                "name": "web-5d",
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "name": "Web",
                        "controller": True,
                    }
                ],
            },
            "revision": 2,
        }
        self.assertEqual(
            CONTROLLERREVISION_TABLE.row(cr), ["web-5d", "statefulset.apps/Web", 2, "<unknown>"]
        )
        self.assertEqual(
            CONTROLLERREVISION_TABLE.row({"metadata": {"name": "x"}, "revision": 1})[1], "<none>"
        )


class LeaseTableTests(ClockMixin, SynchronousTestCase):
    def test_lease(self) -> None:
        """Leases print NAME, HOLDER, AGE."""
        self.assertEqual(
            _heads(LEASE_TABLE),
            [("Name", "string", "name", 0), ("Holder", "string", "", 0), ("Age", "string", "", 0)],
        )
        lease = {
            "metadata": {"name": "kube-scheduler", "creationTimestamp": CREATED},
            "spec": {"holderIdentity": "node1_abc"},
        }
        self.assertEqual(LEASE_TABLE.row(lease), ["kube-scheduler", "node1_abc", "5m"])

    def test_controller_revisions_print_with_their_table(self):
        """
        The controllerrevisions strategy serves upstream's ControllerRevision columns (Name,
        Controller, Revision, Age), not the default Name/Created At table.
        """
        from kubetwist.apis.apps.strategies import STRATEGIES

        table = STRATEGIES["controllerrevisions"].table
        self.assertEqual([c["name"] for c in table.columns],
                         ["Name", "Controller", "Revision", "Age"])
