# -*- test-case-name: tests.admission.test_builtin -*-
"""
The C{LimitRanger} plugin: upstream C{k8s.io/kubernetes/plugin/pkg/admission/limitranger}
(C{admission.go}).

On pod creates the mutating phase fills each container's (and init container's) missing
requests and limits from the namespace's LimitRanges (C{default}, C{defaultRequest} of the
C{Container} items) and notes what it set in the C{kubernetes.io/limit-ranger} annotation; the
validating phase checks C{min}, C{max} and C{maxLimitRequestRatio} of C{Container} and C{Pod}
items on pod creates, and of C{PersistentVolumeClaim} items on claim creates and updates.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Optional

from zope.interface import implementer

from kubetwist.admission.interfaces import IMutationInterface, IValidationInterface
from kubetwist.admission.plugins.common import aggregate, forbidden
from kubetwist.runtime.quantity import Quantity, QuantityError, parse_quantity

__all__ = ["LimitRanger", "mutate_pod", "validate_pod", "validate_pvc"]

LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"
#: Upstream C{resource.MaxMilliValue}.
_MAX_MILLI_VALUE = (2 ** 63 - 1) // 1000

ResourceList = dict  # resource name -> Quantity


def _quantities(raw: Optional[dict]) -> dict[str, Quantity]:
    out = {}
    for k, v in (raw or {}).items():
        try:
            out[k] = parse_quantity(v)
        except QuantityError:
            continue
    return out


def _value(q: Optional[Quantity]) -> int:
    """Upstream C{Value()}: rounded up to an integer (a zero quantity when absent)."""
    if q is None:
        return 0
    v = q.value
    return -((-v.numerator) // v.denominator)


def _milli(q: Optional[Quantity]) -> int:
    return 0 if q is None else q.milli_value()


def _observed(req: Optional[Quantity], lim: Optional[Quantity],
              enforced: Quantity) -> tuple[int, int, int]:
    """Upstream C{requestLimitEnforcedValues}: milli precision when none overflows."""
    r, li, e = _value(req), _value(lim), _value(enforced)
    if r <= _MAX_MILLI_VALUE and li <= _MAX_MILLI_VALUE and e <= _MAX_MILLI_VALUE:
        return _milli(req), _milli(lim), _milli(enforced)
    return r, li, e


def _min(kind: str, name: str, enforced: Quantity, request: dict, limit: dict) -> Optional[str]:
    req, lim = request.get(name), limit.get(name)
    r, li, e = _observed(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if r < e:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and li < e:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def _max(kind: str, name: str, enforced: Quantity, request: dict, limit: dict) -> Optional[str]:
    req, lim = request.get(name), limit.get(name)
    r, li, e = _observed(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if li > e:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and r > e:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _max_request(kind: str, name: str, enforced: Quantity, request: dict) -> Optional[str]:
    req = request.get(name)
    r, _, e = _observed(req, None, enforced)
    if req is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if r > e:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _ratio(kind: str, name: str, enforced: Quantity, request: dict,
           limit: dict) -> Optional[str]:
    req, lim = request.get(name), limit.get(name)
    r, li, _ = _observed(req, lim, enforced)
    if req is None or r == 0:
        return (f"{name} max limit to request ratio per {kind} is {enforced}, but no request "
                "is specified or request is 0")
    if lim is None or li == 0:
        return (f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is "
                "specified or limit is 0")
    observed = li / r
    display = observed
    maximum = float(_value(enforced))
    if _value(enforced) <= _MAX_MILLI_VALUE:
        observed *= 1000
        maximum = float(_milli(enforced))
    if observed > maximum:
        return (f"{name} max limit to request ratio per {kind} is {enforced}, but provided "
                f"ratio is {display:f}")
    return None


def _check(item: dict, kind: str, request: dict, limit: dict, errs: list[str]) -> None:
    """min, max and maxLimitRequestRatio of one LimitRange item (keys in sorted order: Go's
    map order is random, one order is as good as another)."""
    for check, key in ((_min, "min"), (_max, "max"), (_ratio, "maxLimitRequestRatio")):
        for name, enforced in sorted(_quantities(item.get(key)).items()):
            err = check(kind, name, enforced, request, limit)
            if err:
                errs.append(err)


def _resources(container: dict) -> tuple[dict, dict]:
    res = container.get("resources") or {}
    return _quantities(res.get("requests")), _quantities(res.get("limits"))


def _add(into: dict, items: dict) -> None:
    for k, q in items.items():
        into[k] = Quantity(into[k].value + q.value, into[k].format) if k in into \
            else Quantity(q.value, q.format)


def _max_into(into: dict, items: dict) -> None:
    for k, q in items.items():
        if k not in into or q.value > into[k].value:
            into[k] = Quantity(q.value, q.format)


def _pod_totals(pod: dict, which: int) -> dict:
    """Upstream C{podRequests}/C{podLimits} (C{which} 0 or 1): the containers' sum, sidecar
    init containers added, and the largest of it and each init container (spec only, no
    overhead)."""
    spec = pod.get("spec") or {}
    total: dict = {}
    for c in spec.get("containers") or []:
        _add(total, _resources(c)[which])
    sidecars: dict = {}
    inits: dict = {}
    for c in spec.get("initContainers") or []:
        own = _resources(c)[which]
        if c.get("restartPolicy") == "Always":
            _add(total, own)
            _add(sidecars, own)
            own = dict(sidecars)
        else:
            tmp: dict = {}
            _add(tmp, own)
            _add(tmp, sidecars)
            own = tmp
        _max_into(inits, own)
    _max_into(total, inits)
    return total


def mutate_pod(limit_range: dict, pod: dict) -> None:
    """
    Upstream C{PodMutateLimitFunc}: fill missing requests and limits of every container and
    init container from the C{Container} items' C{defaultRequest} and C{default}, and record
    them in the C{kubernetes.io/limit-ranger} annotation (C{LimitRanger plugin set: cpu,
    memory request for container c; cpu limit for container c}).
    """
    requests: dict = {}
    limits: dict = {}
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") == "Container":
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    notes: list[str] = []
    spec = pod.get("spec") or {}
    for key, prefix in (("containers", "container"), ("initContainers", "init container")):
        for c in spec.get(key) or []:
            res = c.setdefault("resources", {})
            set_req, set_lim = [], []
            for k, v in limits.items():
                if k not in (res.get("limits") or {}):
                    res.setdefault("limits", {})[k] = v
                    set_lim.append(k)
            for k, v in requests.items():
                if k not in (res.get("requests") or {}):
                    res.setdefault("requests", {})[k] = v
                    set_req.append(k)
            who = f"{prefix} {c.get('name', '')}"
            if set_req:
                notes.append(", ".join(sorted(set_req)) + f" request for {who}")
            if set_lim:
                notes.append(", ".join(sorted(set_lim)) + f" limit for {who}")
    if notes:
        meta = pod.setdefault("metadata", {})
        meta.setdefault("annotations", {})[LIMIT_RANGER_ANNOTATION] = \
            "LimitRanger plugin set: " + "; ".join(notes)


def validate_pod(limit_range: dict, pod: dict) -> Optional[str]:
    """Upstream C{PodValidateLimitFunc}: the aggregated message of every violated
    constraint, or C{None}."""
    errs: list[str] = []
    spec = pod.get("spec") or {}
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        kind = item.get("type")
        if kind == "Container":
            for key in ("containers", "initContainers"):
                for c in spec.get(key) or []:
                    req, lim = _resources(c)
                    _check(item, kind, req, lim, errs)
        if kind == "Pod":
            _check(item, kind, _pod_totals(pod, 0), _pod_totals(pod, 1), errs)
    return aggregate(errs) if errs else None


def validate_pvc(limit_range: dict, pvc: dict) -> Optional[str]:
    """Upstream C{PersistentVolumeClaimValidateLimitFunc}: C{min}/C{max} of the
    C{PersistentVolumeClaim} items against C{spec.resources.requests}."""
    errs: list[str] = []
    requests = _quantities(((pvc.get("spec") or {}).get("resources") or {}).get("requests"))
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        kind = item.get("type")
        if kind != "PersistentVolumeClaim":
            continue
        for name, enforced in sorted(_quantities(item.get("min")).items()):
            err = _min(kind, name, enforced, requests, {})
            if err:
                errs.append(err)
        for name, enforced in sorted(_quantities(item.get("max")).items()):
            err = _max_request(kind, name, enforced, requests)
            if err:
                errs.append(err)
    return aggregate(errs) if errs else None


@implementer(IMutationInterface, IValidationInterface)
class LimitRanger:
    """
    The C{LimitRanger} plugin over the LimitRanges a lister returns.

    @ivar list_limit_ranges: C{() -> coroutine of [LimitRange]} (every namespace's).
    """

    name = "LimitRanger"

    def __init__(self, list_limit_ranges: Callable[[], Awaitable[list[dict]]]) -> None:
        self.list_limit_ranges = list_limit_ranges

    def handles(self, operation: str) -> bool:
        return operation in ("CREATE", "UPDATE")

    @staticmethod
    def _supports(a: Any) -> bool:
        """Upstream C{SupportsAttributes}: pod creates and C{resize} updates, claims; no
        other subresource."""
        if a.kind.group != "" or a.object is None:
            return False
        if a.subresource == "resize" and a.kind.kind == "Pod" and a.operation == "UPDATE":
            return True
        if a.subresource:
            return False
        if a.kind.kind == "Pod":
            return a.operation == "CREATE"
        return a.kind.kind == "PersistentVolumeClaim"

    async def _ranges(self, a: Any) -> Optional[list[dict]]:
        if not self._supports(a):
            return None
        old_meta = (a.old_object or {}).get("metadata") or {}
        if old_meta.get("deletionTimestamp"):
            return None  # objects marked for deletion are left alone
        return [lr for lr in await self.list_limit_ranges()
                if (lr.get("metadata") or {}).get("namespace") == a.namespace]

    async def admit(self, a: Any) -> None:
        """Default the pod's resources (see L{mutate_pod})."""
        for lr in await self._ranges(a) or []:
            if a.kind.kind == "Pod":
                mutate_pod(lr, a.object)

    async def validate(self, a: Any) -> None:
        """
        @raise StatusError: 403 C{pods "p" is forbidden: maximum cpu usage per Container is 1,
            but limit is 2} (upstream's texts; several as C{[a, b]}).
        """
        for lr in await self._ranges(a) or []:
            fn = validate_pod if a.kind.kind == "Pod" else validate_pvc
            err = fn(lr, a.object)
            if err:
                raise forbidden(a, err)

