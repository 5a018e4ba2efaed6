from kubernetes import client, watch


def test_deployment(kubetwist_client):
    apps = client.AppsV1Api(kubetwist_client)
    pod = {"containers": [{"name": "web", "image": "nginx"}]}
    apps.create_namespaced_deployment("default", {"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod}}})
    events = watch.Watch().stream(apps.list_namespaced_deployment, "default", timeout_seconds=5)
    assert next(events)["object"].metadata.name == "web"
