"""What the tests, the conformance kit and the benchmarks share: one module per kind of helper.

- ``paths``: the repository, the virtualenv's programs, the user-function fixtures.
- ``ports``: free loopback ports, handed out once each (the suite's range and the kit's).
- ``processes``: a server as a subprocess (``Server``), a command run to its end, the environment
  without funcwsgi's settings, a process's tree from /proc.
- ``sockets``: raw-socket clients (``connect``, ``until_closed``, ``exchange``, ...).
- ``wsgi``: the server's side of an in-process WSGI call (``StartResponse``, ``drain``).
- ``logs``: the JSON records in a server's output, JSON-lines files.
- ``polling``: ``wait_for`` a condition, never a guessed sleep.
- ``metrics``: reading a Prometheus exposition (``samples``, ``metric_total``, ``by_method``).
- ``manifests``, ``crd_schemas``: Kubernetes manifests against the official and the CRD schemas.
- ``calibration``: how slow the machine is now, to scale timing bounds.
- ``receivers``: a real HTTP receiver that keeps what is POSTed to it.
- ``dap``: a Debug Adapter Protocol client, as VS Code speaks it to debugpy.

The rule: a helper two test modules use lives here, once. Apart from
``manifests``, ``crd_schemas`` and ``dap``, every module imports the standard library
only (``base_env`` and ``Received.cloud_event`` import funcwsgi when called),
so the kit (tests/conformance) and bench/ can use them anywhere.
"""
