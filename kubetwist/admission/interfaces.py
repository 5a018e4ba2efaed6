# -*- test-case-name: tests.admission.test_interfaces -*-
"""
The admission seam: upstream C{k8s.io/apiserver/pkg/admission} (C{interfaces.go}:
C{Attributes}, C{Interface}, C{MutationInterface}, C{ValidationInterface}, C{Operation}).

A plugin provides L{IAdmissionPlugin} (a C{name} and C{handles(operation)}) and one or both of
L{IMutationInterface} (C{admit}: may change C{attributes.object}; run first, in order, before
the strategy's validation) and L{IValidationInterface} (C{validate}: may only refuse; run after
it).  Both return a Deferred or are coroutines (a webhook call, a policy evaluation or a lister
read may wait), and refuse by raising a L{StatusError <kubetwist.runtime.errors.StatusError>}
(usually 403 Forbidden, upstream's C{admission.NewForbidden}, or 404 NotFound).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from zope.interface import Attribute, Interface

#: Upstream C{admission.Operation} values.
CREATE = "CREATE"
UPDATE = "UPDATE"
DELETE = "DELETE"
CONNECT = "CONNECT"
OPERATIONS = (CREATE, UPDATE, DELETE, CONNECT)


class GroupVersionKind(NamedTuple):
    """Upstream C{schema.GroupVersionKind}."""

    group: str
    version: str
    kind: str


class GroupVersionResource(NamedTuple):
    """Upstream C{schema.GroupVersionResource}."""

    group: str
    version: str
    resource: str


@dataclass
class ReinvocationContext:
    """
    Upstream C{admission.ReinvocationContext}: the chain runs its mutating plugins a second
    time when a plugin (a mutating webhook) sets C{should_reinvoke}; C{is_reinvoke} tells the
    plugins which round this is; C{values} holds each plugin's own state (by plugin name).
    """

    is_reinvoke: bool = False
    should_reinvoke: bool = False
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class Attributes:
    """
    What one write asks (upstream C{admission.Attributes} / C{attributesRecord}).

    @ivar operation: one of L{OPERATIONS}.
    @ivar kind: the kind of C{object} (for the C{status} subresource the parent's kind).
    @ivar resource: the resource the request names.
    @ivar subresource: C{status}, C{scale}, ..., or C{""}.
    @ivar namespace: C{""} for cluster-scoped resources.
    @ivar name: the object's name (for a create with C{generateName}: C{""} until generated).
    @ivar object: the new object (mutable in C{admit}); C{None} for DELETE (upstream's
        C{GetObject()}); for CONNECT the options object (C{PodExecOptions}, ...).
    @ivar old_object: the stored object for UPDATE and DELETE, else C{None}.
    @ivar options: the operation's options object as sent (C{CreateOptions},
        C{UpdateOptions}, C{DeleteOptions} dicts), or C{None}.
    @ivar dry_run: the request has C{dryRun=All} (plugins with side effects must not act).
    @ivar user: the requesting L{UserInfo <kubetwist.authentication.user.UserInfo>}, or
        C{None}.
    @ivar spec: the resource's L{ResourceSpec <kubetwist.registry.rest.ResourceSpec>} (scope,
        names), for plugins that need more than C{resource}.
    """

    operation: str
    kind: GroupVersionKind
    resource: GroupVersionResource
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    object: Optional[dict] = None
    old_object: Optional[dict] = None
    options: Optional[dict] = None
    dry_run: bool = False
    user: Any = None
    spec: Any = None
    #: upstream's audit annotations added by plugins (C{key -> value})
    annotations: dict[str, str] = field(default_factory=dict)
    #: C{Warning} texts plugins add for the response (upstream C{warning.AddWarning})
    warnings: list[str] = field(default_factory=list)
    #: the mutating phase's rounds (see L{ReinvocationContext})
    reinvocation: ReinvocationContext = field(default_factory=ReinvocationContext)

    def add_warning(self, text: str) -> None:
        """Upstream C{warning.AddWarning}: a C{Warning} header for the response (each text
        once)."""
        if text not in self.warnings:
            self.warnings.append(text)

    def add_annotation(self, key: str, value: str) -> None:
        """Upstream C{Attributes.AddAnnotation}: an audit annotation for the request (the
        first value set for a key stays)."""
        self.annotations.setdefault(key, value)

    @classmethod
    def for_spec(cls, operation: str, spec: Any, subresource: str = "", namespace: str = "",
                 name: str = "", obj: Optional[dict] = None, old: Optional[dict] = None,
                 user: Any = None, dry_run: bool = False,
                 options: Optional[dict] = None) -> "Attributes":
        """The attributes of a write to the resource C{spec} describes."""
        return cls(
            operation=operation,
            kind=GroupVersionKind(spec.group, spec.version, spec.kind),
            resource=GroupVersionResource(spec.group, spec.version, spec.resource),
            subresource=subresource, namespace=namespace, name=name, object=obj,
            old_object=old, options=options, dry_run=dry_run, user=user, spec=spec,
        )


class IAdmissionPlugin(Interface):
    """Upstream C{admission.Interface}: a named plugin that handles some operations."""

    name = Attribute("The plugin's name, as C{--enable-admission-plugins} spells it.")

    def handles(operation: str) -> bool:
        """Whether the plugin wants to see requests of C{operation} (one of L{OPERATIONS})."""


class IMutationInterface(IAdmissionPlugin):
    """Upstream C{admission.MutationInterface}."""

    def admit(attributes: Attributes) -> Any:
        """
        Change C{attributes.object} in place, or refuse.

        @return: a Deferred or coroutine firing when done.
        @raise StatusError: the refusal (403 Forbidden, 404 NotFound, ...).
        """


class IValidationInterface(IAdmissionPlugin):
    """Upstream C{admission.ValidationInterface}."""

    def validate(attributes: Attributes) -> Any:
        """
        Refuse, or not; never change the object.

        @return: a Deferred or coroutine firing when done.
        @raise StatusError: the refusal.
        """
