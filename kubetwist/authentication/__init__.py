# -*- test-case-name: tests.authentication -*-
"""
Request authentication: upstream C{k8s.io/apiserver/pkg/authentication}.

An authenticator (L{kubetwist.authentication.authenticator.IAuthenticator}) turns a request's
credentials into a L{kubetwist.authentication.user.UserInfo}; L{kubetwist.authentication.config}
assembles kube-apiserver's chain from the options.
"""
