"""Certificates: KKT reports, ERM optimality, separability certificate checks."""
