# -*- test-case-name: tests.apis.test_policy -*-
"""
The policy/v1 group-version: upstream C{pkg/registry/policy/rest} (poddisruptionbudgets with
their C{status} subresource) and the printer of C{printPodDisruptionBudget} in
C{pkg/printers/internalversion/printers.go}.  The C{pods/eviction} subresource lives with the
core group.
"""

from __future__ import annotations

from kubetwist.apis.policy import pdb
from kubetwist.apis.printers import age_column, column, name_column, obj_age, obj_name
from kubetwist.registry.rest import ResourceSpec, Strategy, TableConvertor

__all__ = ["GROUP", "PDB_TABLE", "RESOURCES", "STRATEGIES", "VERSION"]

GROUP = "policy"
VERSION = "v1"

RESOURCES: list[ResourceSpec] = [
    ResourceSpec(GROUP, VERSION, "poddisruptionbudgets", "PodDisruptionBudget",
                 "poddisruptionbudget", short_names=["pdb"], subresources=["status"]),
]

#: C{SwaggerDoc()} texts of k8s.io/api policy/v1 v0.32.
_MIN_DOC = ('An eviction is allowed if at least "minAvailable" pods selected by "selector" will '
            "still be available after the eviction, i.e. even in the absence of the evicted pod."
            '  So for example you can prevent all voluntary evictions by specifying "100%".')
_MAX_DOC = ('An eviction is allowed if at most "maxUnavailable" pods selected by "selector" are '
            "unavailable after the eviction, i.e. even in absence of the evicted pod. For "
            "example, one can prevent all voluntary evictions by specifying 0. This is a "
            'mutually exclusive setting with "minAvailable".')
_ALLOWED_DOC = "Number of pod disruptions that are currently allowed."


def _pdb_row(obj: dict) -> list:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    def cell(key: str) -> str:
        return "N/A" if spec.get(key) is None else str(spec[key])
    return [obj_name(obj), cell("minAvailable"), cell("maxUnavailable"),
            status.get("disruptionsAllowed") or 0, obj_age(obj)]


PDB_TABLE = TableConvertor(
    columns=[
        name_column(),
        column("Min Available", "string", _MIN_DOC),
        column("Max Unavailable", "string", _MAX_DOC),
        column("Allowed Disruptions", "integer", _ALLOWED_DOC),
        age_column(),
    ],
    row=_pdb_row,
)

_PDB = dict(kind="PodDisruptionBudget", group=GROUP, default=pdb.default_pdb,
            prepare_for_create=pdb.prepare_pdb_for_create, validate=pdb.validate_pdb,
            table=PDB_TABLE,
            # upstream podDisruptionBudgetStrategy.AllowUnconditionalUpdate() is false
            allow_unconditional_update=False)

STRATEGIES: dict[str, Strategy] = {
    "poddisruptionbudgets": Strategy(**_PDB, prepare_for_update=pdb.prepare_pdb_for_update,
                                     validate_update=pdb.validate_pdb_update),
    "poddisruptionbudgets/status": Strategy(**_PDB,
                                            prepare_for_update=pdb.prepare_pdb_status_for_update,
                                            validate_update=pdb.validate_pdb_status_update),
}
