# -*- test-case-name: tests.apimachinery.test_fieldmanager -*-
"""
The C{metadata.managedFields} bookkeeping: C{k8s.io/apimachinery/pkg/util/managedfields}
(C{internal/fieldmanager.go}, C{structuredmerge.go}, C{managedfieldsupdater.go},
C{stripmeta.go}, C{skipnonapplied.go}, C{lastappliedmanager.go}, C{lastappliedupdater.go},
C{capmanagers.go}, C{conflict.go}) and the handler helpers of
C{k8s.io/apiserver/pkg/endpoints/handlers} (C{managerOrUserAgent}, C{ValidatePatchOptions}).

A L{FieldManager} serves one kind in one version (and subresource); the handlers call
L{FieldManager.update} on every create/update/non-apply patch and L{FieldManager.apply} for
C{application/apply-patch+yaml}.
"""

from __future__ import annotations

import copy
import json
import time as _time
import unicodedata
from typing import Any

from kubetwist.apimachinery.fieldmanager import merge as m
from kubetwist.apimachinery.fieldmanager import typed
from kubetwist.apimachinery.fieldmanager.fieldpath import Set, field_element, path_string
from kubetwist.apimachinery.validation import validate_field_manager
from kubetwist.runtime import errors
from kubetwist.runtime import field as fe
from kubetwist.runtime.field import Path

__all__ = [
    "LAST_APPLIED_ANNOTATION",
    "MAX_UPDATE_MANAGERS",
    "FieldManager",
    "conflict_error",
    "manager_or_user_agent",
    "owns_field",
    "validate_patch_options",
]

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
#: Update managers kept before the oldest are merged (upstream C{DefaultMaxUpdateManagers}).
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"
BEFORE_FIRST_APPLY = "before-first-apply"
FIELD_MANAGER_MAX_LENGTH = 128

_F = field_element
#: Fields never recorded as managed (upstream C{stripMetaManager}).
STRIP_SET = Set.of(
    (_F("apiVersion"),), (_F("kind"),), (_F("metadata"),),
    *[(_F("metadata"), _F(n)) for n in ("name", "namespace", "creationTimestamp", "selfLink",
                                        "uid", "clusterName", "generation", "managedFields",
                                        "resourceVersion")],
)


def _is_print(ch: str) -> bool:
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def manager_or_user_agent(field_manager: str, user_agent: str) -> str:
    """
    The manager name of a write (upstream C{managerOrUserAgent}): C{fieldManager} when given,
    else the User-Agent up to its first C{/}, printable characters only, at most 128; a request
    without a usable User-Agent is C{unknown}, as kube-apiserver v1.32 records it (recorded in
    C{tests/vectors/}).
    """
    if field_manager:
        return field_manager
    out = []
    for ch in user_agent.split("/")[0]:
        if not _is_print(ch):
            continue
        if len(out) >= FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
    return "".join(out) or "unknown"


def owns_field(obj: dict, dotted: str) -> bool:
    """
    Whether some entry of C{obj}'s C{metadata.managedFields} owns the field at C{dotted}
    (C{.spec.replicas}, object keys only).

    A write through C{/scale} is recorded only when this holds for the replicas path: upstream's
    ScaleHandler gives the Scale the entries that own it, and the field manager does not track an
    update of an existing object without managed fields (C{skipNonAppliedManager}); so scaling an
    object whose replica count nobody owns records nothing (C{tests/vectors/crd.jsonl}).
    """
    path = tuple(_F(p) for p in dotted.strip(".").split(".") if p)
    decoded = FieldManager.decode((obj.get("metadata") or {}).get("managedFields") or [])
    if decoded is None:
        return False
    return any(vs.set.has(path) for vs in decoded[0].values())


def validate_patch_options(field_manager: str, force: bool | None, apply: bool,
                           kind: str = "PatchOptions") -> None:
    """
    Upstream C{ValidatePatchOptions} (and C{ValidateFieldManager} for create/update options).

    @raise StatusError: 422 C{Invalid} C{PatchOptions.meta.k8s.io ""}: C{force} on a non-apply
        patch, a missing C{fieldManager} on apply, a name over 128 characters or with
        unprintable characters.
    """
    errs = []
    if kind == "PatchOptions":
        if not apply:
            if force is not None:
                errs.append(fe.forbidden("force", "may not be specified for non-apply patch"))
        elif not field_manager:
            errs.append(fe.required("fieldManager", "is required for apply patch"))
    errs += validate_field_manager(field_manager, Path("fieldManager"))
    if errs:
        raise errors.new_invalid("meta.k8s.io", kind, "", errs)


# --- manager ids ------------------------------------------------------------------------------
def _manager_id(manager: str, operation: str, api_version: str, subresource: str) -> tuple:
    """Upstream C{BuildManagerIdentifier}: Apply entries ignore the apiVersion."""
    return (manager, operation, "" if operation == "Apply" else api_version, subresource)


def print_manager(mid: tuple) -> str:
    """How a conflict names a manager (upstream C{printManager})."""
    manager, operation, api_version, subresource = mid
    out = json.dumps(manager, ensure_ascii=False)
    if subresource:
        out += f" with subresource {json.dumps(subresource)}"
    if operation == "Update":
        out += f" using {api_version}"
    return out


def conflict_error(conflicts: list) -> errors.StatusError:
    """
    409 C{Conflict} of an apply (upstream C{internal.NewConflictError}): one
    C{FieldManagerConflict} cause per field; the message lists them
    (C{Apply failed with 1 conflict: conflict with "m" using apps/v1: .spec.replicas}).
    """
    causes = [{"reason": "FieldManagerConflict",
               "message": f"conflict with {print_manager(c.manager)}",
               "field": path_string(c.path)} for c in conflicts]
    if len(conflicts) == 1:
        c = conflicts[0]
        message = (f"Apply failed with 1 conflict: conflict with {print_manager(c.manager)}: "
                   f"{path_string(c.path)}")
    else:
        by: dict = {}
        for c in conflicts:
            by.setdefault(c.manager, []).append(c.path)
        lines = []
        for mid in sorted(by, key=lambda k: json.dumps(_encode_id(k), separators=(",", ":"))):
            lines.append(f"conflicts with {print_manager(mid)}:")
            lines.extend(f"- {path_string(p)}" for p in by[mid])
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return errors.make_status(409, "Conflict", message, {"causes": causes})


def _encode_id(mid: tuple) -> dict:
    manager, operation, api_version, subresource = mid
    out = {"manager": manager, "operation": operation}
    if api_version:
        out["apiVersion"] = api_version
    if subresource:
        out["subresource"] = subresource
    return out


# --- the field manager ------------------------------------------------------------------------
class FieldManager:
    """
    Field management for one kind served at one group-version (and subresource).

    @ivar schema: the kind's L{typed.Node}.
    @ivar api_version: C{group/version} (C{v1} for the core group).
    @ivar subresource: C{""}, C{"status"} or C{"scale"}.
    @ivar reset_fields: paths the strategy resets (C{status} on the main resource of a kind
        with a status subresource, C{spec} on C{/status}): never owned, never conflicting
        (upstream C{GetResetFields}).
    @ivar clock: C{IReactorTime}; entry times are its C{seconds()}.
    @ivar zero: the zero-valued object a create compares against.
    @ivar kind: the kind an applied configuration must have (unchecked when empty).
    """

    def __init__(self, schema: typed.Node, api_version: str, clock: Any,
                 subresource: str = "", reset_fields: Set | None = None,
                 zero: dict | None = None, kind: str = "") -> None:
        self.kind = kind
        self.schema = schema
        self.api_version = api_version
        self.clock = clock
        self.subresource = subresource
        self.reset_fields = reset_fields
        self.zero = zero or {}

    # --- encoding -------------------------------------------------------------------------
    def _now(self) -> str:
        return _time.strftime("%Y-%m-%dT%H:%M:%SZ", _time.gmtime(self.clock.seconds()))

    @staticmethod
    def decode(entries: Any) -> tuple[dict, dict] | None:
        """C{metadata.managedFields} as C{(managers, times)}, or C{None} when undecodable."""
        if not isinstance(entries, list):
            return None
        managers: dict = {}
        times: dict = {}
        for e in entries:
            if not isinstance(e, dict) or e.get("fieldsType") != "FieldsV1":
                return None
            op = e.get("operation", "")
            mid = _manager_id(e.get("manager", ""), op, e.get("apiVersion", ""),
                              e.get("subresource", ""))
            try:
                s = Set.from_fields_v1(e.get("fieldsV1") or {})
            except (ValueError, TypeError):
                return None
            managers[mid] = m.VersionedSet(s, e.get("apiVersion", ""), op == "Apply")
            if e.get("time"):
                times[mid] = e["time"]
        return managers, times

    @staticmethod
    def encode(obj: dict, managers: dict, times: dict) -> None:
        """Write C{managers} into C{obj}'s C{metadata.managedFields}, in upstream's order
        (Apply before Update, then by time, manager, apiVersion, subresource)."""
        entries = []
        for mid, vs in managers.items():
            manager, operation, _, subresource = mid
            e: dict = {"manager": manager, "operation": operation,
                       "apiVersion": vs.api_version}
            if mid in times:
                e["time"] = times[mid]
            e["fieldsType"] = "FieldsV1"
            e["fieldsV1"] = vs.set.to_fields_v1()
            if subresource:
                e["subresource"] = subresource
            entries.append(e)
        entries.sort(key=lambda e: (e["operation"], e.get("time", ""), e["manager"],
                                    e["apiVersion"], e.get("subresource", "")))
        meta = obj.setdefault("metadata", {})
        if entries:
            meta["managedFields"] = entries
        else:
            meta.pop("managedFields", None)

    # --- update ---------------------------------------------------------------------------
    def update(self, live: dict | None, new: dict, manager: str) -> dict:
        """
        Record a non-apply write of C{new} over C{live} (C{None} on create) by C{manager}
        (upstream C{FieldManager.UpdateNoErrors}); C{new} is changed in place and returned.
        Managed fields the client sends are kept (an empty list resets them), except on a
        subresource, where the live ones are used.  An update of an object with no managed
        fields records none (upstream C{skipNonAppliedManager}, which tracks on create only).
        """
        live_obj = live if live is not None else self.zero
        decoded = self._decode_live_or_new(live_obj, new)
        if decoded is None:
            # upstream UpdateNoErrors: undecodable managedFields are dropped, the write proceeds
            if isinstance(new.get("metadata"), dict):
                new["metadata"].pop("managedFields", None)
            return new
        managers, times = decoded
        if not managers and live is not None and (live.get("metadata") or {}).get("uid"):
            # upstream's skipNonAppliedManager: an update of an object that has no managed
            # fields (or resets them with []) records none; only a create starts tracking
            if isinstance(new.get("metadata"), dict):
                new["metadata"].pop("managedFields", None)
            return new
        lhs, rhs = _stripped(live_obj), _stripped(new)
        managers, times = self._update(lhs, rhs, managers, times, manager)
        managers, times = self._cap(managers, times)
        self.encode(new, managers, times)
        if live is not None:
            _keep_timestamps(live, new)
        return new

    def _update(self, lhs: dict, rhs: dict, managers: dict, times: dict,
                manager: str) -> tuple[dict, dict]:
        mid = _manager_id(manager, "Update", self.api_version, self.subresource)
        work = ("current-operation", "Update", self.api_version, self.subresource)
        out = m.update(lhs, rhs, self.schema, self.api_version, managers, work,
                       self.reset_fields)
        times = dict(times)
        vs = out.pop(work, None)
        if vs is not None:
            s = vs.set.difference(STRIP_SET)
            prev = out.get(mid)
            if prev is not None:
                s = s.union(prev.set)
            if not s.empty():
                out[mid] = m.VersionedSet(s, self.api_version, False)
                if self.subresource == "scale":
                    # upstream's ScaleHandler rebuilds the parent's entries from the Scale's
                    # and the scale entry comes back without a time (so it sorts first among
                    # the Update entries): kube-apiserver v1.32, recorded in tests/vectors/apps
                    times.pop(mid, None)
                else:
                    times[mid] = self._now()
        return out, times

    def _cap(self, managers: dict, times: dict) -> tuple[dict, dict]:
        """Upstream C{capManagersManager}: beyond L{MAX_UPDATE_MANAGERS} Update entries, the
        oldest are merged (per apiVersion) into an C{ancient-changes} entry."""
        updates = [mid for mid, vs in managers.items() if not vs.applied]
        if len(updates) <= MAX_UPDATE_MANAGERS:
            return managers, times
        updates.sort(key=lambda mid: (times.get(mid, ""), json.dumps(_encode_id(mid))))
        managers, times = dict(managers), dict(times)
        first_of: dict = {}
        length = len(updates)
        for mid in updates:
            if length <= MAX_UPDATE_MANAGERS:
                break
            vs = managers[mid]
            bucket = _manager_id(ANCIENT_CHANGES, "Update", vs.api_version, "")
            first = first_of.get(vs.api_version)
            if first is None:
                first_of[vs.api_version] = mid
                continue
            if bucket not in managers:
                managers[bucket] = managers.pop(first)
                times.pop(first, None)
            managers[bucket] = m.VersionedSet(vs.set.union(managers[bucket].set),
                                              vs.api_version, False)
            managers.pop(mid)
            when = times.pop(mid, None)
            if when is not None:
                times[bucket] = when
            length -= 1
        return managers, times

    def _decode_live_or_new(self, live: dict, new: dict) -> tuple[dict, dict] | None:
        live_entries = (live.get("metadata") or {}).get("managedFields") or []
        if self.subresource:
            return self.decode(live_entries)
        new_entries = (new.get("metadata") or {}).get("managedFields") \
            if isinstance(new.get("metadata"), dict) else None
        if new_entries is not None and (new_entries == [] or new_entries == [{}]):
            return {}, {}
        decoded = self.decode(new_entries) if new_entries else None
        if decoded is None or not decoded[0]:
            return self.decode(live_entries)
        return decoded

    # --- apply ----------------------------------------------------------------------------
    def apply(self, live: dict | None, applied: dict, manager: str, force: bool) -> dict:
        """
        Apply C{applied} for C{manager} (upstream C{FieldManager.Apply} with its
        last-applied and skip-non-applied wrappers).

        @param live: the stored object, or C{None} to create.
        @return: the new object with its managedFields (a copy of C{live} when unchanged).
        @raise StatusError: 400 C{invalid object type: <group>/<version>, Kind=<kind>} when
            C{applied} is not of this kind and version (upstream C{versionCheckManager}), 400
            when it carries managedFields; 409 Conflict (see
            L{conflict_error}); 500 with upstream's text when C{applied} does not fit the
            schema (C{failed to create typed patch object (ns/name; gvk): .spec.x: field not
            declared in schema}).
        """
        if self.kind and (applied.get("apiVersion") != self.api_version
                          or applied.get("kind") != self.kind):
            api_version = applied.get("apiVersion") or ""
            group, _, version = str(api_version).rpartition("/")
            raise errors.new_bad_request(
                f"invalid object type: {group}/{version}, Kind={applied.get('kind') or ''}")
        meta = applied.get("metadata")
        if isinstance(meta, dict) and meta.get("managedFields") is not None:
            raise errors.new_bad_request("metadata.managedFields must be nil")
        live_obj = live if live is not None else {}
        decoded = self.decode((live_obj.get("metadata") or {}).get("managedFields") or [])
        if decoded is None:
            raise errors.make_status(500, "", "failed to decode managed fields")
        managers, times = decoded
        lhs = _stripped(live_obj)
        if not managers and live is not None:
            managers, times = self._update(_stripped(self.zero), lhs, managers, times,
                                           BEFORE_FIRST_APPLY)
        mid = _manager_id(manager, "Apply", self.api_version, self.subresource)
        config = copy.deepcopy(applied)
        try:
            new, out = m.apply(lhs, config, self.schema, self.api_version, managers, mid,
                               force, self.reset_fields)
        except m.SchemaError as e:
            raise _internal(f"failed to create typed patch object ({_gvknn(applied)}): {e}") \
                from None
        except m.Conflicts as c:
            new, out = self._upgrade_from_last_applied(lhs, config, managers, mid, manager,
                                                       c)
        times = dict(times)
        vs = out.get(mid)
        if vs is not None:
            s = vs.set.difference(STRIP_SET)
            if s.empty():
                out.pop(mid)
            else:
                out[mid] = m.VersionedSet(s, vs.api_version, True)
        if new is None:
            new = copy.deepcopy(lhs)
        times[mid] = self._now()
        if manager == "kubectl" and LAST_APPLIED_ANNOTATION in (
                (new.get("metadata") or {}).get("annotations") or {}):
            new["metadata"]["annotations"][LAST_APPLIED_ANNOTATION] = _last_applied(applied)
        self.encode(new, out, times)
        _same_key_order(live_obj.get("metadata"), new)
        _keep_timestamps(live_obj, new)
        return new

    def _upgrade_from_last_applied(self, lhs: dict, config: dict, managers: dict, mid: tuple,
                                   manager: str, conflicts: m.Conflicts) -> tuple[Any, dict]:
        """Upstream C{lastAppliedManager}: C{kubectl}'s first server-side apply over a
        client-side applied object may take the fields its last-applied annotation set and
        nobody changed since."""
        if manager != "kubectl" or mid in managers:
            raise conflict_error(conflicts.conflicts)
        text = ((lhs.get("metadata") or {}).get("annotations") or {}).get(
            LAST_APPLIED_ANNOTATION)
        try:
            last = json.loads(text) if text else None
        except ValueError:
            last = None
        if not isinstance(last, dict) or last.get("apiVersion") != self.api_version:
            raise conflict_error(conflicts.conflicts)
        try:
            allowed = m.to_field_set(last, self.schema)
        except m.SchemaError:
            raise conflict_error(conflicts.conflicts) from None
        allowed = allowed.difference(m.compare(last, lhs, self.schema).modified)
        left = [c for c in conflicts.conflicts if not allowed.has(c.path)]
        if left:
            raise conflict_error(left)
        return m.apply(lhs, config, self.schema, self.api_version, managers, mid, True,
                       self.reset_fields)


def _same_key_order(live_meta: Any, new: dict) -> None:
    """Put C{new}'s metadata keys in C{live_meta}'s order (new keys last), so an unchanged
    object encodes to the same bytes and the write is skipped."""
    meta = new.get("metadata")
    if not isinstance(live_meta, dict) or not isinstance(meta, dict):
        return
    ordered = {k: meta[k] for k in live_meta if k in meta}
    ordered.update((k, v) for k, v in meta.items() if k not in ordered)
    new["metadata"] = ordered


def _keep_timestamps(live: dict, new: dict) -> None:
    """Upstream C{IgnoreManagedFieldsTimestampsTransformer}: when a write changes nothing but
    managedFields timestamps, the live managedFields are kept (so a no-op stays a no-op)."""
    old_entries = (live.get("metadata") or {}).get("managedFields")
    new_entries = (new.get("metadata") or {}).get("managedFields")
    if not old_entries or not new_entries or len(old_entries) != len(new_entries):
        return

    def untimed(entries):
        return sorted(
            json.dumps({k: v for k, v in e.items() if k != "time"}, sort_keys=True)
            for e in entries)

    if untimed(old_entries) != untimed(new_entries) or _stripped(live) != _stripped(new):
        return
    new["metadata"]["managedFields"] = copy.deepcopy(old_entries)


def _stripped(obj: dict) -> dict:
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def _last_applied(applied: dict) -> str:
    doc = copy.deepcopy(applied)
    ann = (doc.get("metadata") or {}).get("annotations")
    if isinstance(ann, dict):
        ann.pop(LAST_APPLIED_ANNOTATION, None)
        if not ann:
            doc["metadata"].pop("annotations")
    return json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _gvknn(obj: dict) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    api_version = obj.get("apiVersion", "")
    group, _, version = api_version.rpartition("/")
    return (f"{meta.get('namespace', '')}/{meta.get('name', '')}; "
            f"{group}/{version}, Kind={obj.get('kind', '')}")


def _internal(message: str) -> errors.StatusError:
    err = errors.make_status(500, "", message)
    err.status.pop("reason", None)
    return err
