# -*- test-case-name: tests.apis.test_pod_subresources -*-
"""
The pod subresources that write: C{pods/binding} (and the legacy C{bindings} resource) and
C{pods/eviction}, as upstream C{pkg/registry/core/pod/storage/storage.go} (C{BindingREST},
C{LegacyBindingREST}) and C{eviction.go} (C{EvictionREST}) serve them.  Each takes the
decoded body (the handlers decode it as its L{Expect} with the one body decoder,
L{kubetwist.runtime.decode}) and answers C{(code, result, warnings)}.

Both answer C{201} with C{{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status":
"Success", "code": 201}} (upstream's create handler fills in the code of a C{Status} result).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kubetwist.apimachinery.meta import now_rfc3339
from kubetwist.apimachinery.selectors import label_selector_from_dict
from kubetwist.registry.generic.store import ListOptions, Store, interpret_storage_error
from kubetwist.runtime import decode as decodelib
from kubetwist.runtime import errors
from kubetwist.runtime import field as fe
from kubetwist.storage import interfaces as st

__all__ = [
    "MAX_DISRUPTED_POD_SIZE",
    "BindingREST",
    "EvictionREST",
    "LegacyBindingREST",
    "is_pod_ready",
    "unknown_error",
    "update_pod_condition",
    "validate_pod_binding",
]

#: Upstream C{MaxDisruptedPodSize}: evictions are refused once a PDB records more.
MAX_DISRUPTED_POD_SIZE = 2000
#: Upstream C{EvictionsRetry.Steps}: attempts on conflicting writes.
EVICTION_RETRY_STEPS = 20

_EVICTION_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
_MULTIPLE_PDBS = ("This pod has more than one PodDisruptionBudget, which the eviction "
                  "subresource does not support.")


def unknown_error(message: str, code: int = 500) -> errors.StatusError:
    """
    What upstream's C{ErrorToAPIStatus} makes of an error that is no C{StatusError}: C{code}
    (500) with reason C{StatusReasonUnknown}, which is C{""} and so omitted.
    """
    err = errors.make_status(code, "", message)
    err.status.pop("reason", None)
    return err


def _created_status(status: dict | None = None) -> dict:
    """A C{Status} result of a create, with the code upstream's create handler sets."""
    out = dict(status or errors.success_status())
    out.setdefault("code", 201)
    return out


#: The body kinds (L{kubetwist.runtime.decode.Expect}): the legacy core scheme words an
#: unknown kind with its source location.
_LEGACY_SCHEME = "pkg/api/legacyscheme/scheme.go:30"
BINDING = decodelib.Expect("", ("v1",), "Binding", scheme=_LEGACY_SCHEME)
EVICTION = decodelib.Expect("policy", ("v1", "v1beta1"), "Eviction", scheme=_LEGACY_SCHEME)


def _decode_protobuf(body: bytes, group: str, kind: str, versions: tuple[str, ...]) -> dict:
    from kubetwist.runtime import protobuf
    from kubetwist.runtime.types import lookup_kind

    try:
        api_version, env_kind, raw, _, _ = protobuf.split_envelope(body)
    except protobuf.ProtobufError as e:
        raise errors.new_bad_request(str(e)) from None
    # every accepted version has the wire form of the first (Eviction v1beta1 == v1)
    type_name = lookup_kind(group, versions[0], env_kind or kind)
    if type_name is None:
        raise errors.make_status(
            415, "UnsupportedMediaType",
            f"the body of the request was in an unknown format - accepted media types "
            f"include: application/json, application/yaml (protobuf is not supported for "
            f"{env_kind or kind})")
    try:
        fields = protobuf.decode_message(type_name, raw or b"")
    except protobuf.ProtobufError as e:
        raise errors.new_bad_request(str(e)) from None
    out = {"kind": env_kind or kind, "apiVersion": api_version}
    out.update(fields)
    return out


def _ensure_namespace(obj: dict, namespace: str) -> None:
    """Upstream C{EnsureObjectNamespaceMatchesRequestNamespace}."""
    meta = obj["metadata"]
    given = meta.get("namespace") or ""
    if not given:
        meta["namespace"] = namespace
    elif given != namespace:
        raise errors.new_bad_request(
            "the namespace of the provided object does not match the namespace sent on the "
            "request")


def update_pod_condition(status: dict, condition: dict, now: str) -> None:
    """
    Upstream C{podutil.UpdatePodCondition}: set C{condition} (C{{"type", "status",
    ["reason"], ["message"]}}) in C{status["conditions"]}, replacing one of its type; its
    C{lastTransitionTime} is C{now} unless the status is unchanged.
    """
    cond = {"type": condition["type"], "status": condition["status"], "lastProbeTime": None,
            "lastTransitionTime": now}
    for key in ("reason", "message"):
        if condition.get(key):
            cond[key] = condition[key]
    conditions = status.setdefault("conditions", [])
    for i, old in enumerate(conditions):
        if (old or {}).get("type") == cond["type"]:
            if old.get("status") == cond["status"]:
                cond["lastTransitionTime"] = old.get("lastTransitionTime")
            conditions[i] = cond
            return
    conditions.append(cond)


# --------------------------------------------------------------------------------------------
# binding


def validate_pod_binding(binding: dict) -> list[fe.FieldError]:
    """Upstream C{ValidatePodBinding}: C{target.kind} empty or C{Node}, C{target.name} set."""
    target = binding.get("target") or {}
    errs: list[fe.FieldError] = []
    kind = target.get("kind") or ""
    if kind and kind != "Node":
        errs.append(fe.not_supported("target.kind", kind, ["Node", "<empty>"]))
    if not target.get("name"):
        errs.append(fe.required("target.name"))
    return errs


class BindingREST:
    """
    C{POST .../pods/<name>/binding}: assign a pod to a node (upstream C{BindingREST}).

    Follows the protocol of L{kubetwist.registry.generic.scale.ScaleREST} (only C{create}).
    """

    def __init__(self, pods: Store) -> None:
        """
        @param pods: the pod L{Store}; the binding is one C{guaranteed_update} of its key.
        """
        self.pods = pods

    #: The body's kind.
    expect = BINDING

    def decode_protobuf(self, body: bytes) -> dict:
        """A protobuf C{v1 Binding} body."""
        return _decode_protobuf(body, "", "Binding", ("v1",))

    async def create(self, namespace: str, name: str, binding: dict, dry_run: list[str],
                     admission: Callable[[str, str], Any]) -> tuple[int, dict, list[str]]:
        """
        Bind (the decoded C{v1 Binding}): C{201} with a success C{Status}.

        @param admission: C{(name, subresource) -> Admission} of this request.
        @return: C{(code, result, warnings)}.
        """
        _ensure_namespace(binding, namespace)
        await self.bind(namespace, name, binding, admission(name, "binding"), bool(dry_run))
        return 201, _created_status(), []

    async def bind(self, namespace: str, name: str, binding: dict, admission: Any = None,
                   dry_run: bool = False) -> dict:
        """
        Upstream C{BindingREST.Create}: set C{spec.nodeName} of pod C{name} to
        C{binding.target.name} when it has none, merge C{binding.metadata.annotations} into the
        pod's and set its C{PodScheduled} condition C{True}; C{binding.metadata.uid} and
        C{resourceVersion} are preconditions on the pod.

        @return: the bound pod.
        @raise StatusError: 400 C{name in URL does not match name in Binding object}; 500
            (reason omitted) for an invalid binding (C{target.name: Required value});
            404 NotFound (the pod); 409 Conflict on C{pods/binding} (C{pod x is already
            assigned to node "n"}, C{pod x is being deleted, cannot be assigned to a host},
            C{pod x has non-empty .spec.schedulingGates}); 409 Conflict on C{pods} for a
            failed precondition.
        """
        meta = binding.get("metadata") or {}
        if name != (meta.get("name") or ""):
            raise errors.new_bad_request("name in URL does not match name in Binding object")
        errs = validate_pod_binding(binding)
        if errs:
            raise unknown_error(fe.aggregate_message(errs))
        if admission is not None:
            await admission.mutate("CREATE", binding, None)
            await admission.validate("CREATE", binding, None)
        if not name:
            raise errors.new_bad_request("Name parameter required.")
        node = binding["target"]["name"]
        annotations = meta.get("annotations") or {}
        pre = st.Preconditions(uid=meta.get("uid") or None,
                               resource_version=meta.get("resourceVersion") or None)
        now = now_rfc3339(self.pods.clock)
        key = self.pods.key(namespace, name)

        def assign(pod: dict | None) -> dict:
            if pod is None:
                raise st.KeyNotFoundError(key)
            pre.check(key, pod)
            pmeta = pod.setdefault("metadata", {})
            spec = pod.setdefault("spec", {})
            pod_name = pmeta.get("name", name)
            if pmeta.get("deletionTimestamp"):
                raise _BindingRefused(
                    f"pod {pod_name} is being deleted, cannot be assigned to a host")
            if spec.get("nodeName"):
                raise _BindingRefused(
                    f'pod {pod_name} is already assigned to node "{spec["nodeName"]}"')
            if spec.get("schedulingGates"):
                raise _BindingRefused(f"pod {pod_name} has non-empty .spec.schedulingGates")
            spec["nodeName"] = node
            if annotations:
                pmeta.setdefault("annotations", {}).update(annotations)
            update_pod_condition(pod.setdefault("status", {}),
                                 {"type": "PodScheduled", "status": "True"}, now)
            return pod

        try:
            if dry_run:
                current = await self.pods.storage.get(key, ignore_not_found=True)
                return assign(copy.deepcopy(current) if current is not None else None)
            return await self.pods.storage.guaranteed_update(key, _sync(assign))
        except _BindingRefused as e:
            raise errors.new_conflict("", "pods/binding", name, str(e)) from None
        except st.StorageError as e:
            raise interpret_storage_error(e, self.pods.spec, name) from None


class _BindingRefused(Exception):
    """A plain error of upstream's binding update function (a 409 on C{pods/binding})."""


def _sync(fn: Callable[[dict | None], dict]) -> Callable[[dict | None], Any]:
    """C{guaranteed_update} takes an C{async} update function."""
    async def run(current: dict | None) -> dict:
        return fn(current)
    return run


class LegacyBindingREST:
    """
    C{POST /api/v1/namespaces/<ns>/bindings} (upstream C{LegacyBindingREST}): the pod is named
    by the body's C{metadata.name}.
    """

    def __init__(self, binding: Callable[[], BindingREST]) -> None:
        """@param binding: returns the pods' L{BindingREST} (built after this resource)."""
        self._binding = binding

    #: The body's kind.
    expect = BINDING

    def decode_protobuf(self, body: bytes) -> dict:
        """A protobuf C{v1 Binding} body."""
        return _decode_protobuf(body, "", "Binding", ("v1",))

    async def create(self, namespace: str, name: str, binding: dict, dry_run: list[str],
                     admission: Callable[[str, str], Any]) -> tuple[int, dict, list[str]]:
        """Bind the pod the body names: C{(201, success Status, [])}."""
        _ensure_namespace(binding, namespace)
        pod_name = binding["metadata"].get("name") or ""
        await self._binding().bind(namespace, pod_name, binding, admission(pod_name, ""),
                                   bool(dry_run))
        return 201, _created_status(), []


# --------------------------------------------------------------------------------------------
# eviction


def is_pod_ready(pod: dict) -> bool:
    """Upstream C{podutil.IsPodReady}: the C{Ready} condition is C{True}."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if (cond or {}).get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _can_ignore_pdb(pod: dict) -> bool:
    """Upstream C{canIgnorePDB}: terminal, pending or terminating pods."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(
        (pod.get("metadata") or {}).get("deletionTimestamp"))


def _should_enforce_resource_version(pod: dict) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return not (phase in ("Succeeded", "Failed")
                or (pod.get("metadata") or {}).get("deletionTimestamp"))


def _rv_unset(options: dict) -> bool:
    return (options.get("preconditions") or {}).get("resourceVersion") is None


def _with_rv(options: dict, rv: str) -> dict:
    out = copy.deepcopy(options)
    out.setdefault("preconditions", {})
    out["preconditions"] = dict(out["preconditions"] or {}, resourceVersion=rv)
    return out


def _budget_error(message: str, retry_after: int) -> errors.StatusError:
    """Upstream's 429 with a C{DisruptionBudget} cause (C{details.retryAfterSeconds} when > 0)."""
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": message}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return errors.make_status(429, "TooManyRequests", _EVICTION_VIOLATION, details)


def _still_processing(pdb_name: str) -> errors.StatusError:
    """Upstream C{createTooManyRequestsError}."""
    return _budget_error(
        f"The disruption budget {pdb_name} is still being processed by the server.", 10)


def _update_disruption_allowed_condition(pdb: dict, now: str) -> None:
    """Upstream C{pdbhelper.UpdateDisruptionAllowedCondition} (C{meta.SetStatusCondition})."""
    status = pdb.setdefault("status", {})
    allowed = (status.get("disruptionsAllowed") or 0) > 0
    cond = {"type": "DisruptionAllowed", "status": "True" if allowed else "False",
            "observedGeneration": status.get("observedGeneration") or 0,
            "lastTransitionTime": now,
            "reason": "SufficientPods" if allowed else "InsufficientPods", "message": ""}
    if not cond["observedGeneration"]:
        del cond["observedGeneration"]
    conditions = status.setdefault("conditions", [])
    for i, old in enumerate(conditions):
        if (old or {}).get("type") == "DisruptionAllowed":
            if old.get("status") == cond["status"] and old.get("lastTransitionTime"):
                cond["lastTransitionTime"] = old["lastTransitionTime"]
            conditions[i] = cond
            return
    conditions.append(cond)


class EvictionREST:
    """
    C{POST .../pods/<name>/eviction}: delete a pod unless its PodDisruptionBudget forbids it
    (upstream C{EvictionREST}).

    @ivar pdbs: a L{Store} of C{policy/v1} PodDisruptionBudgets over the same storage.
    """

    def __init__(self, pods: Store, pdbs: Store) -> None:
        """
        @param pods: the pods' C{status} subresource L{Store} (upstream evicts through the
            status store, so the C{DisruptionTarget} condition sticks).
        @param pdbs: the PodDisruptionBudget (C{status}) L{Store} over the same storage.
        """
        self.pods = pods
        self.pdbs = pdbs

    #: The body's kind.
    expect = EVICTION

    def decode_protobuf(self, body: bytes) -> dict:
        """A protobuf C{policy/v1} (or C{v1beta1}) C{Eviction} body."""
        return _decode_protobuf(body, "policy", "Eviction", ("v1", "v1beta1"))

    async def create(self, namespace: str, name: str, eviction: dict, dry_run: list[str],
                     admission: Callable[[str, str], Any]) -> tuple[int, dict, list[str]]:
        """Evict (the decoded C{Eviction}): C{(201, the Status, [])}."""
        _ensure_namespace(eviction, namespace)
        status = await self.evict(namespace, name, eviction, dry_run,
                                  admission(name, "eviction"))
        return 201, _created_status(status), []

    async def evict(self, namespace: str, name: str, eviction: dict, dry_run: list[str],
                    admission: Any = None) -> dict:
        """
        Upstream C{EvictionREST.Create}.

        Terminal (C{Succeeded}, C{Failed}), C{Pending} and terminating pods are deleted with no
        budget check.  Otherwise the one PodDisruptionBudget of the pod's namespace whose
        selector matches the pod must allow a disruption: its C{status.disruptionsAllowed} is
        decremented and the pod recorded in C{status.disruptedPods} (one compare-and-swap),
        except for a pod that is not ready when the budget is already met
        (C{currentHealthy >= desiredHealthy > 0}) or its C{unhealthyPodEvictionPolicy} is
        C{AlwaysAllow}: that one is deleted, on condition of its current resourceVersion.
        Before the delete the pod gets the C{DisruptionTarget} condition.

        @param eviction: C{{"metadata": {"name"}, ["deleteOptions": DeleteOptions]}}.
        @param dry_run: the request's C{dryRun} values.
        @return: the C{Status} to answer: success, or (status C{Failure}, code 500) for a pod
            with several budgets.
        @raise StatusError: 400 (name mismatch), 404 (the pod), 429 TooManyRequests with a
            C{DisruptionBudget} cause (no disruption allowed; budget not yet observed:
            C{retryAfterSeconds} 10), 403 Forbidden on C{poddisruptionbudget.policy}
            (negative budget, too many disrupted pods), 409 (failed preconditions), 500
            (C{Non-matching dry-run options in request and content: [All] and []}).
        """
        if name != (eviction["metadata"].get("name") or ""):
            raise errors.new_bad_request("name in URL does not match name in Eviction object")
        options = self._propagate_dry_run(eviction, dry_run)
        dry = bool(options.get("dryRun"))
        if admission is not None:
            await admission.mutate("CREATE", eviction, None)
            await admission.validate("CREATE", eviction, None)

        pod: dict = {}
        for attempt in range(EVICTION_RETRY_STEPS):
            pod = await self.pods.get(namespace, name)
            if not _can_ignore_pdb(pod):
                break
            delete_options = options
            if _should_enforce_resource_version(pod) and _rv_unset(options):
                delete_options = _with_rv(options, pod["metadata"].get("resourceVersion", ""))
            try:
                await self._add_condition_and_delete(namespace, name, delete_options, dry)
            except errors.StatusError as e:
                if e.code == 409 and _rv_unset(options) and attempt + 1 < EVICTION_RETRY_STEPS:
                    continue
                raise
            return errors.success_status()

        pdbs = await self._matching_pdbs(namespace, pod)
        if len(pdbs) > 1:
            return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": _MULTIPLE_PDBS, "code": 500}
        pdb_name = ""
        update_delete_options = False
        if pdbs:
            pdb = pdbs[0]
            pdb_name = pdb["metadata"]["name"]
            pspec, pstatus = pdb.get("spec") or {}, pdb.get("status") or {}
            ready = is_pod_ready(pod)
            desired = pstatus.get("desiredHealthy") or 0
            if (not ready and pspec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
                    or not ready and (pstatus.get("currentHealthy") or 0) >= desired > 0):
                update_delete_options = True
            else:
                await self._check_and_decrement(namespace, pdb, name, dry)

        delete_options = options
        if update_delete_options:
            delete_options = _with_rv(options, pod["metadata"].get("resourceVersion", ""))
        try:
            await self._add_condition_and_delete(namespace, name, delete_options, dry)
        except errors.StatusError as e:
            if e.code == 409 and update_delete_options and _rv_unset(options):
                raise _still_processing(pdb_name) from None
            raise
        return errors.success_status()

    @staticmethod
    def _propagate_dry_run(eviction: dict, dry_run: list[str]) -> dict:
        """Upstream C{propagateDryRun}: the DeleteOptions the pod is deleted with."""
        options = eviction.get("deleteOptions")
        if options is None:
            return {"dryRun": list(dry_run)} if dry_run else {}
        options = copy.deepcopy(options)
        own = options.get("dryRun") or []
        if not own:
            if dry_run:
                options["dryRun"] = list(dry_run)
            return options
        if dry_run and list(dry_run) != list(own):
            raise unknown_error(
                f"Non-matching dry-run options in request and content: "
                f"[{' '.join(dry_run)}] and [{' '.join(own)}]")
        return options

    async def _matching_pdbs(self, namespace: str, pod: dict) -> list[dict]:
        """Upstream C{getPodDisruptionBudgets}: an empty or invalid selector matches nothing."""
        listed = await self.pdbs.list(namespace, ListOptions())
        labels = (pod.get("metadata") or {}).get("labels") or {}
        out = []
        for pdb in listed.get("items") or []:
            try:
                selector = label_selector_from_dict((pdb.get("spec") or {}).get("selector"))
            except errors.StatusError:
                continue
            if not selector.empty() and selector.matches(labels):
                out.append(pdb)
        return out

    async def _check_and_decrement(self, namespace: str, pdb: dict, pod_name: str,
                                   dry_run: bool) -> None:
        """Upstream C{checkAndDecrement}, inside one compare-and-swap of the budget."""
        name = pdb["metadata"]["name"]
        now = now_rfc3339(self.pods.clock)

        def decrement(current: dict | None) -> dict:
            if current is None:
                raise st.KeyNotFoundError(self.pdbs.key(namespace, name))
            status = current.setdefault("status", {})
            meta = current.get("metadata") or {}
            if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0):
                raise _still_processing(name)
            allowed = status.get("disruptionsAllowed") or 0
            if allowed < 0:
                raise errors.new_forbidden("policy", "poddisruptionbudget", name,
                                           "pdb disruptions allowed is negative")
            if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
                raise errors.new_forbidden(
                    "policy", "poddisruptionbudget", name,
                    "DisruptedPods map too big - too many evictions not confirmed by PDB "
                    "controller")
            if allowed == 0:
                raise _budget_error(
                    f"The disruption budget {name} needs {status.get('desiredHealthy') or 0} "
                    f"healthy pods and has {status.get('currentHealthy') or 0} currently", 0)
            status["disruptionsAllowed"] = allowed - 1
            if allowed - 1 == 0:
                _update_disruption_allowed_condition(current, now)
            disrupted = status.get("disruptedPods") or {}
            disrupted[pod_name] = now
            status["disruptedPods"] = disrupted
            return current

        key = self.pdbs.key(namespace, name)
        try:
            if dry_run:
                current = await self.pdbs.storage.get(key, ignore_not_found=True)
                decrement(copy.deepcopy(current) if current is not None else None)
                return
            await self.pdbs.storage.guaranteed_update(key, _sync(decrement))
        except st.StorageError as e:
            raise interpret_storage_error(e, self.pdbs.spec, name) from None

    async def _add_condition_and_delete(self, namespace: str, name: str, options: dict,
                                        dry_run: bool) -> None:
        """
        Upstream C{addConditionAndDeletePod}: unless a dry run, set the pod's
        C{DisruptionTarget} condition (C{EvictionByEvictionAPI}) first, checking the
        delete preconditions against the latest pod, then delete it with C{options}.
        """
        if not dry_run:
            pre = options.get("preconditions") or {}
            now = now_rfc3339(self.pods.clock)
            key = self.pods.key(namespace, name)

            def add_condition(pod: dict | None) -> dict:
                if pod is None:
                    raise st.KeyNotFoundError(key)
                meta = pod.get("metadata") or {}
                uid, rv = pre.get("uid"), pre.get("resourceVersion")
                if uid and uid != meta.get("uid"):
                    raise errors.new_conflict(
                        "", "Pod", name,
                        f"the UID in the precondition ({uid}) does not match the UID in record "
                        f"({meta.get('uid', '')}). The object might have been deleted and then "
                        f"recreated")
                if rv and rv != meta.get("resourceVersion"):
                    raise errors.new_conflict(
                        "", "Pod", name,
                        f"the ResourceVersion in the precondition ({rv}) does not match the "
                        f"ResourceVersion in record ({meta.get('resourceVersion', '')}). The "
                        f"object might have been modified")
                update_pod_condition(pod.setdefault("status", {}), {
                    "type": "DisruptionTarget", "status": "True",
                    "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"},
                    now)
                return pod

            try:
                updated = await self.pods.storage.guaranteed_update(key, _sync(add_condition))
            except st.StorageError as e:
                raise interpret_storage_error(e, self.pods.spec, name) from None
            if not _rv_unset(options):
                options = _with_rv(options, updated["metadata"].get("resourceVersion", ""))
        await self.pods.delete(namespace, name, options, dry_run=dry_run)
