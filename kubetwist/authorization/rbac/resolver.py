# -*- test-case-name: tests.authorization.test_rbac -*-
"""
The RBAC rule resolver: upstream C{pkg/registry/rbac/validation/rule.go}
(C{DefaultRuleResolver}: C{VisitRulesFor}, C{RulesFor}, C{GetRoleReferenceRules},
C{appliesTo}, the binding describers) over in-memory indexes of the four RBAC kinds
(L{RBACIndex}, fed by L{Informer <kubetwist.authorization.rbac.informer.Informer>}s).

Bindings are visited as upstream's listers return them: every ClusterRoleBinding in name
order, then (for a namespace) every RoleBinding of that namespace in name order; only the
bindings naming the user, one of its groups or its ServiceAccount are looked at (the indexes
are by subject), which gives the same visit as upstream's full scan.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Optional

from kubetwist.authorization.rbac.informer import Informer
from kubetwist.authorization.rbac.rules import CompiledRule
from kubetwist.runtime import gofmt

__all__ = [
    "PREFIXES", "RBACIndex", "Visit", "aggregate_error", "lister_not_found",
]

#: Storage key prefixes of the four kinds (upstream's etcd layout).
PREFIXES = {
    "clusterroles": "/registry/clusterroles",
    "clusterrolebindings": "/registry/clusterrolebindings",
    "roles": "/registry/roles",
    "rolebindings": "/registry/rolebindings",
}

SA_PREFIX = "system:serviceaccount:"
_PLAIN = re.compile(r'[ !#-\[\]-~]*')


def _quote(text: str) -> str:
    """Go's C{%q} (L{gofmt.quote}), with a fast path for printable ASCII without quotes or
    backslashes (every Kubernetes name)."""
    if _PLAIN.fullmatch(text):
        return f'"{text}"'
    return gofmt.quote(text)
GROUP = "rbac.authorization.k8s.io"


def lister_not_found(kind: str, name: str) -> str:
    """The error of a missing role as upstream's listers give it (singular resource):
    C{clusterrole.rbac.authorization.k8s.io "x" not found}."""
    return f"{kind.lower()}.{GROUP} {_quote(name)} not found"


def aggregate_error(errs: Iterable[str]) -> str:
    """Upstream C{utilerrors.NewAggregate(errs).Error()}: one message as is, several
    de-duplicated and joined as C{[a, b]}."""
    seen: list[str] = []
    for e in errs:
        if e not in seen:
            seen.append(e)
    if not seen:
        return ""
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def describe_subject(subject: dict, binding_namespace: str) -> str:
    """Upstream C{describeSubject}: C{User "jane"}, C{ServiceAccount "robot/demo"}."""
    kind = subject.get("kind") or ""
    name = subject.get("name") or ""
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_namespace
        return f"{kind} {_quote(name + '/' + ns)}"
    return f"{kind} {_quote(name)}"


def _describe(binding: dict, subject: dict) -> str:
    meta = binding.get("metadata") or {}
    ref = binding.get("roleRef") or {}
    ns = meta.get("namespace") or ""
    if ns:
        return (f"RoleBinding {_quote((meta.get('name') or '') + '/' + ns)} of "
                f"{ref.get('kind') or ''} {_quote(ref.get('name') or '')} to "
                f"{describe_subject(subject, ns)}")
    return (f"ClusterRoleBinding {_quote(meta.get('name') or '')} of "
            f"{ref.get('kind') or ''} {_quote(ref.get('name') or '')} to "
            f"{describe_subject(subject, '')}")


def _applies(user: Any, subject: dict, namespace: str) -> bool:
    """Upstream C{appliesToUser}."""
    kind = subject.get("kind")
    name = subject.get("name") or ""
    if kind == "User":
        return getattr(user, "name", "") == name
    if kind == "Group":
        return name in (getattr(user, "groups", None) or ())
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or namespace
        if not ns:
            return False
        return getattr(user, "name", "") == f"{SA_PREFIX}{ns}:{name}"
    return False


class _BindingIndex:
    """Bindings of one scope (all ClusterRoleBindings, or the RoleBindings of one namespace)
    by subject: C{("User", name)}, C{("Group", name)}, C{("ServiceAccount", ns, name)}."""

    def __init__(self, bindings: list[dict], namespace: str) -> None:
        self.by_subject: dict[tuple, list[tuple[str, dict]]] = {}
        for binding in sorted(bindings, key=lambda b: (b.get("metadata") or {}).get("name")
                              or ""):
            name = (binding.get("metadata") or {}).get("name") or ""
            seen: set[tuple] = set()
            for subject in binding.get("subjects") or []:
                if not isinstance(subject, dict):
                    continue
                kind = subject.get("kind")
                if kind == "ServiceAccount":
                    ns = subject.get("namespace") or namespace
                    if not ns:
                        continue
                    key: tuple = (kind, ns, subject.get("name") or "")
                elif kind in ("User", "Group"):
                    key = (kind, subject.get("name") or "")
                else:
                    continue
                if key not in seen:
                    seen.add(key)
                    self.by_subject.setdefault(key, []).append((name, binding))

    def candidates(self, user: Any) -> list[dict]:
        """The bindings that may apply to C{user}, in name order."""
        found: dict[str, dict] = {}
        keys: list[tuple] = [("User", getattr(user, "name", "") or "")]
        keys += [("Group", g) for g in (getattr(user, "groups", None) or ())]
        uname = getattr(user, "name", "") or ""
        if uname.startswith(SA_PREFIX):
            parts = uname[len(SA_PREFIX):].split(":")
            if len(parts) == 2:
                keys.append(("ServiceAccount", parts[0], parts[1]))
        for key in keys:
            for name, binding in self.by_subject.get(key, ()):
                found[name] = binding
        return [found[n] for n in sorted(found)]


#: One step of a visit: C{(description, compiled rules, error)}; rules and description for a
#: binding that resolved, the error text (C{description} C{""}) for one that did not.
Visit = tuple[str, list[CompiledRule], str]


class RBACIndex:
    """
    In-memory state of Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, with the
    indexes the resolver needs, rebuilt lazily after a change of their kind.

    @param storage: the L{IStorage <kubetwist.storage.interfaces.IStorage>} to list and watch.
    @param clock: C{IReactorTime}.
    @ivar generation: incremented on every change (callers key caches by it).
    """

    def __init__(self, storage: Any, clock: Any) -> None:
        self.storage = storage
        self.generation = 0
        self.informers = {kind: Informer(storage, clock, prefix, self._changed_cb(kind))
                          for kind, prefix in PREFIXES.items()}
        # kind -> the changed (namespace, name) keys, or None for "everything" (a list)
        self._dirty: dict[str, Optional[set]] = {kind: None for kind in PREFIXES}
        self._cluster_roles: dict[str, tuple[list[dict], list[CompiledRule]]] = {}
        self._roles: dict[tuple[str, str], tuple[list[dict], list[CompiledRule]]] = {}
        self._crbs = _BindingIndex([], "")
        self._rbs: dict[str, _BindingIndex] = {}
        self._listeners: list[Callable[[str], Any]] = []

    def add_listener(self, listener: Callable[[str], Any]) -> None:
        """Call C{listener(kind)} after every change (C{kind} one of L{PREFIXES}' keys)."""
        self._listeners.append(listener)

    def _changed_cb(self, kind: str) -> Callable[[Optional[tuple[str, str]]], None]:
        def changed(key: Optional[tuple[str, str]]) -> None:
            if key is None:
                self._dirty[kind] = None
            elif kind not in self._dirty:
                self._dirty[kind] = {key}
            elif self._dirty[kind] is not None:
                self._dirty[kind].add(key)
            self.generation += 1
            for listener in list(self._listeners):
                listener(kind)
        return changed

    def start(self) -> None:
        """Start the four informers (idempotent)."""
        for informer in self.informers.values():
            informer.start()

    def stop(self) -> None:
        """Stop the four informers."""
        for informer in self.informers.values():
            informer.stop()

    @property
    def synced(self) -> bool:
        """Whether every kind has been listed once."""
        return all(i.synced for i in self.informers.values())

    def wait_synced(self) -> Any:
        """A Deferred fired once every kind has been listed (starting them if needed)."""
        from twisted.internet.defer import gatherResults

        self.start()
        return gatherResults([i.wait_synced() for i in self.informers.values()])

    # --- indexes ---------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Bring the indexes up to the informers' items: a kind that was listed is rebuilt,
        otherwise only the changed roles, or the changed namespaces' RoleBindings."""
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, {}
        if "clusterroles" in dirty:
            items = self.informers["clusterroles"].items
            keys = dirty["clusterroles"]
            if keys is None:
                self._cluster_roles = {name: _compiled(obj) for (_, name), obj in items.items()}
            else:
                for key in keys:
                    if key in items:
                        self._cluster_roles[key[1]] = _compiled(items[key])
                    else:
                        self._cluster_roles.pop(key[1], None)
        if "roles" in dirty:
            items = self.informers["roles"].items
            keys = dirty["roles"]
            if keys is None:
                self._roles = {key: _compiled(obj) for key, obj in items.items()}
            else:
                for key in keys:
                    if key in items:
                        self._roles[key] = _compiled(items[key])
                    else:
                        self._roles.pop(key, None)
        if "clusterrolebindings" in dirty:
            self._crbs = _BindingIndex(
                list(self.informers["clusterrolebindings"].items.values()), "")
        if "rolebindings" in dirty:
            keys = dirty["rolebindings"]
            namespaces = None if keys is None else {ns for ns, _ in keys}
            by_ns: dict[str, list[dict]] = {}
            for (ns, _), obj in self.informers["rolebindings"].items.items():
                if namespaces is None or ns in namespaces:
                    by_ns.setdefault(ns, []).append(obj)
            if namespaces is None:
                self._rbs = {}
            else:
                for ns in namespaces:
                    self._rbs.pop(ns, None)
            for ns, objs in by_ns.items():
                self._rbs[ns] = _BindingIndex(objs, ns)

    def cluster_role(self, name: str) -> Optional[dict]:
        """The stored ClusterRole C{name}, or C{None}."""
        return self.informers["clusterroles"].items.get(("", name))

    def cluster_roles(self) -> list[dict]:
        """Every stored ClusterRole."""
        return list(self.informers["clusterroles"].items.values())

    def role_reference_rules(
            self, ref: dict, namespace: str,
            not_found: Callable[[str, str], str] = lister_not_found,
    ) -> tuple[list[dict], list[CompiledRule], str]:
        """
        Upstream C{GetRoleReferenceRules}: the rules of C{ref} (a C{roleRef}) for a binding in
        C{namespace} (C{""} for a ClusterRoleBinding), as C{(rules, compiled, error)}.  A
        missing role is C{not_found(kind, name)}; another kind is C{unsupported role reference
        kind: "X"}.
        """
        self._refresh()
        kind = ref.get("kind") or ""
        name = ref.get("name") or ""
        if kind == "ClusterRole":
            found = self._cluster_roles.get(name)
        elif kind == "Role":
            found = self._roles.get((namespace, name)) if namespace else None
        else:
            return [], [], f"unsupported role reference kind: {_quote(kind)}"
        if found is None:
            return [], [], not_found(kind, name)
        return found[0], found[1], ""

    def visit(self, user: Any, namespace: str,
              not_found: Callable[[str, str], str] = lister_not_found) -> list[Visit]:
        """
        Upstream C{VisitRulesFor} as a list: each applying binding's description and
        compiled rules, or its resolution error, in upstream's visiting order.
        """
        self._refresh()
        out: list[Visit] = []
        scopes = [(self._crbs, "")]
        if namespace:
            rbs = self._rbs.get(namespace)
            if rbs is not None:
                scopes.append((rbs, namespace))
        for index, ns in scopes:
            for binding in index.candidates(user):
                subject = next((s for s in binding.get("subjects") or []
                                if isinstance(s, dict) and _applies(user, s, ns)), None)
                if subject is None:
                    continue
                _, compiled, err = self.role_reference_rules(
                    binding.get("roleRef") or {}, ns, not_found)
                if err:
                    out.append(("", [], err))
                else:
                    out.append((_describe(binding, subject), compiled, ""))
        return out

    def rules_for(self, user: Any, namespace: str,
                  not_found: Callable[[str, str], str] = lister_not_found,
                  ) -> tuple[list[dict], list[str]]:
        """Upstream C{RulesFor}: every rule that applies (wire form, in visiting order) and
        the resolution errors."""
        rules: list[dict] = []
        errs: list[str] = []
        for _, compiled, err in self.visit(user, namespace, not_found):
            if err:
                errs.append(err)
            rules += [c.rule for c in compiled]
        return rules, errs


def _compiled(obj: dict) -> tuple[list[dict], list[CompiledRule]]:
    rules = [r for r in obj.get("rules") or [] if isinstance(r, dict)]
    return rules, [CompiledRule(r) for r in rules]
