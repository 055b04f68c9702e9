"""A multi-file Fission function: `fission fn create --src ... --entrypoint users.main`."""

from flask import request
from helpers import status_for


def main():
    return request.args.get("name", "nobody"), status_for(request.method)
