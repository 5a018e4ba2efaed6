# -*- test-case-name: tests.apis.test_pod_subresources -*-
"""
The subresources that reach a kubelet or a pod: C{pods/log}, C{pods/exec}, C{pods/attach},
C{pods/portforward}, C{pods/proxy}, C{nodes/proxy} and C{services/proxy}, as upstream
C{pkg/registry/core/pod/rest} (C{LogREST}, C{ExecREST}, C{AttachREST}, C{PortForwardREST},
C{ProxyREST}), C{pkg/registry/core/pod/strategy.go} (C{LogLocation}, C{streamLocation},
C{PortForwardLocation}, C{ResourceLocation}), C{pkg/registry/core/node/strategy.go} and
C{pkg/registry/core/service/storage/storage.go} (C{ResourceLocation}) and
C{pkg/kubelet/client} (C{NodeConnectionInfoGetter}) resolve them.

kubetwist runs no kubelets and proxies to no pods: every check upstream makes before it
connects is made here, with upstream's answers; where upstream would then open a connection,
the answer is the one upstream gives when nothing listens at the resolved address (a 500
whose message is the dial error, C{connect: connection refused}).
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from zope.interface import implementer

from kubetwist.registry.core.pod_subresources import unknown_error
from kubetwist.registry.generic.store import Store
from kubetwist.registry.rest import IConnecter
from kubetwist.runtime import errors
from kubetwist.runtime import field as fe

__all__ = [
    "DEFAULT_KUBELET_PORT",
    "PREFERRED_ADDRESS_TYPES",
    "LogREST",
    "NodeProxyREST",
    "PodProxyREST",
    "PodStreamREST",
    "ServiceProxyREST",
    "node_connection_info",
]

#: kube-apiserver's C{--kubelet-port} default.
DEFAULT_KUBELET_PORT = 10250
#: kube-apiserver's C{--kubelet-preferred-address-types} default.
PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")


def _query(request: Any) -> dict[str, list[str]]:
    """The request's query parameters (as the request-info filter parses them)."""
    uri = request.uri.decode("latin-1") if isinstance(request.uri, bytes) else request.uri
    return parse_qs(urlsplit(uri).query, keep_blank_values=True)


def _first(q: dict[str, list[str]], key: str) -> str | None:
    values = q.get(key)
    return values[0] if values else None


def _bool(q: dict[str, list[str]], key: str) -> bool:
    """A query boolean as upstream's C{Convert_Slice_string_To_bool} reads it: absent,
    C{0}, C{f} or C{false} (any case) are false, anything else true."""
    value = _first(q, key)
    if value is None:
        return False
    return not (value == "0" or value.lower() in ("f", "false"))


def _int(q: dict[str, list[str]], key: str) -> int | None:
    value = _first(q, key)
    if not value:
        return None
    try:
        return int(value, 10)
    except ValueError:
        raise errors.new_bad_request(
            f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def _connection_refused(host: str, port: int | str) -> str:
    hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return f"dial tcp {hostport}: connect: connection refused"


def _is_upgrade(request: Any) -> bool:
    """Upstream C{httpstream.IsUpgradeRequest}: C{Connection} names C{Upgrade}."""
    for value in request.requestHeaders.getRawHeaders(b"connection", []):
        if b"upgrade" in value.lower():
            return True
    return False


def _write_no_content(request: Any) -> None:
    if not request.finished:
        request.setResponseCode(204)
        request.finish()


async def node_connection_info(nodes: Store, node_name: str) -> tuple[str, int]:
    """
    Upstream C{NodeConnectionInfoGetter.GetConnectionInfo}: the node's preferred address
    (L{PREFERRED_ADDRESS_TYPES}) and its C{status.daemonEndpoints.kubeletEndpoint.Port}
    (else L{DEFAULT_KUBELET_PORT}).

    @return: C{(host, port)}.
    @raise StatusError: 404 C{nodes "n" not found}; 500 (reason omitted) C{no preferred
        addresses found; known addresses: [{InternalIP 10.0.0.1}]}.
    """
    node = await nodes.get("", node_name)
    status = node.get("status") or {}
    addresses = status.get("addresses") or []
    for kind in PREFERRED_ADDRESS_TYPES:
        for a in addresses:
            if (a or {}).get("type") == kind:
                host = a.get("address") or ""
                break
        else:
            continue
        break
    else:
        known = " ".join(f"{{{(a or {}).get('type', '')} {(a or {}).get('address', '')}}}"
                         for a in addresses)
        raise unknown_error(f"no preferred addresses found; known addresses: [{known}]")
    port = (((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {})
            .get("Port") or 0)
    return host, port if port > 0 else DEFAULT_KUBELET_PORT


def _container_names(spec: dict) -> list[str]:
    """Upstream C{VisitContainers} order: init, regular, ephemeral."""
    return [(c or {}).get("name") or "" for key in ("initContainers", "containers",
                                                    "ephemeralContainers")
            for c in spec.get(key) or []]


def validate_container(container: str, pod: dict, name: str) -> str:
    """
    Upstream C{validateContainer}: the container to use, the only one when none is named.

    @raise StatusError: 400 C{a container name must be specified for pod x, choose one of:
        [a b]}, C{a container name must be specified for pod x} (no containers),
        C{container c is not valid for pod x}.
    """
    spec = pod.get("spec") or {}
    if not container:
        containers = spec.get("containers") or []
        if len(containers) == 1:
            return (containers[0] or {}).get("name") or ""
        if not containers:
            raise errors.new_bad_request(f"a container name must be specified for pod {name}")
        raise errors.new_bad_request(
            f"a container name must be specified for pod {name}, choose one of: "
            f"[{' '.join(_container_names(spec))}]")
    if container not in _container_names(spec):
        raise errors.new_bad_request(f"container {container} is not valid for pod {name}")
    return container


class _PodREST:
    def __init__(self, pods: Store, nodes_of: Any) -> None:
        """
        @param pods: the pod L{Store}.
        @param nodes_of: returns the node L{Store} (a lookup, as nodes may be built later).
        """
        self.pods = pods
        self._nodes_of = nodes_of

    @property
    def nodes(self) -> Store:
        return self._nodes_of()


class LogREST(_PodREST):
    """C{GET .../pods/<name>/log} (upstream C{LogREST}; C{PodLogOptions} in the query)."""

    async def get(self, request: Any, handlers: Any, namespace: str, name: str,
                  out: Any) -> None:
        """
        Validate the options, find the pod and container; a pod on no node answers C{204}
        with no body, as upstream's C{LocationStreamer} with no location.

        @raise StatusError: 400 (query syntax; container choice, see L{validate_container}),
            422 on C{PodLogOptions} (C{tailLines}, C{limitBytes}, C{sinceSeconds},
            C{sinceTime} with C{sinceSeconds}), 404 (the pod; the node), 500 (the node's
            kubelet does not answer).
        """
        q = _query(request)
        opts: dict[str, Any] = {
            "container": _first(q, "container") or "",
            "follow": _bool(q, "follow"), "previous": _bool(q, "previous"),
            "timestamps": _bool(q, "timestamps"),
            "sinceSeconds": _int(q, "sinceSeconds"), "sinceTime": _first(q, "sinceTime"),
            "tailLines": _int(q, "tailLines"), "limitBytes": _int(q, "limitBytes"),
        }
        errs = validate_pod_log_options(opts)
        if errs:
            raise errors.new_invalid("", "PodLogOptions", name, errs)
        pod = await self.pods.get(namespace, name)
        container = validate_container(opts["container"], pod, name)
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            _write_no_content(request)
            return
        host, port = await node_connection_info(self.nodes, node_name)
        params = {}
        for key in ("follow", "previous", "timestamps"):
            if opts[key]:
                params[key] = "true"
        for key in ("sinceSeconds", "tailLines", "limitBytes"):
            if opts[key] is not None:
                params[key] = str(opts[key])
        if opts["sinceTime"]:
            params["sinceTime"] = opts["sinceTime"]
        hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        url = f"https://{hostport}/containerLogs/{namespace}/{name}/{quote(container)}"
        if params:
            url += "?" + urlencode(sorted(params.items()))
        raise unknown_error(f'Get "{url}": {_connection_refused(host, port)}')


def validate_pod_log_options(opts: dict) -> list[fe.FieldError]:
    """Upstream C{ValidatePodLogOptions}."""
    errs: list[fe.FieldError] = []
    if opts.get("tailLines") is not None and opts["tailLines"] < 0:
        errs.append(fe.invalid("tailLines", opts["tailLines"],
                               "must be greater than or equal to 0"))
    if opts.get("limitBytes") is not None and opts["limitBytes"] < 1:
        errs.append(fe.invalid("limitBytes", opts["limitBytes"], "must be greater than 0"))
    if opts.get("sinceSeconds") is not None and opts.get("sinceTime"):
        errs.append(fe.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be "
                                     "specified"))
    elif opts.get("sinceSeconds") is not None and opts["sinceSeconds"] < 1:
        errs.append(fe.invalid("sinceSeconds", opts["sinceSeconds"], "must be greater than 0"))
    return errs


@implementer(IConnecter)
class PodStreamREST(_PodREST):
    """
    C{GET}/C{POST} of C{pods/<name>/exec}, C{attach} (upstream C{streamLocation}) and
    C{portforward} (C{PortForwardLocation}, no container).
    """

    def __init__(self, pods: Store, nodes_of: Any, kind: str) -> None:
        """@param kind: C{exec}, C{attach} or C{portforward}."""
        super().__init__(pods, nodes_of)
        self.kind = kind

    async def connect(self, request: Any, namespace: str, name: str) -> None:
        """
        @raise StatusError: 404 (pod, node), 400 (container choice; C{pod x does not have a
            host assigned}; C{Upgrade request required}), 500 (C{error dialing backend:
            dial tcp ...}).
        """
        pod = await self.pods.get(namespace, name)
        if self.kind != "portforward":
            validate_container(_first(_query(request), "container") or "", pod, name)
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            raise errors.new_bad_request(f"pod {name} does not have a host assigned")
        host, port = await node_connection_info(self.nodes, node_name)
        if not _is_upgrade(request):
            raise errors.new_bad_request("Upgrade request required")
        raise unknown_error(f"error dialing backend: {_connection_refused(host, port)}")

    def connect_options(self, request: Any, name: str) -> dict:
        """Upstream C{NewConnectOptions} decoded from the query, as admission sees it: a
        C{v1 PodExecOptions}, C{PodAttachOptions} or C{PodPortForwardOptions} object."""
        q = _query(request)
        if self.kind == "portforward":
            out: dict[str, Any] = {"kind": "PodPortForwardOptions", "apiVersion": "v1"}
            ports = [int(p) for p in q.get("ports", []) if p.strip().isdigit()]
            if ports:
                out["ports"] = ports
            return out
        kind = "PodExecOptions" if self.kind == "exec" else "PodAttachOptions"
        out = {"kind": kind, "apiVersion": "v1"}
        for key in ("stdin", "stdout", "stderr", "tty"):
            if _bool(q, key):
                out[key] = True
        if _first(q, "container"):
            out["container"] = _first(q, "container")
        if self.kind == "exec":
            out["command"] = q.get("command") or None
        return out

    async def get(self, request: Any, handlers: Any, namespace: str, name: str,
                  out: Any) -> None:
        await self.connect(request, namespace, name)

    async def create(self, request: Any, handlers: Any, namespace: str, name: str) -> None:
        await self.connect(request, namespace, name)


def split_scheme_name_port(ident: str) -> tuple[str, str, str] | None:
    """Upstream C{utilnet.SplitSchemeNamePort}: C{name}, C{name:port}, C{scheme:name:port}."""
    parts = ident.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        return None
    if name and scheme in ("", "http", "https"):
        return scheme, name, port
    return None


def _global_unicast(ip: str) -> bool:
    """Go's C{net.IP.IsGlobalUnicast} of C{ParseIPSloppy(ip)}."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv4Address) and addr == ipaddress.IPv4Address(
            "255.255.255.255"):
        return False
    return not (addr.is_unspecified or addr.is_loopback or addr.is_multicast
                or addr.is_link_local)


class _ProxyREST:
    """The five proxy verbs onto one C{locate} coroutine."""

    #: the kind of the connect options (upstream C{NewConnectOptions})
    options_kind = "PodProxyOptions"

    def connect_options(self, request: Any, name: str) -> dict:
        """The C{v1 <Kind>ProxyOptions} object admission sees: C{path} is the request path
        after C{.../<name>/proxy} (upstream C{getRequestOptions} with a subpath)."""
        path = request.path.decode("latin-1") if isinstance(request.path, bytes) \
            else request.path
        marker = f"/{name}/proxy"
        at = path.find(marker)
        sub = path[at + len(marker):] if at >= 0 else ""
        out: dict[str, Any] = {"kind": self.options_kind, "apiVersion": "v1"}
        if sub and sub != "/":
            out["path"] = sub
        elif sub == "/":
            out["path"] = "/"
        return out

    async def locate(self, namespace: str, ident: str) -> str:
        raise errors.new_internal_error("no proxy location")

    async def _proxy(self, namespace: str, name: str) -> None:
        hostport = await self.locate(namespace, name)
        host, _, port = hostport.rpartition(":")
        raise unknown_error(_connection_refused(host.strip("[]"), port))

    async def get(self, request: Any, handlers: Any, namespace: str, name: str,
                  out: Any) -> None:
        await self._proxy(namespace, name)

    async def create(self, request: Any, handlers: Any, namespace: str, name: str) -> None:
        await self._proxy(namespace, name)

    async def delete(self, request: Any, handlers: Any, namespace: str, name: str) -> None:
        await self._proxy(namespace, name)

    async def update(self, request: Any, handlers: Any, namespace: str, name: str, out: Any,
                     dry: bool) -> None:
        await self._proxy(namespace, name)

    async def patch(self, request: Any, handlers: Any, namespace: str, name: str, out: Any,
                    dry: bool, ctype: str, body: bytes) -> None:
        await self._proxy(namespace, name)


class PodProxyREST(_ProxyREST):
    """C{pods/<name[:port]>/proxy[/path]} (upstream C{pod.ResourceLocation})."""

    def __init__(self, pods: Store) -> None:
        self.pods = pods

    async def locate(self, namespace: str, ident: str) -> str:
        """
        @return: C{ip:port} (port 80 when the pod declares none).
        @raise StatusError: 400 C{invalid pod request "a:b:c:d"}, 404 (the pod), 400
            C{address not allowed} (no pod IP, or not a global unicast one).
        """
        split = split_scheme_name_port(ident)
        if split is None:
            raise errors.new_bad_request(f'invalid pod request "{ident}"')
        scheme, name, port = split
        pod = await self.pods.get(namespace, name)
        if not port:
            for c in (pod.get("spec") or {}).get("containers") or []:
                ports = (c or {}).get("ports") or []
                if ports:
                    port = str(ports[0].get("containerPort", ""))
                    break
        status = pod.get("status") or {}
        ips = status.get("podIPs") or []
        ip = (ips[0] or {}).get("ip", "") if ips else status.get("podIP", "")
        if not _global_unicast(ip or ""):
            raise errors.new_bad_request("address not allowed")
        host = f"[{ip}]" if ":" in ip else ip
        return f"{host}:{port or (443 if scheme == 'https' else 80)}"


class NodeProxyREST(_ProxyREST):
    """C{nodes/<name[:port]>/proxy[/path]} (upstream C{node.ResourceLocation})."""

    options_kind = "NodeProxyOptions"

    def __init__(self, nodes: Store) -> None:
        self.nodes = nodes

    async def locate(self, namespace: str, ident: str) -> str:
        """
        @raise StatusError: 400 C{invalid node request "..."}, 404 (the node), 500 (no
            address), 400 C{address not allowed} (a loopback, link-local, ... address).
        """
        split = split_scheme_name_port(ident)
        if split is None:
            raise errors.new_bad_request(f'invalid node request "{ident}"')
        _, name, port = split
        host, kubelet_port = await node_connection_info(self.nodes, name)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            if not _global_unicast(host):
                raise errors.new_bad_request("address not allowed")
        wrapped = f"[{host}]" if ":" in host else host
        return f"{wrapped}:{port or kubelet_port}"


class ServiceProxyREST(_ProxyREST):
    """C{services/<name[:port]>/proxy[/path]} (upstream service C{ResourceLocation})."""

    options_kind = "ServiceProxyOptions"

    def __init__(self, services: Store, endpoints_of: Any) -> None:
        """@param endpoints_of: returns the Endpoints L{Store}."""
        self.services = services
        self._endpoints_of = endpoints_of

    async def locate(self, namespace: str, ident: str) -> str:
        """
        @raise StatusError: 400 C{invalid service request "..."}; 404 (the service when a port
            number is given; its Endpoints); 503 C{no service port 81 found for service "s"},
            C{no endpoints available for service "s"}.
        """
        split = split_scheme_name_port(ident)
        if split is None:
            raise errors.new_bad_request(f'invalid service request "{ident}"')
        _, name, port = split
        if port.isdigit():
            svc = await self.services.get(namespace, name)
            for sp in (svc.get("spec") or {}).get("ports") or []:
                if str((sp or {}).get("port")) == str(int(port)):
                    port = sp.get("name") or ""
                    break
            else:
                raise errors.new_service_unavailable(
                    f'no service port {int(port)} found for service "{name}"')
        eps = await self._endpoints_of().get(namespace, name)
        subsets = eps.get("subsets") or []
        if not subsets:
            raise errors.new_service_unavailable(
                f'no endpoints available for service "{name}"')
        for ss in subsets:
            addresses = (ss or {}).get("addresses") or []
            if not addresses:
                continue
            for p in ss.get("ports") or []:
                if ((p or {}).get("name") or "") == port:
                    ip = addresses[0].get("ip", "")
                    host = f"[{ip}]" if ":" in ip else ip
                    return f"{host}:{p.get('port')}"
        raise errors.new_service_unavailable(f'no endpoints available for service "{ident}"')
