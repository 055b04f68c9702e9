#!/bin/sh
# Scaffolding written by funcwsgi: starts the function as a service.
# Arguments are settings for the service, NAME=value (func.yaml run.args are
# appended by 'funcwsgi run'). The image built by build.sh runs this script.
set -eu
HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
exec "${PYTHON:-python3}" "$HERE/service.py" "$@"
