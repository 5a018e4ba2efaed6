"""Tests of L{kubetwist.extension} and the wardle example."""
