"""Iterative methods: one module per method, each returning a :class:`~convexlearn.Solution`."""
