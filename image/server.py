"""The runtime image's entry point for Kyma's Function controller.

The controller runs a Python runtime image with the working directory
``/kubeless`` (an emptyDir holding the function's sources), installs the
function's requirements into ``/kubeless/.local`` (put on ``PYTHONPATH``)
and then starts ``python server.py`` from ``/``. It injects
``FUNCTION_PATH=/kubeless``, ``MOD_NAME=handler`` and ``FUNC_HANDLER=main``,
which funcwsgi reads as compatibility names of ``HANDLER_FOLDER``,
``HANDLER_MODULE_NAME`` and ``HANDLER_FUNCTION_NAME``: serving is all that
is left to do here, exactly as ``funcwsgi serve`` does it.
"""

import sys

from funcwsgi.cli import main

if __name__ == "__main__":
    sys.exit(main(["serve"]))
