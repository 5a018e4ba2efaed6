# -*- test-case-name: tests.apis.test_flowcontrol -*-
"""
The flowcontrol.apiserver.k8s.io/v1 group-version: upstream
C{pkg/registry/flowcontrol/rest/storage_flowcontrol.go} (flowschemas and
prioritylevelconfigurations, each with C{status}) and the strategies of
C{pkg/registry/flowcontrol/{flowschema,prioritylevelconfiguration}/strategy.go}.
"""

from __future__ import annotations

import copy

from kubetwist.apis.flowcontrol import validation as v
from kubetwist.apis.flowcontrol.printers import FLOW_SCHEMA_TABLE, PRIORITY_LEVEL_TABLE
from kubetwist.registry.rest import ResourceSpec, Strategy

__all__ = ["GROUP", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "flowcontrol.apiserver.k8s.io"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "flowschemas", "FlowSchema", "flowschema",
                 namespaced=False, subresources=["status"]),
    ResourceSpec(GROUP, VERSION, "prioritylevelconfigurations", "PriorityLevelConfiguration",
                 "prioritylevelconfiguration", namespaced=False, subresources=["status"]),
]


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


def prepare_for_create(obj: dict) -> None:
    """Upstream C{PrepareForCreate} of both kinds: empty status, generation 1."""
    obj["status"] = {}
    _meta(obj)["generation"] = 1


def prepare_for_update(new: dict, old: dict) -> None:
    """Upstream C{PrepareForUpdate} of both kinds: the stored status stays; the generation
    goes up by one when the spec changed."""
    new["status"] = copy.deepcopy(old.get("status") or {})
    gen = (old.get("metadata") or {}).get("generation") or 0
    _meta(new)["generation"] = gen + 1 if new.get("spec") != old.get("spec") else gen


def prepare_for_status_update(new: dict, old: dict) -> None:
    """Upstream C{*StatusStrategy.PrepareForUpdate}: the stored ObjectMeta (but the request's
    C{managedFields}) and spec stay; only the status changes."""
    managed = _meta(new).get("managedFields")
    new["metadata"] = copy.deepcopy(old.get("metadata") or {})
    if managed is not None:
        new["metadata"]["managedFields"] = managed
    else:
        new["metadata"].pop("managedFields", None)
    new["spec"] = copy.deepcopy(old.get("spec") or {})


_FS = {"kind": "FlowSchema", "group": GROUP, "namespaced": False,
       "default": v.default_flow_schema, "prepare_for_create": prepare_for_create,
       "validate": v.validate_flow_schema, "table": FLOW_SCHEMA_TABLE}
_PL = {"kind": "PriorityLevelConfiguration", "group": GROUP, "namespaced": False,
       "default": v.default_priority_level, "prepare_for_create": prepare_for_create,
       "validate": v.validate_priority_level, "table": PRIORITY_LEVEL_TABLE}

STRATEGIES: dict[str, Strategy] = {
    "flowschemas": Strategy(**_FS, prepare_for_update=prepare_for_update,
                            validate_update=v.validate_flow_schema_update),
    "flowschemas/status": Strategy(**_FS, prepare_for_update=prepare_for_status_update,
                                   validate_update=v.validate_flow_schema_status_update),
    "prioritylevelconfigurations": Strategy(
        **_PL, prepare_for_update=prepare_for_update,
        validate_update=v.validate_priority_level_update),
    "prioritylevelconfigurations/status": Strategy(
        **_PL, prepare_for_update=prepare_for_status_update,
        validate_update=v.validate_priority_level_status_update),
}
