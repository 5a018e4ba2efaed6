"""Examples of servers built with kubetwist as a library (see C{docs/library.md})."""
