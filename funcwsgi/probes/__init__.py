"""The probes' answers: readiness and liveness, each a WSGI app the reserved routes call.

:mod:`funcwsgi.middleware.reserved` is the layer that routes a probe here.
"""
