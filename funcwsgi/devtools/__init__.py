"""Developer tooling: what a function's author uses around the runtime, not on a request's path.

A wing, like ``cli/`` and ``compat/``: it imports the core, and the core never
imports it. Its public name is :mod:`funcwsgi.testing`, a re-export of
:mod:`funcwsgi.devtools.function_client`.
"""
