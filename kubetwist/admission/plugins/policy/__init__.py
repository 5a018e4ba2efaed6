# -*- test-case-name: tests.admission.test_policy -*-
"""
The C{ValidatingAdmissionPolicy} admission plugin: upstream
C{k8s.io/apiserver/pkg/admission/plugin/policy/validating} (the dispatcher and validator),
C{.../policy/generic} (policy sources, C{CollectParams}), C{.../policy/matching} and
C{.../plugin/cel} (compilation, composition of C{variables}, cost budgets).

L{compiler} compiles and evaluates a policy's CEL (the shared environment of
L{kubetwist.cel}); L{matching} matches requests against C{matchConstraints} and binding
C{matchResources}; L{plugin} holds the plugin (policies and bindings followed by a watch),
L{typechecking} the status controller that fills C{status.typeChecking}.
"""
