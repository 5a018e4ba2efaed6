# -*- test-case-name: tests.apimachinery.test_field -*-
"""Moved to L{kubetwist.runtime.field} (field errors sit below L{kubetwist.runtime.errors});
this name stays the same module until every import names the new place."""

import sys

from kubetwist.runtime import field as _field

sys.modules[__name__] = _field
