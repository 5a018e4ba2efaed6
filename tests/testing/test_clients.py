"""
Real Python Kubernetes client libraries against the L{kubetwist.testing} fixture: the official
C{kubernetes} client (typed API, watch, an informer-style list+watch loop, the dynamic
client), C{kubernetes-asyncio}, C{lightkube} and C{kr8s}.  Each does create, get, list,
watch, patch, server-side apply and delete on a built-in kind (ConfigMap) and on a custom
resource (the Widget CRD of C{widgets-crd.yaml}).  One server serves the whole module.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.testing import KubeServerMixin

HERE = os.path.dirname(os.path.abspath(__file__))
CRD = os.path.join(HERE, "widgets-crd.yaml")
GROUP, VERSION, PLURAL = "example.kubetwist.dev", "v1", "widgets"
WIDGET_API = f"{GROUP}/{VERSION}"


def widget(name: str, namespace: str, size: int = 1) -> dict:
    return {"apiVersion": WIDGET_API, "kind": "Widget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"size": size, "color": "red"}}


class ClientLibraryTests(KubeServerMixin, SynchronousTestCase):
    """One fixture server for every library (the mixin shares it across the class)."""

    kubetwist_crds = [CRD]

    def namespace(self, name: str) -> str:
        code, body = self.kube.request("POST", "/api/v1/namespaces",
                                       {"metadata": {"name": name}})
        self.assertIn(code, (201, 409), body)
        return name

    # --- the official client -------------------------------------------------------------
    def test_official_builtin(self) -> None:
        """Typed CoreV1Api: create/get/list/patch/apply/watch/delete a ConfigMap."""
        from kubernetes import client, watch
        from kubernetes.client.rest import ApiException

        ns = self.namespace("official-builtin")
        core = client.CoreV1Api(self.api_client)
        made = core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"), data={"a": "1"}))
        self.assertEqual(made.data, {"a": "1"})
        self.assertEqual(core.read_namespaced_config_map("cm", ns).metadata.uid,
                         made.metadata.uid)
        listed = core.list_namespaced_config_map(ns)
        self.assertIn("cm", [i.metadata.name for i in listed.items])
        patched = core.patch_namespaced_config_map("cm", ns, {"data": {"b": "2"}})
        self.assertEqual(patched.data, {"a": "1", "b": "2"})
        applied = core.patch_namespaced_config_map(
            "cm", ns, {"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "cm"}, "data": {"c": "3"}},
            field_manager="official-test", force=True,
            _content_type="application/apply-patch+yaml")
        self.assertEqual(applied.data, {"a": "1", "b": "2", "c": "3"})
        self.assertIn("official-test", [m.manager for m in applied.metadata.managed_fields])
        events = watch.Watch().stream(core.list_namespaced_config_map, ns,
                                      resource_version=listed.metadata.resource_version,
                                      timeout_seconds=10)
        seen = []
        for event in events:
            seen.append((event["type"], dict(event["object"].data or {})))
            if len(seen) == 2:
                break
        self.assertEqual(seen, [("MODIFIED", {"a": "1", "b": "2"}),
                                ("MODIFIED", {"a": "1", "b": "2", "c": "3"})])
        core.delete_namespaced_config_map("cm", ns)
        with self.assertRaises(ApiException) as caught:
            core.read_namespaced_config_map("cm", ns)
        self.assertEqual(caught.exception.status, 404)

    def test_official_custom_resource(self) -> None:
        """CustomObjectsApi on the Widget CRD, the status subresource included."""
        from kubernetes import client, watch
        from kubernetes.client.rest import ApiException

        ns = self.namespace("official-crd")
        api = client.CustomObjectsApi(self.api_client)
        args = (GROUP, VERSION, ns, PLURAL)
        made = api.create_namespaced_custom_object(*args, widget("w", ns))
        self.assertEqual(made["spec"]["size"], 1)
        self.assertEqual(api.get_namespaced_custom_object(*args, "w")["metadata"]["uid"],
                         made["metadata"]["uid"])
        listed = api.list_namespaced_custom_object(*args)
        self.assertEqual([i["metadata"]["name"] for i in listed["items"]], ["w"])
        patched = api.patch_namespaced_custom_object(*args, "w", {"spec": {"size": 2}})
        self.assertEqual(patched["spec"], {"size": 2, "color": "red"})
        status = api.patch_namespaced_custom_object_status(*args, "w",
                                                           {"status": {"ready": True}})
        self.assertEqual(status["status"], {"ready": True})
        applied = api.patch_namespaced_custom_object(
            *args, "w", {"apiVersion": WIDGET_API, "kind": "Widget",
                         "metadata": {"name": "w"}, "spec": {"color": "blue"}},
            field_manager="official-test", force=True,
            _content_type="application/apply-patch+yaml")
        self.assertEqual(applied["spec"], {"size": 2, "color": "blue"})
        stream = watch.Watch().stream(api.list_namespaced_custom_object, *args,
                                      resource_version=listed["metadata"]["resourceVersion"],
                                      timeout_seconds=10)
        kinds = []
        for event in stream:
            kinds.append(event["type"])
            if len(kinds) == 3:
                break
        self.assertEqual(kinds, ["MODIFIED"] * 3)
        api.delete_namespaced_custom_object(*args, "w")
        with self.assertRaises(ApiException) as caught:
            api.get_namespaced_custom_object(*args, "w")
        self.assertEqual(caught.exception.status, 404)

    def test_official_informer(self) -> None:
        """An informer-style loop: list, then watch from the list's resourceVersion in a
        thread keeping a cache, which follows creates, updates and deletes."""
        from kubernetes import client, watch

        ns = self.namespace("official-informer")
        core = client.CoreV1Api(self.api_client)
        core.create_namespaced_config_map(ns, {"metadata": {"name": "before"}})
        listed = core.list_namespaced_config_map(ns)
        cache = {i.metadata.name: i for i in listed.items}
        changed = threading.Condition()
        w = watch.Watch()

        stopping = threading.Event()

        def run() -> None:
            try:
                for event in w.stream(core.list_namespaced_config_map, ns,
                                      resource_version=listed.metadata.resource_version,
                                      timeout_seconds=30):
                    obj = event["object"]
                    with changed:
                        if event["type"] == "DELETED":
                            cache.pop(obj.metadata.name, None)
                        else:
                            cache[obj.metadata.name] = obj
                        changed.notify_all()
            except Exception:
                # Watch.stop() shuts the socket down under this thread (the client's way to
                # unblock its SSL read), which the read then reports
                if not stopping.is_set():
                    raise

        thread = threading.Thread(target=run, daemon=True)
        thread.start()

        def stop() -> None:
            stopping.set()
            w.stop()  # seen at the next event: make one
            core.create_namespaced_config_map(ns, {"metadata": {"name": "wake-up"}})
            thread.join(30)

        self.addCleanup(stop)

        def wait_for(predicate) -> None:
            with changed:
                self.assertTrue(changed.wait_for(lambda: predicate(cache), timeout=20), cache)

        core.create_namespaced_config_map(ns, {"metadata": {"name": "after"},
                                               "data": {"x": "1"}})
        wait_for(lambda c: "after" in c)
        core.patch_namespaced_config_map("after", ns, {"data": {"x": "2"}})
        wait_for(lambda c: c["after"].data == {"x": "2"})
        core.delete_namespaced_config_map("before", ns)
        wait_for(lambda c: "before" not in c)
        self.assertEqual(sorted(cache), ["after", "kube-root-ca.crt"])

    def test_official_dynamic(self) -> None:
        """The dynamic client: discovery, then server-side apply of a Widget."""
        from kubernetes.dynamic import DynamicClient

        ns = self.namespace("official-dynamic")
        dynamic = DynamicClient(self.api_client)
        widgets = dynamic.resources.get(api_version=WIDGET_API, kind="Widget")
        applied = widgets.server_side_apply(body=widget("d", ns, 5), name="d", namespace=ns,
                                            field_manager="dynamic-test")
        self.assertEqual(applied.spec.size, 5)
        self.assertEqual([i.metadata.name for i in widgets.get(namespace=ns).items], ["d"])
        widgets.delete(name="d", namespace=ns)
        self.assertEqual(widgets.get(namespace=ns).items, [])

    # --- kubernetes-asyncio --------------------------------------------------------------
    def test_kubernetes_asyncio(self) -> None:
        """kubernetes-asyncio: the same verbs on a ConfigMap and a Widget, and a watch."""
        ns = self.namespace("asyncio")

        async def main() -> list:
            from kubernetes_asyncio import client, config, watch

            api_client = await config.new_client_from_config(config_file=self.kube.kubeconfig)
            async with api_client:
                core = client.CoreV1Api(api_client)
                await core.create_namespaced_config_map(
                    ns, {"metadata": {"name": "cm"}, "data": {"a": "1"}})
                got = await core.read_namespaced_config_map("cm", ns)
                listed = await core.list_namespaced_config_map(ns)
                await core.patch_namespaced_config_map("cm", ns, {"data": {"b": "2"}})
                applied = await core.patch_namespaced_config_map(
                    "cm", ns, {"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "cm"}, "data": {"c": "3"}},
                    field_manager="asyncio-test", force=True,
                    _content_type="application/apply-patch+yaml")
                seen = []
                async with watch.Watch().stream(
                        core.list_namespaced_config_map, ns,
                        resource_version=listed.metadata.resource_version,
                        timeout_seconds=10) as stream:
                    async for event in stream:
                        seen.append(event["type"])
                        if len(seen) == 2:
                            break
                await core.delete_namespaced_config_map("cm", ns)
                custom = client.CustomObjectsApi(api_client)
                args = (GROUP, VERSION, ns, PLURAL)
                await custom.create_namespaced_custom_object(*args, widget("w", ns))
                await custom.patch_namespaced_custom_object(
                    *args, "w", {"spec": {"size": 7}},
                    _content_type="application/merge-patch+json")
                crs = await custom.list_namespaced_custom_object(*args)
                await custom.delete_namespaced_custom_object(*args, "w")
                left = await custom.list_namespaced_custom_object(*args)
                return [got.data, applied.data, seen,
                        [(i["metadata"]["name"], i["spec"]["size"]) for i in crs["items"]],
                        left["items"]]

        got, applied, seen, crs, left = asyncio.run(main())
        self.assertEqual(got, {"a": "1"})
        self.assertEqual(applied, {"a": "1", "b": "2", "c": "3"})
        self.assertEqual(seen, ["MODIFIED", "MODIFIED"])
        self.assertEqual(crs, [("w", 7)])
        self.assertEqual(left, [])

    # --- lightkube -----------------------------------------------------------------------
    def test_lightkube(self) -> None:
        """lightkube (httpx): typed ConfigMap and a generic resource for the Widget."""
        from lightkube import Client, KubeConfig
        from lightkube.generic_resource import create_namespaced_resource
        from lightkube.models.meta_v1 import ObjectMeta
        from lightkube.resources.core_v1 import ConfigMap
        from lightkube.types import PatchType

        ns = self.namespace("lightkube")
        kube = Client(config=KubeConfig.from_file(self.kube.kubeconfig), field_manager="lk")
        self.addCleanup(kube.close)
        kube.create(ConfigMap(metadata=ObjectMeta(name="cm", namespace=ns), data={"a": "1"}))
        self.assertEqual(kube.get(ConfigMap, "cm", namespace=ns).data, {"a": "1"})
        listed = list(kube.list(ConfigMap, namespace=ns))
        self.assertIn("cm", [i.metadata.name for i in listed])
        code, rv = self.kube.request("GET", f"/api/v1/namespaces/{ns}/configmaps")
        rv = rv["metadata"]["resourceVersion"]
        kube.patch(ConfigMap, "cm", {"data": {"b": "2"}}, namespace=ns)
        applied = kube.apply(ConfigMap(metadata=ObjectMeta(name="cm", namespace=ns),
                                       data={"c": "3"}), force=True)
        self.assertEqual(applied.data, {"a": "1", "b": "2", "c": "3"})
        seen = []
        for kind, obj in kube.watch(ConfigMap, namespace=ns, resource_version=rv):
            seen.append((kind, obj.data))
            if len(seen) == 2:
                break
        self.assertEqual([k for k, _ in seen], ["MODIFIED", "MODIFIED"])
        kube.delete(ConfigMap, "cm", namespace=ns)
        self.assertNotIn("cm", [i.metadata.name for i in kube.list(ConfigMap, namespace=ns)])

        Widget = create_namespaced_resource(GROUP, VERSION, "Widget", PLURAL)
        kube.create(Widget(widget("w", ns)))
        kube.patch(Widget, "w", {"spec": {"size": 3}}, namespace=ns,
                   patch_type=PatchType.MERGE)
        applied = kube.apply(Widget(widget("w", ns, 4)), force=True)
        self.assertEqual(applied.spec["size"], 4)
        self.assertEqual(kube.get(Widget, "w", namespace=ns).spec, {"size": 4, "color": "red"})
        kube.delete(Widget, "w", namespace=ns)
        self.assertEqual(list(kube.list(Widget, namespace=ns)), [])

    # --- kr8s ----------------------------------------------------------------------------
    def test_kr8s(self) -> None:
        """kr8s (asyncio API): objects, a watch and server-side apply through call_api."""
        ns = self.namespace("kr8s")

        async def main() -> list:
            import kr8s.asyncio
            from kr8s.asyncio.objects import ConfigMap, new_class

            api = await kr8s.asyncio.api(kubeconfig=self.kube.kubeconfig)
            cm = await ConfigMap({"metadata": {"name": "cm", "namespace": ns},
                                  "data": {"a": "1"}}, api=api)
            await cm.create()
            got = await ConfigMap.get("cm", namespace=ns, api=api)
            listed = [o.name async for o in api.get("configmaps", namespace=ns)]
            code, body = self.kube.request("GET", f"/api/v1/namespaces/{ns}/configmaps")
            since = body["metadata"]["resourceVersion"]
            await got.patch({"data": {"b": "2"}})
            ssa = {"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cm", "namespace": ns}, "data": {"c": "3"}}
            async with api.call_api(
                    "PATCH", version="v1", url="configmaps/cm", namespace=ns,
                    content=json.dumps(ssa),
                    headers={"Content-Type": "application/apply-patch+yaml"},
                    params={"fieldManager": "kr8s-test", "force": "true"}) as response:
                applied = response.json()["data"]
            seen = []
            async for kind, _obj in api.watch("configmaps", namespace=ns, since=since):
                seen.append(kind)
                if len(seen) == 2:
                    break
            await got.delete()
            exists = await got.exists()
            Widget = new_class(kind="Widget", version=WIDGET_API, namespaced=True,
                               asyncio=True)
            w = await Widget(widget("w", ns), api=api)
            await w.create()
            await w.patch({"spec": {"size": 9}})
            await w.refresh()
            size = w.spec["size"]
            widgets = [o.name async for o in api.get("widgets." + GROUP, namespace=ns)]
            await w.delete()
            return [listed, applied, seen, exists, size, widgets]

        listed, applied, seen, exists, size, widgets = asyncio.run(main())
        self.assertIn("cm", listed)
        self.assertEqual(applied, {"a": "1", "b": "2", "c": "3"})
        self.assertEqual(seen, ["MODIFIED", "MODIFIED"])
        self.assertFalse(exists)
        self.assertEqual(size, 9)
        self.assertEqual(widgets, ["w"])
