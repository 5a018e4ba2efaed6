# -*- test-case-name: tests.admission.test_resourcequota -*-
"""
Quota evaluators: upstream C{k8s.io/apiserver/pkg/quota/v1/generic} (the object count
evaluator, C{Matches}, C{CalculateUsageStats}), C{k8s.io/apiserver/pkg/quota/v1}
(C{CalculateUsage}) and C{k8s.io/kubernetes/pkg/quota/v1/evaluator/core} (pods, services,
persistentvolumeclaims and the legacy object count names), with upstream's ignored resources
(C{pkg/quota/v1/install}).

An evaluator knows, for one resource: which quota resource names it charges
(C{matching_resources}), which requests it charges (C{handles}), the usage of one object
(C{usage}), the scopes an object falls in (C{matches_scope}) and the per-object constraints
(C{constraints}).  Objects are v1 dicts as stored.  A scope selector requirement is a
C{ScopedResourceSelectorRequirement} dict (C{scopeName}, C{operator}, C{values}).
"""

from __future__ import annotations

import datetime
from fractions import Fraction
from typing import Any, Awaitable, Callable, Iterable, Optional

from kubetwist.admission.plugins.resourcequota import resources as rq
from kubetwist.admission.plugins.resourcequota.resources import ResourceList

__all__ = [
    "IGNORED_RESOURCES", "ObjectCountEvaluator", "PodEvaluator", "PersistentVolumeClaimEvaluator",
    "Registry", "ServiceEvaluator", "calculate_usage", "matches", "object_count_name",
    "scope_selectors",
]

#: Upstream C{install.DefaultIgnoredResources()}: never charged.
IGNORED_RESOURCES = frozenset({
    ("", "bindings"), ("", "componentstatuses"),
    ("authentication.k8s.io", "tokenreviews"), ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("", "events"), ("events.k8s.io", "events"),
})

#: Upstream's legacy aliases of object counts (C{core.legacyObjectCountAliases}).
LEGACY_ALIASES = {
    ("", "configmaps"): "configmaps",
    ("", "resourcequotas"): "resourcequotas",
    ("", "replicationcontrollers"): "replicationcontrollers",
    ("", "secrets"): "secrets",
}

STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
REQUESTS_PREFIX = "requests."
HUGEPAGES_PREFIX = "hugepages-"


def object_count_name(group: str, resource: str) -> str:
    """Upstream C{ObjectCountQuotaResourceNameFor}: C{count/<resource>[.<group>]}."""
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def scope_selectors(quota: dict) -> list[dict]:
    """Upstream C{getScopeSelectorsFromQuota}: C{spec.scopes} as C{Exists} requirements, then
    C{spec.scopeSelector.matchExpressions}."""
    spec = quota.get("spec") or {}
    out = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    out += list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])
    return out


def _meta(obj: Optional[dict]) -> dict:
    return (obj or {}).get("metadata") or {}


class Evaluator:
    """
    The common part of upstream's C{quota.Evaluator}: no scopes, no constraints.

    @ivar group_resource: C{(group, resource)} charged.
    """

    group_resource: tuple[str, str] = ("", "")

    def handles(self, operation: str, subresource: str, obj: Any = None,
                old: Any = None) -> bool:
        """Upstream C{Handles}: whether a request of C{operation} on C{subresource} is
        charged."""
        return not subresource and operation == "CREATE"

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        """Upstream C{MatchingResources}: the quota resource names this evaluator charges."""
        raise NotImplementedError

    def matches_scope(self, selector: dict, obj: dict) -> bool:
        """Upstream C{MatchesScopeFunc}; the default matches no scope.

        @raise ValueError: a selector that cannot be evaluated (its message is upstream's)."""
        return False

    def matching_scopes(self, obj: dict, selectors: list[dict]) -> list[dict]:
        """Upstream C{MatchingScopes}: the selectors C{obj} matches (none without scopes)."""
        return []

    def uncovered_quota_scopes(self, limited: list[dict], matched: list[dict]) -> list[dict]:
        """Upstream C{UncoveredQuotaScopes} (none without scopes)."""
        return []

    def constraints(self, required: list[str], obj: dict) -> Optional[str]:
        """Upstream C{Constraints}: an error text, or C{None}."""
        return None

    def usage(self, obj: dict, now: float = 0.0) -> ResourceList:
        """Upstream C{Usage}: what C{obj} charges (C{now}: epoch seconds, for pods)."""
        raise NotImplementedError

    def matches(self, quota: dict, obj: dict) -> bool:
        """Upstream C{Matches}: C{quota} has a name this evaluator charges and C{obj} is in
        all of its scopes."""
        return matches(quota, obj, self)

    def usage_stats(self, items: Iterable[dict], scopes: list[str], names: list[str],
                    scope_selector: Optional[dict], now: float = 0.0) -> ResourceList:
        """
        Upstream C{CalculateUsageStats} over C{items} (the namespace's objects): every name
        of C{names} (zero when nothing charges it) plus what the objects in all the scopes
        charge.
        """
        used: ResourceList = {n: rq.new(0) for n in names}
        selectors = [{"scopeName": s, "operator": "Exists"} for s in scopes]
        selectors += list((scope_selector or {}).get("matchExpressions") or [])
        for item in items:
            try:
                if all(self.matches_scope(s, item) for s in selectors):
                    used = rq.add(used, self.usage(item, now))
            except ValueError:
                # upstream stops counting at an error and returns what it has
                return used
        return used

    def _scoped(self, obj: dict, selectors: list[dict]) -> list[dict]:
        out = []
        for selector in selectors:
            try:
                matched = self.matches_scope(selector, obj)
            except ValueError as e:
                raise ValueError(
                    f"error on matching scope {_go_selector(selector)}: {e}") from None
            if matched:
                out.append(selector)
        return out


def matches(quota: dict, obj: dict, evaluator: Evaluator) -> bool:
    """Upstream C{generic.Matches}."""
    hard = list(((quota.get("status") or {}).get("hard") or {}).keys())
    if not evaluator.matching_resources(hard):
        return False
    return all(evaluator.matches_scope(s, obj) for s in scope_selectors(quota))


def _go_selector(selector: dict) -> str:
    """Go's C{%v} of a C{ScopedResourceSelectorRequirement}: C{{ScopeName Op [values]}}."""
    return "{%s %s [%s]}" % (selector.get("scopeName", ""), selector.get("operator", ""),
                             " ".join(selector.get("values") or []))


class ObjectCountEvaluator(Evaluator):
    """Upstream C{generic.NewObjectCountEvaluator}: C{count/<resource>.<group>} (and an
    alias such as C{secrets}), one per created object."""

    def __init__(self, group: str, resource: str, alias: str = "") -> None:
        self.group_resource = (group, resource)
        self.names = [object_count_name(group, resource)] + ([alias] if alias else [])

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return rq.intersection(names, self.names)

    def usage(self, obj: dict, now: float = 0.0) -> ResourceList:
        return {n: rq.new(1) for n in self.names}


# --- pods ------------------------------------------------------------------------------------
POD_RESOURCES = [
    "count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods",
]
POD_RESOURCE_PREFIXES = ["hugepages-", "requests.hugepages-"]
#: Upstream C{validationSet}: quota'd pods must set these in every container.
VALIDATION_SET = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                  "limits.memory"}
_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods", "storage")


def _is_native(name: str) -> bool:
    """Upstream C{helper.IsNativeResource}: no domain, or a C{kubernetes.io/} one."""
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    """Upstream C{helper.IsExtendedResourceName}: not native, not C{requests.}-prefixed, and a
    valid qualified name (not re-checked: the pod was validated)."""
    return not _is_native(name) and not name.startswith(REQUESTS_PREFIX)


def _is_extended_for_quota(name: str) -> bool:
    """Upstream C{isExtendedResourceNameForQuota}."""
    return not _is_native(name) and name.startswith(REQUESTS_PREFIX)


def _resource_map(raw: Any) -> ResourceList:
    return rq.parse_list(raw if isinstance(raw, dict) else {})


def _max_into(into: ResourceList, other: ResourceList) -> None:
    for k, v in other.items():
        if k not in into or v.cmp(into[k]) > 0:
            into[k] = rq._copy(v)


def _add_into(into: ResourceList, other: ResourceList) -> None:
    for k, v in other.items():
        into[k] = rq.add({k: into[k]}, {k: v})[k] if k in into else rq._copy(v)


def _pod_aggregate(pod: dict, field: str) -> ResourceList:
    """Upstream C{resourcehelper.PodRequests} / C{PodLimits} (C{field} C{requests} or
    C{limits}): the containers' sum, raised to the init containers' peak (sidecars, init
    containers with C{restartPolicy: Always}, stay counted), plus the pod overhead (for limits
    only on resources that have a limit)."""
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for c in spec.get("containers") or []:
        _add_into(total, _resource_map(((c or {}).get("resources") or {}).get(field)))
    restartable: ResourceList = {}
    init_peak: ResourceList = {}
    for c in spec.get("initContainers") or []:
        own = _resource_map(((c or {}).get("resources") or {}).get(field))
        if (c or {}).get("restartPolicy") == "Always":
            _add_into(total, own)
            _add_into(restartable, own)
            current = dict(restartable)
        else:
            current = dict(own)
            _add_into(current, restartable)
        _max_into(init_peak, current)
    _max_into(total, init_peak)
    overhead = _resource_map(spec.get("overhead"))
    if field == "requests":
        _add_into(total, overhead)
    else:
        for k, v in overhead.items():
            if k in total:
                _add_into(total, {k: v})
    return total


def _compute_usage(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """Upstream C{podComputeUsageHelper}."""
    out: ResourceList = {"pods": rq.new(1)}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            out[name] = requests[name]
            out["requests." + name] = requests[name]
        if name in limits:
            out["limits." + name] = limits[name]
    for name, value in requests.items():
        if name.startswith(HUGEPAGES_PREFIX):
            out[name] = value
            out[REQUESTS_PREFIX + name] = value
        if _is_extended(name):
            out[REQUESTS_PREFIX + name] = value
    return out


def _timestamp(raw: Any) -> Optional[float]:
    if not isinstance(raw, str):
        return None
    try:
        return datetime.datetime.strptime(raw, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        return None


def quota_v1_pod(pod: dict, now: float) -> bool:
    """Upstream C{QuotaV1Pod}: not terminal (C{Failed}/C{Succeeded}), and not past its
    deletion grace period."""
    if ((pod.get("status") or {}).get("phase")) in ("Failed", "Succeeded"):
        return False
    meta = _meta(pod)
    deleted = _timestamp(meta.get("deletionTimestamp"))
    grace = meta.get("deletionGracePeriodSeconds")
    if deleted is not None and isinstance(grace, int) and now > deleted + grace:
        return False
    return True


def is_best_effort(pod: dict) -> bool:
    """Upstream C{qos.GetPodQOS(pod) == BestEffort}: C{status.qosClass} when set, else no
    container (init containers included) asks for or limits cpu or memory above zero."""
    qos = (pod.get("status") or {}).get("qosClass")
    if qos:
        return qos == "BestEffort"
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = (c or {}).get("resources") or {}
        for field in ("requests", "limits"):
            for name, value in _resource_map(res.get(field)).items():
                if name in ("cpu", "memory") and value.value > 0:
                    return False
    return True


def is_terminating(pod: dict) -> bool:
    """Upstream C{isTerminating}: C{spec.activeDeadlineSeconds >= 0}."""
    ads = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    return isinstance(ads, int) and ads >= 0


def _cross_namespace_terms(terms: Any, weighted: bool) -> bool:
    for t in terms or []:
        term = ((t or {}).get("podAffinityTerm") if weighted else t) or {}
        if term.get("namespaces") or term.get("namespaceSelector") is not None:
            return True
    return False


def uses_cross_namespace_pod_affinity(pod: dict) -> bool:
    """Upstream C{usesCrossNamespacePodAffinity}: a pod (anti-)affinity term that names
    namespaces or has a namespace selector."""
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind) or {}
        if _cross_namespace_terms(a.get("requiredDuringSchedulingIgnoredDuringExecution"),
                                  False):
            return True
        if _cross_namespace_terms(a.get("preferredDuringSchedulingIgnoredDuringExecution"),
                                  True):
            return True
    return False


def _selector_matches(selector: dict, labels: dict[str, str]) -> bool:
    """Upstream C{ScopedResourceSelectorRequirementsAsSelector(...).Matches(labels)}.

    @raise ValueError: an operator a label selector does not know."""
    key = selector.get("scopeName", "")
    op = selector.get("operator", "")
    values = selector.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    raise ValueError(f"failed to parse and convert selector: {op!r} is not a valid label "
                     "selector operator")


class PodEvaluator(Evaluator):
    """Upstream C{core.NewPodEvaluator}."""

    group_resource = ("", "pods")

    def handles(self, operation: str, subresource: str, obj: Any = None,
                old: Any = None) -> bool:
        # v1.32: creates only (the resize subresource needs InPlacePodVerticalScaling, off)
        return not subresource and operation == "CREATE"

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        names = list(names)
        out = rq.intersection(names, POD_RESOURCES)
        for name in names:
            if rq.contains_prefix(POD_RESOURCE_PREFIXES, name):
                out.append(name)
            if _is_extended_for_quota(name):
                out.append(name)
        return out

    def matches_scope(self, selector: dict, obj: dict) -> bool:
        scope = selector.get("scopeName")
        if scope == "Terminating":
            return is_terminating(obj)
        if scope == "NotTerminating":
            return not is_terminating(obj)
        if scope == "BestEffort":
            return is_best_effort(obj)
        if scope == "NotBestEffort":
            return not is_best_effort(obj)
        if scope == "PriorityClass":
            pc = (obj.get("spec") or {}).get("priorityClassName") or ""
            if selector.get("operator") == "Exists":
                return bool(pc)
            return _selector_matches(selector, {"PriorityClass": pc} if pc else {})
        if scope == "CrossNamespacePodAffinity":
            return uses_cross_namespace_pod_affinity(obj)
        return False

    def matching_scopes(self, obj: dict, selectors: list[dict]) -> list[dict]:
        return self._scoped(obj, selectors)

    def uncovered_quota_scopes(self, limited: list[dict], matched: list[dict]) -> list[dict]:
        names = {m.get("scopeName") for m in matched}
        return [s for s in limited if s.get("scopeName") not in names]

    def constraints(self, required: list[str], obj: dict) -> Optional[str]:
        """Upstream C{podEvaluator.Constraints}: when the quota limits cpu or memory, every
        container must request (or limit) them: C{must specify limits.cpu for: c1,c2; ...}."""
        needed = set(required) & VALIDATION_SET
        missing: dict[str, set[str]] = {}
        spec = obj.get("spec") or {}
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            res = (c or {}).get("resources") or {}
            have = set(_compute_usage(_resource_map(res.get("requests")),
                                      _resource_map(res.get("limits"))))
            for name in needed - have:
                missing.setdefault(name, set()).add((c or {}).get("name", ""))
        if not missing:
            return None
        parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
        return "must specify " + "; ".join(parts)

    def usage(self, obj: dict, now: float = 0.0) -> ResourceList:
        """Upstream C{PodUsageFunc}: C{count/pods} always; compute resources while the pod is
        not terminal."""
        out: ResourceList = {"count/pods": rq.new(1)}
        if not quota_v1_pod(obj, now):
            return out
        return rq.add(out, _compute_usage(_pod_aggregate(obj, "requests"),
                                          _pod_aggregate(obj, "limits")))


# --- services --------------------------------------------------------------------------------
SERVICE_RESOURCES = ["count/services", "services", "services.nodeports",
                     "services.loadbalancers"]


class ServiceEvaluator(Evaluator):
    """Upstream C{core.NewServiceEvaluator}: creates and updates (a type may change)."""

    group_resource = ("", "services")

    def handles(self, operation: str, subresource: str, obj: Any = None,
                old: Any = None) -> bool:
        return operation in ("CREATE", "UPDATE")

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        return rq.intersection(names, SERVICE_RESOURCES)

    def usage(self, obj: dict, now: float = 0.0) -> ResourceList:
        spec = obj.get("spec") or {}
        ports = spec.get("ports") or []
        out: ResourceList = {"count/services": rq.new(1), "services": rq.new(1),
                             "services.loadbalancers": rq.new(0),
                             "services.nodeports": rq.new(0)}
        kind = spec.get("type")
        if kind == "NodePort":
            out["services.nodeports"] = rq.new(len(ports))
        elif kind == "LoadBalancer":
            if spec.get("allocateLoadBalancerNodePorts") is False:
                out["services.nodeports"] = rq.new(
                    sum(1 for p in ports if (p or {}).get("nodePort")))
            else:
                out["services.nodeports"] = rq.new(len(ports))
            out["services.loadbalancers"] = rq.new(1)
        return out


# --- persistentvolumeclaims ------------------------------------------------------------------
PVC_RESOURCES = ["persistentvolumeclaims", "requests.storage"]


def claim_class(pvc: dict) -> str:
    """Upstream C{storagehelpers.GetPersistentVolumeClaimClass}: the beta annotation, else
    C{spec.storageClassName}."""
    ann = _meta(pvc).get("annotations") or {}
    if "volume.beta.kubernetes.io/storage-class" in ann:
        return ann["volume.beta.kubernetes.io/storage-class"]
    return (pvc.get("spec") or {}).get("storageClassName") or ""


class PersistentVolumeClaimEvaluator(Evaluator):
    """Upstream C{core.NewPersistentVolumeClaimEvaluator} (VolumeAttributesClass off)."""

    group_resource = ("", "persistentvolumeclaims")

    def handles(self, operation: str, subresource: str, obj: Any = None,
                old: Any = None) -> bool:
        if not subresource:
            return operation in ("CREATE", "UPDATE")
        # upstream compares two freshly allocated pointers, so every status update is
        # handled (its usage delta is then usually zero)
        return subresource == "status"

    def matching_resources(self, names: Iterable[str]) -> list[str]:
        out = []
        for name in names:
            if name == "count/persistentvolumeclaims" or name in PVC_RESOURCES:
                out.append(name)
                continue
            if any(name.endswith(STORAGE_CLASS_SUFFIX + r) for r in PVC_RESOURCES):
                out.append(name)
        return out

    def usage(self, obj: dict, now: float = 0.0) -> ResourceList:
        out: ResourceList = {"persistentvolumeclaims": rq.new(1),
                             "count/persistentvolumeclaims": rq.new(1)}
        cls = claim_class(obj)
        if cls:
            out[cls + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims"] = rq.new(1)
        storage = self._storage(obj)
        if storage is not None:
            out["requests.storage"] = storage
            if cls:
                out[cls + STORAGE_CLASS_SUFFIX + "requests.storage"] = storage
        return out

    @staticmethod
    def _storage(pvc: dict) -> Any:
        """Upstream C{getStorageUsage}: the request (whole bytes, rounded up), or the
        allocated size when larger."""

        def whole(q: Any) -> Any:
            if q.value.denominator != 1:
                return type(q)(Fraction(-((-q.value.numerator) // q.value.denominator)),
                               q.format)
            return q

        requests = ((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}
        result = rq.quantity_of(requests["storage"]) if "storage" in requests else None
        if result is not None:
            result = whole(result)
        allocated = (pvc.get("status") or {}).get("allocatedResources") or {}
        if not allocated:
            return result
        alloc = rq.quantity_of(allocated.get("storage")) if "storage" in allocated else None
        if result is not None and alloc is not None and alloc.cmp(result) > 0:
            result = whole(alloc)
        return result


class Registry:
    """
    Upstream C{generic.NewRegistry(install.NewEvaluators(...))}: the pod, service and claim
    evaluators and the legacy object counts; any other resource gets an object count
    evaluator on first use (upstream adds one in admission and through discovery in the
    controller).
    """

    def __init__(self) -> None:
        self.evaluators: dict[tuple[str, str], Evaluator] = {}
        for ev in (PodEvaluator(), ServiceEvaluator(), PersistentVolumeClaimEvaluator()):
            self.evaluators[ev.group_resource] = ev
        for gr, alias in LEGACY_ALIASES.items():
            self.evaluators[gr] = ObjectCountEvaluator(gr[0], gr[1], alias)

    def get(self, group: str, resource: str, create: bool = True) -> Optional[Evaluator]:
        """The evaluator of C{(group, resource)}; an object count one is made for a resource
        without one (unless C{create} is false or the resource is ignored)."""
        ev = self.evaluators.get((group, resource))
        if ev is None and create and (group, resource) not in IGNORED_RESOURCES:
            ev = self.evaluators[(group, resource)] = ObjectCountEvaluator(group, resource)
        return ev

    def for_names(self, names: Iterable[str]) -> list[Evaluator]:
        """The evaluators that charge any of the quota resource names C{names}, object count
        ones for C{count/<resource>.<group>} names included."""
        names = list(names)
        for name in names:
            if name.startswith("count/"):
                resource, _, group = name[len("count/"):].partition(".")
                if (group, resource) not in IGNORED_RESOURCES:
                    self.get(group, resource)
        return [ev for ev in self.evaluators.values() if ev.matching_resources(names)]


ListFunc = Callable[[Evaluator], Awaitable[list[dict]]]


async def calculate_usage(quota: dict, registry: Registry, list_items: ListFunc,
                          now: float = 0.0) -> tuple[ResourceList, list[str]]:
    """
    Upstream C{quota.CalculateUsage} for C{quota} (a ResourceQuota dict, its C{spec.hard},
    C{spec.scopes}, C{spec.scopeSelector}): the usage of every hard name an evaluator charges.

    @param list_items: C{async evaluator -> [object]}: the namespace's objects of the
        evaluator's resource.
    @return: C{(usage, errors)}: names whose listing failed are left out, with their error
        texts.
    """
    spec = quota.get("spec") or {}
    hard = list((spec.get("hard") or {}).keys())
    evaluators = registry.for_names(hard)
    potential: list[str] = []
    for ev in evaluators:
        potential += ev.matching_resources(hard)
    matched = rq.intersection(hard, potential)
    used: ResourceList = {}
    errs: list[str] = []
    for ev in evaluators:
        names = ev.matching_resources(matched)
        if not names:
            continue
        try:
            items = await list_items(ev)
        except Exception as e:  # noqa: BLE001 -- upstream aggregates and goes on
            errs.append(f"failed to list content: {e}")
            matched = rq.difference(matched, names)
            continue
        used = rq.add(used, ev.usage_stats(items, list(spec.get("scopes") or []), names,
                                          spec.get("scopeSelector"), now))
    return rq.mask(used, matched), errs
