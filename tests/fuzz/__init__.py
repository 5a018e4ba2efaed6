"""
Property-based tests of hostile input (hypothesis): request bodies and patches generated from
the type tables (L{kubetwist.runtime.types}), with values of the wrong type, deep nesting,
huge strings and unicode edge cases, sent to an in-process server; every answer must be a
C{Status} with a 4xx code (never a 500) and nothing the Go types could not hold is stored.

The C{ci} settings profile (the default) is deterministic (C{derandomize}) and bounded to a
few minutes for the whole package; C{KUBETWIST_FUZZ_PROFILE=long} runs many more examples
with random seeds, by hand.
"""
