#!/bin/sh
# Scaffolding written by funcwsgi: starts the Node function as a service with
# the nodejs26 runtime. Arguments are settings for the service, NAME=value
# (func.yaml run.args are appended by 'funcwsgi run'). The function is where
# the link ./f leads, unless HANDLER_FOLDER says otherwise (a container sets it).
set -eu
HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
for setting in "$@"; do
    case "$setting" in
        [A-Z_]*=*) export "$setting" ;;
        *) echo "run.sh: argument '$setting' is invalid: expected NAME=value of a setting, e.g. SERVER_CALL_TIMEOUT=30" >&2; exit 2 ;;
    esac
done
if [ -z "${HANDLER_FOLDER:-}" ]; then
    HANDLER_FOLDER=$(CDPATH='' cd -- "$HERE/f" && pwd -P)
    export HANDLER_FOLDER
fi
exec "${NODEJS26_SERVE:-{{nodejs26_serve}}}"
