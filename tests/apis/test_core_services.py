"""
Tests for L{kubetwist.apis.core.services}: defaults, validation messages, registry-level IP
family defaults, update rules and the status strategy.
"""

from __future__ import annotations

import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core.services import (
    SERVICE_STATUS_STRATEGY,
    SERVICE_STRATEGY,
    default_service,
    default_service_on_read,
    default_service_registry_fields,
    service_warnings,
    validate_service,
    validate_service_update,
)
from kubetwist.runtime.field import aggregate_message


def svc(spec: dict, name: str = "web", **meta) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "ns", **meta},
        "spec": spec,
    }


def created(spec: dict, **meta) -> tuple[dict, list]:
    """Default, registry defaults, prepare and validate a new Service."""
    obj = svc(spec, **meta)
    SERVICE_STRATEGY.default(obj)
    errs = default_service_registry_fields(obj)
    if errs:
        return obj, errs
    SERVICE_STRATEGY.prepare_for_create(obj)
    return obj, SERVICE_STRATEGY.validate(obj)


def messages(errs) -> list[str]:
    return [e.error() for e in errs]


def stored(spec: dict) -> dict:
    """A service as kube-apiserver would have stored it (allocation done by hand)."""
    obj, errs = created(spec)
    assert not errs, messages(errs)
    if obj["spec"]["type"] != "ExternalName" and not obj["spec"].get("clusterIPs"):
        obj["spec"]["clusterIP"] = "10.96.0.10"
        obj["spec"]["clusterIPs"] = ["10.96.0.10"]
    obj["metadata"]["resourceVersion"] = "5"
    return obj


class DefaultsTests(SynchronousTestCase):
    def test_cluster_ip_defaults(self) -> None:
        """A bare ClusterIP service gets type, affinity, protocol, targetPort and traffic policy."""
        obj = svc({"ports": [{"port": 80, "nodePort": 0, "name": ""}]})
        default_service(obj)
        self.assertEqual(
            obj["spec"],
            {
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
                "sessionAffinity": "None",
                "type": "ClusterIP",
                "internalTrafficPolicy": "Cluster",
            },
        )

    def test_load_balancer_defaults(self) -> None:
        """LoadBalancer adds externalTrafficPolicy, allocateLoadBalancerNodePorts and ipMode."""
        obj = svc({"type": "LoadBalancer", "ports": [{"port": 80, "targetPort": "http"}]})
        obj["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "h"}]}}
        default_service(obj)
        self.assertEqual(obj["spec"]["externalTrafficPolicy"], "Cluster")
        self.assertIs(obj["spec"]["allocateLoadBalancerNodePorts"], True)
        self.assertEqual(obj["spec"]["ports"][0]["targetPort"], "http")
        self.assertEqual(
            obj["status"]["loadBalancer"]["ingress"],
            [{"ip": "1.2.3.4", "ipMode": "VIP"}, {"hostname": "h"}],
        )

    def test_client_ip_affinity(self) -> None:
        """ClientIP affinity gets the 10800 s timeout; None drops any affinity config."""
        obj = svc({"sessionAffinity": "ClientIP", "ports": [{"port": 1}]})
        default_service(obj)
        self.assertEqual(
            obj["spec"]["sessionAffinityConfig"], {"clientIP": {"timeoutSeconds": 10800}}
        )
        obj = svc(
            {"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}, "ports": [{"port": 1}]}
        )
        default_service(obj)
        self.assertNotIn("sessionAffinityConfig", obj["spec"])

    def test_external_name_has_no_internal_policy(self) -> None:
        """ExternalName services get no internalTrafficPolicy."""
        obj = svc({"type": "ExternalName", "externalName": "db.example.com"})
        default_service(obj)
        self.assertNotIn("internalTrafficPolicy", obj["spec"])


class CreateValidationTests(SynchronousTestCase):
    def test_created_service(self) -> None:
        """A valid create gets SingleStack/IPv4 families and an empty load-balancer status."""
        obj, errs = created({"selector": {"app": "web"}, "ports": [{"port": 80}]})
        self.assertEqual(errs, [])
        self.assertEqual(obj["spec"]["ipFamilies"], ["IPv4"])
        self.assertEqual(obj["spec"]["ipFamilyPolicy"], "SingleStack")
        self.assertEqual(obj["status"], {"loadBalancer": {}})

    def test_ports_required(self) -> None:
        """A non-headless service without ports is refused at spec.ports."""
        _, errs = created({})
        self.assertEqual(messages(errs), ["spec.ports: Required value"])

    def test_headless_selectorless(self) -> None:
        """A headless selectorless service needs no ports and defaults to RequireDualStack."""
        obj, errs = created({"clusterIP": "None"})
        self.assertEqual(errs, [])
        self.assertEqual(obj["spec"]["clusterIPs"], ["None"])
        self.assertEqual(obj["spec"]["ipFamilyPolicy"], "RequireDualStack")
        self.assertEqual(obj["spec"]["ipFamilies"], ["IPv4", "IPv6"])

    def test_port_names(self) -> None:
        """Several ports need names, unique and DNS-1123 labels; duplicates of port print Go
        structs."""
        _, errs = created(
            {"ports": [{"port": 80}, {"name": "a", "port": 80}, {"name": "a", "port": 81}]}
        )
        self.assertEqual(
            messages(errs),
            [
                "spec.ports[0].name: Required value",
                'spec.ports[2].name: Duplicate value: "a"',
                'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", '
                "AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, "
                'IntVal:0, StrVal:""}, NodePort:0}',
            ],
        )

    def test_bad_values(self) -> None:
        """Port range, protocol and type are checked with upstream's wording."""
        _, errs = created(
            {"type": "Foo", "ports": [{"port": 70000, "protocol": "HTTP", "targetPort": "no_such"}]}
        )
        self.assertEqual(
            messages(errs),
            [
                "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                'spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", '
                '"TCP", "UDP"',
                'spec.ports[0].targetPort: Invalid value: "no_such": must contain only '
                'alpha-numeric '
                "characters (a-z, 0-9), and hyphens (-)",
                'spec.type: Unsupported value: "Foo": supported values: "ClusterIP", '
                '"ExternalName", '
                '"LoadBalancer", "NodePort"',
            ],
        )

    def test_node_port_on_cluster_ip(self) -> None:
        """A nodePort on a ClusterIP service is forbidden."""
        _, errs = created({"ports": [{"port": 80, "nodePort": 30000}]})
        self.assertEqual(
            messages(errs),
            ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
        )

    def test_kubelet_port_and_headless_load_balancer(self) -> None:
        """LoadBalancers may not expose 10250 nor be headless."""
        _, errs = created(
            {
                "type": "LoadBalancer",
                "clusterIP": "None",
                "selector": {"a": "b"},
                "ports": [{"port": 10250}],
            }
        )
        self.assertEqual(
            messages(errs),
            [
                "spec.ports[0]: Invalid value: 10250: may not expose port 10250 externally since "
                "it is used by kubelet",
                "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for "
                "LoadBalancer services",
            ],
        )

    def test_external_name(self) -> None:
        """ExternalName needs a DNS name and no cluster IPs or families."""
        obj, errs = created({"type": "ExternalName", "externalName": "db.example.com."})
        self.assertEqual(errs, [])
        self.assertNotIn("ipFamilies", obj["spec"])
        _, errs = created(
            {"type": "ExternalName", "clusterIP": "10.0.0.1", "ipFamilyPolicy": "SingleStack"}
        )
        self.assertEqual(
            messages(errs),
            [
                "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
                "spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services",
                "spec.externalName: Required value",
            ],
        )

    def test_session_affinity_timeout(self) -> None:
        """A ClientIP timeout above a day is refused."""
        _, errs = created(
            {
                "sessionAffinity": "ClientIP",
                "ports": [{"port": 1}],
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86401}},
            }
        )
        self.assertEqual(
            messages(errs),
            [
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: "
                "must be greater than 0 and less than 86400"
            ],
        )

    def test_external_ips_and_name(self) -> None:
        """External IPs must be valid and not loopback; the name is a DNS-1035 label."""
        _, errs = created(
            {"ports": [{"port": 1}], "externalIPs": ["127.0.0.1", "x"]},
        )
        self.assertEqual(
            messages(errs),
            [
                'spec.externalIPs[0]: Invalid value: "127.0.0.1": may not be in the loopback range '
                '(127.0.0.0/8, ::1/128)',
                'spec.externalIPs[1]: Invalid value: "x": must be a valid IP address, (e.g. '
                '10.9.8.7 or 2001:db8::ffff)',
            ],
        )
        obj = svc({"ports": [{"port": 1}]}, name="1abc")
        default_service(obj)
        self.assertEqual(
            messages(validate_service(obj))[0],
            'metadata.name: Invalid value: "1abc": a DNS-1035 label must consist of lower case '
            "alphanumeric characters or '-', start with an alphabetic character, and end with an "
            "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        )


class RegistryFieldsTests(SynchronousTestCase):
    def test_require_dual_stack_refused(self) -> None:
        """RequireDualStack on a single-stack cluster is refused."""
        _, errs = created(
            {"ports": [{"port": 1}], "selector": {"a": "b"}, "ipFamilyPolicy": "RequireDualStack"}
        )
        self.assertEqual(
            messages(errs),
            [
                'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not '
                'configured for dual-stack services'
            ],
        )

    def test_family_not_configured(self) -> None:
        """An IPv6 family or cluster IP on an IPv4 cluster is refused."""
        _, errs = created({"ports": [{"port": 1}], "ipFamilies": ["IPv6"]})
        self.assertEqual(
            messages(errs),
            ['spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster'],
        )
        _, errs = created({"ports": [{"port": 1}], "clusterIP": "fd00::1"})
        self.assertEqual(
            messages(errs),
            [
                'spec.clusterIPs[0]: Invalid value: []string{"fd00::1"}: IPv6 is not configured on '
                'this cluster'
            ],
        )

    def test_prefer_dual_stack_on_dual_cluster(self) -> None:
        """PreferDualStack on a dual-stack cluster gets both families."""
        obj = svc({"ports": [{"port": 1}], "ipFamilyPolicy": "PreferDualStack"})
        default_service(obj)
        self.assertEqual(default_service_registry_fields(obj, None, ("IPv6", "IPv4")), [])
        self.assertEqual(obj["spec"]["ipFamilies"], ["IPv6", "IPv4"])

    def test_cluster_ip_mismatch(self) -> None:
        """clusterIPs[0] must equal clusterIP."""
        _, errs = created(
            {"ports": [{"port": 1}], "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.2"]}
        )
        self.assertEqual(
            messages(errs),
            [
                'spec.clusterIPs: Invalid value: []string{"10.0.0.2"}: first value must match '
                '`clusterIP`'
            ],
        )

    def test_on_read(self) -> None:
        """Reading an old object fills families from clusterIP and drops ExternalName's policy."""
        obj = svc({"type": "ClusterIP", "clusterIP": "10.0.0.1", "ports": [{"port": 1}]})
        default_service_on_read(obj)
        self.assertEqual(
            (obj["spec"]["clusterIPs"], obj["spec"]["ipFamilies"], obj["spec"]["ipFamilyPolicy"]),
            (["10.0.0.1"], ["IPv4"], "SingleStack"),
        )
        obj = svc({"type": "ExternalName", "externalName": "x", "internalTrafficPolicy": "Cluster"})
        default_service_on_read(obj)
        self.assertNotIn("internalTrafficPolicy", obj["spec"])


class UpdateTests(SynchronousTestCase):
    def update(self, old: dict, new_spec: dict) -> tuple[dict, list]:
        new = svc(new_spec)
        new["metadata"]["resourceVersion"] = "5"
        SERVICE_STRATEGY.default(new)
        errs = default_service_registry_fields(new, copy.deepcopy(old))
        if errs:
            return new, errs
        SERVICE_STRATEGY.prepare_for_update(new, old)
        return new, SERVICE_STRATEGY.validate_update(new, old)

    def test_reapply_keeps_allocations(self) -> None:
        """Re-applying a manifest without allocated values keeps clusterIP(s) and node ports."""
        old = stored({"type": "NodePort", "ports": [{"name": "http", "port": 80}]})
        old["spec"]["ports"][0]["nodePort"] = 30080
        new, errs = self.update(old, {"type": "NodePort", "ports": [{"name": "http", "port": 80}]})
        self.assertEqual(errs, [])
        self.assertEqual(new["spec"]["clusterIPs"], ["10.96.0.10"])
        self.assertEqual(new["spec"]["ports"][0]["nodePort"], 30080)

    def test_cluster_ip_immutable(self) -> None:
        """Changing clusterIP is refused at clusterIPs[0]."""
        old = stored({"ports": [{"port": 80}]})
        _, errs = self.update(old, {"clusterIP": "10.96.0.11", "ports": [{"port": 80}]})
        self.assertEqual(
            messages(errs),
            ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.11"}: may not change once set'],
        )

    def test_type_change_drops_node_ports(self) -> None:
        """Switching NodePort to ClusterIP wipes allocated node ports and externalTrafficPolicy."""
        old = stored({"type": "NodePort", "ports": [{"port": 80}]})
        old["spec"]["ports"][0]["nodePort"] = 30080
        new_spec = copy.deepcopy(old["spec"])
        new_spec["type"] = "ClusterIP"
        new, errs = self.update(old, new_spec)
        self.assertEqual(errs, [])
        self.assertNotIn("nodePort", new["spec"]["ports"][0])
        self.assertNotIn("externalTrafficPolicy", new["spec"])

    def test_status_strategy(self) -> None:
        """The status strategy keeps the spec and checks ingress (ipMode required with ip)."""
        old = stored({"type": "LoadBalancer", "ports": [{"port": 80}]})
        new = copy.deepcopy(old)
        new["spec"]["type"] = "ClusterIP"
        new["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "1.2.3.5"}]}}
        SERVICE_STATUS_STRATEGY.prepare_for_update(new, old)
        self.assertEqual(new["spec"]["type"], "LoadBalancer")
        self.assertEqual(
            messages(SERVICE_STATUS_STRATEGY.validate_update(new, old)),
            [
                "status.loadBalancer.ingress[0].ipMode: Required value: must be specified when "
                "`ip` is set",
                'status.loadBalancer.ingress[1].hostname: Invalid value: "1.2.3.5": must be a DNS '
                'name, not an IP address',
            ],
        )

    def test_update_aggregate(self) -> None:
        """validate_service_update starts with ObjectMeta update rules (resourceVersion)."""
        old = stored({"ports": [{"port": 80}]})
        new = copy.deepcopy(old)
        del new["metadata"]["resourceVersion"]
        self.assertEqual(
            aggregate_message(validate_service_update(new, old)),
            'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        )


class WarningTests(SynchronousTestCase):
    def test_warnings(self) -> None:
        """Deprecated topology annotation and ignored externalName produce upstream's warnings."""
        obj = svc(
            {"type": "ClusterIP", "externalName": "x"},
            annotations={"service.kubernetes.io/topology-aware-hints": "auto"},
        )
        self.assertEqual(
            service_warnings(obj),
            [
                "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use "
                "service.kubernetes.io/topology-mode instead",
                'spec.externalName is ignored when spec.type is not "ExternalName"',
            ],
        )
