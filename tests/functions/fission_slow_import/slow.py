"""A Fission function whose import outlasts the test's one-second call timeout, as a heavy library's can."""

import time

from flask import request

time.sleep(1.5)


def main():
    if request.args.get("sleep"):
        time.sleep(float(request.args["sleep"]))
    return "loaded slowly\n"
