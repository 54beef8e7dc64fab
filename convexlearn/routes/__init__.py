"""Routes: which algorithm answers a problem's ``solve()``, in which order, with which fallback.

One module per problem family (:mod:`.svm`, :mod:`.erm`, :mod:`.halfspace`). A route ends in
the problem's certificate, recomputed from the data by :mod:`convexlearn.certify`; the
chain keeps the first certified answer and records the route in ``provenance["route"]``.
Routes call solvers and formulations; problem classes call routes.
"""
