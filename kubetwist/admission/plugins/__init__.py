"""Built-in admission plugins: upstream C{k8s.io/kubernetes/plugin/pkg/admission}."""
