#!/bin/sh
# Scaffolding written by funcwsgi: builds the function's container image.
#   build.sh IMAGE [build arguments...]     (func.yaml build.args are appended)
# The build context is this folder with the link ./f followed, so the function
# is sent to the builder without being copied on disk. CONTAINER_ENGINE picks
# docker or podman (default: the first one found). A CA bundle named by
# PIP_CERT is handed to the build as a secret for package downloads only.
set -eu
HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P)
IMAGE=${1:?usage: build.sh IMAGE [build arguments...]}
shift
ENGINE=${CONTAINER_ENGINE:-$(command -v docker || command -v podman || true)}
if [ -z "$ENGINE" ]; then
    echo "build.sh: neither docker nor podman is installed; install one or set CONTAINER_ENGINE" >&2
    exit 2
fi
FUNCTION=$(CDPATH='' cd -- "$HERE/f" && pwd -P)
case "$HERE" in
    "$FUNCTION"/*) SELF=./${HERE#"$FUNCTION"/} ;;  # this folder inside the function: ./dist, ./.func/build/0
    *) SELF=./.func ;;
esac
if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    set -- --secret "id=pip-cert,src=$PIP_CERT" "$@"
fi
# The context: this folder's files, then the function's folder renamed to f/
# (its own links are kept as links, so nothing loops back into .func or dist).
SCAFFOLDING=$(cd "$HERE" && ls -A | grep -vx f)
export DOCKER_BUILDKIT=1
# shellcheck disable=SC2086 # the scaffolding's file names have no spaces
tar -c -f - --exclude=__pycache__ --exclude='*.pyc' \
    -C "$HERE" $SCAFFOLDING \
    --exclude="$SELF" --exclude=./.func --exclude=./.git --exclude=./.venv --exclude=./.pytest_cache --exclude=./node_modules \
    --transform='s,^\.$,f,;s,^\./,f/,' -C "$FUNCTION" . \
    | "$ENGINE" build --tag "$IMAGE" "$@" -
