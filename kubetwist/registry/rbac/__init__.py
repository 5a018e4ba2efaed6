"""RBAC registry behaviour: the bootstrap policy hook and escalation prevention."""
