# The funcwsgi runtime image: funcwsgi in a virtual environment, run as a
# non-root user, serving the function mounted at /function with the adapter
# SERVER_ADAPTER names. Function images ('funcwsgi build') start FROM this
# image and add the function and its requirements. Kyma's Function controller
# runs it as a Python runtime image: `python server.py` in /, the function in
# /kubeless (docs/kyma.md).
#
#   DOCKER_BUILDKIT=1 docker build --tag funcwsgi-runtime:0.1.0 .
#   docker run -v "$PWD/examples/hello:/function:ro" -p 8080:8080 funcwsgi-runtime:0.1.0
#
# The image sets no funcwsgi setting: a setting in ENV would outrank the
# compatibility names platforms inject (FUNCTION_PATH, HANDLER_PATH, PORT).
# /function is the last folder the runtime looks in when none is named.
#
# Where package downloads need an extra CA (a TLS proxy), pass the bundle as a
# build secret; it is used for the install only and is not kept in any layer:
#   docker build --secret id=pip-cert,src=/etc/ssl/certs/ca-certificates.crt ...
ARG BASE_IMAGE=python:3.14-slim

# Installed with byte-compiled modules: the image cannot write them at run time
# (PYTHONDONTWRITEBYTECODE, a read-only venv), and compiling werkzeug, gunicorn and
# the rest from source at every start would double a cold start.
FROM ${BASE_IMAGE} AS install
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml setup.cfg README.md ./
COPY funcwsgi ./funcwsgi
COPY sdk ./sdk
# With Kyma's runtime packages: the image is also Kyma's Python runtime (docs/kyma.md).
COPY image/kyma-requirements.txt ./
ARG EXTRAS=""
RUN --mount=type=secret,id=pip-cert \
    if [ -s /run/secrets/pip-cert ]; then export PIP_CERT=/run/secrets/pip-cert; fi \
    && python3 -m venv /opt/funcwsgi/venv \
    && /opt/funcwsgi/venv/bin/pip install ".${EXTRAS:+[$EXTRAS]}" -r kyma-requirements.txt

FROM ${BASE_IMAGE}
ARG USER_ID=10001
RUN groupadd --system --gid "${USER_ID}" funcwsgi \
    && useradd --system --uid "${USER_ID}" --gid funcwsgi --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin funcwsgi \
    && mkdir -p /function
COPY --from=install /opt/funcwsgi/venv /opt/funcwsgi/venv
COPY --chmod=0644 image/server.py /server.py
# pip stays in the venv: Kyma's controller installs a function's requirements with it.
# GUNICORN_CMD_ARGS is gunicorn's own variable, not a funcwsgi setting: a plain
# `gunicorn funcwsgi:app` (an image's own command) reads funcwsgi's gunicorn settings
# from it and serves as `funcwsgi serve` does. One who sets their own keeps the -c in it.
ENV PATH=/opt/funcwsgi/venv/bin:${PATH} \
    VIRTUAL_ENV=/opt/funcwsgi/venv \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GUNICORN_CMD_ARGS="-c python:funcwsgi.gunicorn_conf"
WORKDIR /function
USER ${USER_ID}:${USER_ID}
EXPOSE 8080
ENTRYPOINT ["funcwsgi", "serve"]
