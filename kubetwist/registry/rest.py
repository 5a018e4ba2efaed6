# -*- test-case-name: tests.registry.test_store -*-
"""
Per-resource behaviour as data and function fields: upstream C{k8s.io/apiserver/pkg/registry/rest}
(C{RESTCreateStrategy}, C{RESTUpdateStrategy}, C{RESTDeleteStrategy}, C{TableConvertor}) and the
resource table that discovery and the installer read; and the REST capability interfaces of
upstream C{rest.go} (L{IGetter}, L{ILister}, L{ICreater}, ...) that a resource's storage
provides and the installer reads (with C{providedBy}) to choose its routes and discovery verbs.

There is no class per kind: a resource is a L{ResourceSpec} (what discovery says about it) plus a
L{Strategy} (what the generic L{kubetwist.registry.generic.store.Store} calls on writes).  A
storage that serves less than the generic Store (namespaces have no C{deletecollection}, the
reviews only C{create}) declares only the capabilities it has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from zope.interface import Attribute, Interface, implementer

from kubetwist.runtime.field import FieldError

# --- REST capabilities (upstream k8s.io/apiserver/pkg/registry/rest/rest.go) --------------------
# All methods return Deferreds / are coroutines; objects are JSON-shaped dicts; errors are
# StatusErrors with upstream's reason and code (404 NotFound, 409 AlreadyExists/Conflict,
# 422 Invalid, ...).


class IScoper(Interface):
    """Upstream C{rest.Scoper}: whether the resource's objects live in namespaces."""

    spec = Attribute("The resource's L{ResourceSpec} (C{spec.namespaced}: the scope).")


class IGetter(Interface):
    """Upstream C{rest.Getter}: discovery verb C{get}, route C{GET .../<name>}."""

    def get(namespace: str, name: str, resource_version: str = "") -> Any:
        """
        @return: (a coroutine of) the object.
        @raise StatusError: 404 NotFound.
        """


class ILister(Interface):
    """Upstream C{rest.Lister}: discovery verb C{list}, route C{GET .../<resource>}."""

    def list(namespace: str, options: Any) -> Any:
        """
        @param namespace: C{""}: every namespace.
        @param options: a L{ListOptions <kubetwist.registry.generic.store.ListOptions>}.
        @return: (a coroutine of) the C{<Kind>List} object.
        @raise StatusError: 400 BadRequest (bad selectors), 410 Expired (continue token).
        """


class IWatcher(Interface):
    """Upstream C{rest.Watcher}: discovery verb C{watch}, C{?watch=true} and C{/watch/} routes."""

    def watch(namespace: str, options: Any, timeout: Any = None) -> Any:
        """
        @return: a L{Watch <kubetwist.storage.interfaces.Watch>} of the resource's events.
        @raise StatusError: 410 Expired (resourceVersion too old).
        """


class ICreater(Interface):
    """Upstream C{rest.Creater}: discovery verb C{create}, route C{POST .../<resource>}."""

    def create(namespace: str, obj: dict, admission: Any, dry_run: bool) -> Any:
        """
        Create C{obj} (decoded and defaulted), running C{admission}.

        @return: (a coroutine of) the created object.
        @raise StatusError: 409 AlreadyExists, 422 Invalid, 403 Forbidden (admission).
        """


class IUpdater(Interface):
    """Upstream C{rest.Updater}: discovery verb C{update}, route C{PUT .../<name>}."""

    def update(namespace: str, name: str, transform: Any, admission: Any = None,
               dry_run: bool = False, force_allow_create: bool = False) -> Any:
        """
        Update an object by C{transform(current) -> new} (retried on conflicts).

        @return: (a coroutine of) C{(object, created)}.
        @raise StatusError: 404 NotFound, 409 Conflict, 422 Invalid.
        """


class IPatcher(IGetter, IUpdater):
    """
    Upstream C{rest.Patcher} (a Getter and an Updater): discovery verb C{patch}, route
    C{PATCH .../<name>}; the patch is applied by the handler inside the update's transform.
    """


class IGracefulDeleter(Interface):
    """Upstream C{rest.GracefulDeleter}: discovery verb C{delete}, route C{DELETE .../<name>}."""

    def delete(namespace: str, name: str, options: Any = None, admission: Any = None,
               dry_run: bool = False, veto: bool = True) -> Any:
        """
        Delete (or mark for deletion, with finalizers or a grace period).

        @return: (a coroutine of) C{(object or Status, deleted_now)}.
        @raise StatusError: 404 NotFound, 409 Conflict (preconditions).
        """


class ICollectionDeleter(Interface):
    """Upstream C{rest.CollectionDeleter}: discovery verb C{deletecollection}, route
    C{DELETE .../<resource>}."""

    def delete_collection(namespace: str, list_options: Any, delete_options: Any = None,
                          admission: Any = None, dry_run: bool = False) -> Any:
        """@return: (a coroutine of) the C{<Kind>List} of the deleted objects."""


class IConnecter(Interface):
    """
    Upstream C{rest.Connecter}: a subresource that hands the connection over (C{exec},
    C{attach}, C{portforward}, C{proxy}); the installer routes the methods it answers.
    """

    def connect(request: Any, namespace: str, name: str) -> Any:
        """Serve the connection (an upgrade, or a proxied request)."""


class ITableConvertor(Interface):
    """Upstream C{rest.TableConvertor}: the server-side printing of a resource."""

    columns = Attribute("C{metav1.TableColumnDefinition} dicts, in order.")
    row = Attribute("C{obj -> list} of cells, one per column.")


class IStandardStorage(IScoper, IPatcher, ILister, IWatcher, ICreater,
                       IGracefulDeleter, ICollectionDeleter):
    """Upstream C{rest.StandardStorage}: every verb (the generic Store)."""


#: The discovery verb of each capability, in discovery's (sorted) order.
VERB_CAPABILITIES: tuple[tuple[str, Any], ...] = (
    ("create", ICreater),
    ("delete", IGracefulDeleter),
    ("deletecollection", ICollectionDeleter),
    ("get", IGetter),
    ("list", ILister),
    ("patch", IPatcher),
    ("update", IUpdater),
    ("watch", IWatcher),
)


def verbs_of(storage: Any) -> list[str]:
    """
    The verbs C{storage} serves: upstream's installer (C{registerResourceHandlers}) asks the
    storage which of the L{VERB_CAPABILITIES} it provides.
    """
    return [verb for verb, iface in VERB_CAPABILITIES if iface.providedBy(storage)]


@dataclass
class ResourceSpec:
    """
    One row of a group-version's resource table (what C{APIResource} in discovery describes).

    @ivar group: API group, C{""} for core.
    @ivar version: C{v1}, ...
    @ivar resource: plural lower-case name (C{deployments}).
    @ivar kind: C{Deployment}.
    @ivar singular: C{deployment}.
    @ivar namespaced: whether objects live in namespaces.
    @ivar short_names: C{["deploy"]}.
    @ivar categories: C{["all"]}.
    @ivar subresources: names of subresources served (C{"status"}, C{"scale"}, ...).
    @ivar list_kind: defaults to C{<kind>List}.
    @ivar verbs: C{["create"]} for the create-only resources (reviews, C{bindings}), which the
        create handler answers without C{managedFields}; else empty.  The verbs served are not
        table data: they are the capabilities (L{IGetter}, ...) the resource's storage
        provides, which the installer reads (a test checks the two agree).
    """

    group: str
    version: str
    resource: str
    kind: str
    singular: str
    namespaced: bool = True
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    subresources: list[str] = field(default_factory=list)
    list_kind: str = ""
    verbs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.list_kind:
            self.list_kind = self.kind + "List"

    @property
    def api_version(self) -> str:
        """C{apps/v1}, or C{v1} for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version


@implementer(ITableConvertor)
@dataclass
class TableConvertor:
    """
    Server-side printing (upstream C{rest.TableConvertor} and the printers of
    C{pkg/printers/internalversion}).

    @ivar columns: C{metav1.TableColumnDefinition} dicts, in order:
        C{{"name": "Ready", "type": "string", "format": "", "description": "...",
        "priority": 0}}; priority 1 columns appear only in C{kubectl get -o wide}.
    @ivar row: C{obj -> list} of cells, one per column (strings, ints; ages as C{"5m"} strings).
    @ivar order: C{items -> items}: the row order of a list, when the printer sorts it
        (upstream C{printFlowSchemaList}); C{None} keeps the storage order.
    """

    columns: list[dict]
    row: Callable[[dict], list]
    order: Optional[Callable[[list[dict]], list[dict]]] = None


def _no_errors(*args: Any) -> list[FieldError]:
    return []


def _nothing(*args: Any) -> None:
    return None


@dataclass
class Strategy:
    """
    How the generic Store treats one resource (upstream's create/update/delete strategies).

    All callables take and mutate JSON-shaped dicts in place.

    @ivar kind: C{Deployment}; with C{group} used in 422 messages (C{Deployment.apps "x" is
        invalid: ...}).
    @ivar namespaced: upstream C{NamespaceScoped()}.
    @ivar default: scheme defaulting of the served version (upstream C{SetObjectDefaults_*}),
        run on every decoded request body (create, update, patch result) before admission.
    @ivar prepare_for_create: C{obj -> None}: clear/initialise fields on create (e.g. reset
        C{status}, set C{metadata.generation = 1}).
    @ivar prepare_for_update: C{(new, old) -> None}: e.g. keep C{old.status}, bump
        C{metadata.generation} when C{spec} changed.
    @ivar validate: C{obj -> list[FieldError]}: full validation of a new object, including
        ObjectMeta (names, labels, annotations).
    @ivar validate_update: C{(new, old) -> list[FieldError]}: validation of an update, including
        immutable fields.
    @ivar warnings: C{obj -> list[str]}: warnings for the C{Warning} header.
    @ivar field_attrs: C{obj -> dict[str, str]}: the field-selector attributes of an object
        (always at least C{metadata.name} and, when namespaced, C{metadata.namespace}).
    @ivar table: printer columns, or C{None} for the default C{Name}/C{Created At} table.
    @ivar canonicalize: C{obj -> None}: last normalisation of a validated object before it is
        stored (upstream C{Canonicalize}).
    @ivar allow_create_on_update: PUT of a missing object creates it (upstream
        C{AllowCreateOnUpdate}).
    @ivar allow_unconditional_update: PUT without C{resourceVersion} is accepted.
    @ivar scale_selector: C{obj -> str}: the C{status.selector} text of the C{scale}
        subresource, when C{spec.selector} is not a C{LabelSelector} (ReplicationControllers).
    @ivar unknown_fields: C{obj -> list[str]}: drop the fields of a decoded body the kind does
        not have and return their dotted paths (C{spec.storageos.secretName}), for
        C{fieldValidation}; C{None} when the kind does not check.
    @ivar veto_delete: C{(namespace, name) -> None}: a veto run first in a delete of one
        object, before the object is read (upstream registries that wrap C{Store.Delete}, e.g.
        PriorityClasses); raises a C{StatusError}.
    @ivar delete_warnings: C{(DeleteOptions dict) -> [warning text]}: C{Warning}s of a delete of
        one object, sent whatever its outcome (upstream's Job REST C{Delete}).
    """

    kind: str
    group: str = ""
    namespaced: bool = True
    default: Callable[[dict], None] = _nothing
    prepare_for_create: Callable[[dict], None] = _nothing
    prepare_for_update: Callable[[dict, dict], None] = _nothing
    validate: Callable[[dict], list[FieldError]] = _no_errors
    validate_update: Callable[[dict, dict], list[FieldError]] = _no_errors
    warnings: Callable[[dict], list[str]] = lambda obj: []
    field_attrs: Optional[Callable[[dict], dict[str, str]]] = None
    table: Optional[TableConvertor] = None
    canonicalize: Callable[[dict], None] = _nothing
    allow_create_on_update: bool = False
    allow_unconditional_update: bool = True
    scale_selector: Optional[Callable[[dict], str]] = None
    unknown_fields: Optional[Callable[[dict], list[str]]] = None
    veto_delete: Optional[Callable[[str, str], None]] = None
    delete_warnings: Callable[[dict], list[str]] = lambda options: []
    #: the verbs of a subresource served with this strategy (upstream's REST type for it:
    #: C{StatusREST} gets, patches and updates; C{FinalizeREST} only updates)
    subresource_verbs: tuple[str, ...] = ("get", "patch", "update")

    def attrs(self, obj: dict) -> dict[str, str]:
        """Field-selector attributes of C{obj}; the two metadata fields are always there."""
        meta = obj.get("metadata") or {}
        out = {"metadata.name": meta.get("name", "")}
        if self.namespaced:
            out["metadata.namespace"] = meta.get("namespace", "")
        if self.field_attrs is not None:
            out.update(self.field_attrs(obj))
        return out

