from twisted.application.service import ServiceMaker

kubeapi = ServiceMaker("kubetwist", "kubetwist.tap",
                       "A Kubernetes API server (kube-apiserver on Twisted).", "kubeapi")
