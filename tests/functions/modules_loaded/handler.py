"""A plain function that answers with the modules its process has imported, one name a line.

Nothing else: the test of lazy imports (tests/test_lazy_imports.py) serves it with the default
settings and reads what starting and serving it loaded.
"""

import sys


def main(req, res):
    res.set_body("\n".join(sorted(sys.modules)))
