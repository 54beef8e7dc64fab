"""Exact formulations: declarative cvxpy problems (the reference solutions)."""
