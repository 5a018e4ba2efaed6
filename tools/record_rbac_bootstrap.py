# -*- test-case-name: tests.registry.test_rbac_bootstrap -*-
"""
Record kube-apiserver's bootstrap RBAC policy (the objects its C{rbac/bootstrap-roles}
post-start hook creates) from a running server.

Every ClusterRole, ClusterRoleBinding, Role and RoleBinding labelled
C{kubernetes.io/bootstrapping=rbac-defaults} is read with C{kubectl get -o json}, stripped of
what the server assigns (uid, resourceVersion, creationTimestamp, managedFields, generation)
and written, sorted by kind, namespace and name, as::

  {"clusterRoles": [...], "clusterRoleBindings": [...], "roles": [...], "roleBindings": [...]}

to C{kubetwist/authorization/rbac/bootstrap_policy.json} (the policy kubetwist's hook
creates) and to C{tests/vectors/rbac/upstream_bootstrap.json} (what the tests compare the
hook's result with).  Record from a fresh server with no kube-controller-manager, so the
aggregated roles (C{admin}, C{edit}, C{view}) still have the rules the hook gives them (none).

Usage::

  ../shared/upstream/run-upstream.sh     # kube-apiserver v1.32, RBAC on
  python tools/record_rbac_bootstrap.py --kubeconfig ~/.cache/kubetwist-upstream/run/kubeconfig

Uses only the standard library and C{kubectl} from C{PATH} (or C{--kubectl}).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "kubetwist" / "authorization" / "rbac" / "bootstrap_policy.json"
VECTOR = ROOT / "tests" / "vectors" / "rbac" / "upstream_bootstrap.json"
LABEL = "kubernetes.io/bootstrapping=rbac-defaults"
KINDS = [("clusterroles", "clusterRoles"), ("clusterrolebindings", "clusterRoleBindings"),
         ("roles", "roles"), ("rolebindings", "roleBindings")]
ASSIGNED = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")


def normalise(obj: dict) -> dict:
    """The object without the fields the server assigns."""
    out = {k: v for k, v in obj.items() if k != "status"}
    out["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in ASSIGNED}
    return out


def record(kubectl: str, kubeconfig: str) -> dict:
    """The bootstrap policy of the server C{kubeconfig} names."""
    policy: dict = {}
    for resource, key in KINDS:
        raw = subprocess.run(
            [kubectl, "--kubeconfig", kubeconfig, "get", resource, "-A", "-l", LABEL,
             "-o", "json"], check=True, capture_output=True, text=True).stdout
        items = [normalise(o) for o in json.loads(raw)["items"]]
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        policy[key] = items
    return policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--kubectl", default="kubectl")
    args = parser.parse_args()
    policy = record(args.kubectl, args.kubeconfig)
    text = json.dumps(policy, indent=1, sort_keys=True) + "\n"
    for path in (POLICY, VECTOR):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    print(f"{sum(len(v) for v in policy.values())} objects -> {POLICY}, {VECTOR}")


if __name__ == "__main__":
    main()
