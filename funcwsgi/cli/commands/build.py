"""``funcwsgi build``: the function's container image, from scaffolding in ``.func/build/N``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .. import scaffolding
from ..containers import ENGINE_ENV, find_engine
from ..project import Project, ProjectError, load_project

NAME = "build"
HELP = "Build the function's container image (docker or podman), FROM the funcwsgi runtime image."
EPILOG = f"""examples:
  funcwsgi build                          # image NAME:latest (or func.yaml's image)
  funcwsgi build --image registry.example/hello:1
  funcwsgi build --push                   # then push it to its registry (see 'funcwsgi push')
  funcwsgi build --context-only           # write .func/build/N and stop, for another builder
  funcwsgi build -- --network host        # arguments after -- go to the image build command

The build context is .func/build/N: a Dockerfile FROM {scaffolding.RUNTIME_IMAGE}
(a Node function's: FROM {scaffolding.NODEJS26_IMAGE}; --runtime-image to change
it), service.py, run.sh, build.sh and the link f to the function; build.sh sends it to the builder with the link followed. It is
removed afterwards unless --keep or --context-only is given. In a scaffolded
project (func.yaml scaffolded: true) ./dist/build.sh is used instead.
Set {ENGINE_ENV} to choose docker or podman; PIP_CERT, if set, names a CA
bundle handed to the build as a secret for package downloads.
"""
ACCEPTS_EXTRA = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", metavar="DIR", help="the function's folder (default: the current folder)")
    parser.add_argument("--image", "-i", help="name:tag of the image (default: func.yaml's image, else NAME:latest)")
    parser.add_argument("--push", action="store_true", help="push the image to its registry once built")
    parser.add_argument("--context-only", action="store_true", help="write the build context and stop, without building")
    parser.add_argument("--keep", action="store_true", help="keep .func/build/N after building")
    parser.add_argument(
        "--runtime-image", metavar="IMAGE",
        help=f"the runtime image to build FROM (default {scaffolding.RUNTIME_IMAGE}, or {scaffolding.NODEJS26_IMAGE} for a Node function)",
    )


def run(args: argparse.Namespace) -> int:
    project = load_project(args.directory)
    image = args.image or project.default_image
    extra = list(getattr(args, "extra", []))
    if args.push:
        from .push import push_image, pushed_image

        image = pushed_image(project, args.image)  # checked before a long build
        if args.context_only:
            raise ProjectError("--push and --context-only exclude each other: --context-only builds nothing to push")
        status = build_image(project, image, extra=extra, keep=args.keep, runtime_image=args.runtime_image)
        return status or push_image(image)
    if args.context_only:
        context = prepare_context(project)
        print(f"Wrote the build context of {project.name!r} to {context}")
        print(f"Build it with: {context / 'build.sh'} {image}")
        print("  (build.sh streams the context to 'docker build -' with the function's folder as f/)")
        return 0
    return build_image(project, image, extra=extra, keep=args.keep, runtime_image=args.runtime_image)


def prepare_context(project: Project) -> Path:
    """The folder holding the Dockerfile and build.sh: ./dist when scaffolded, else a new .func/build/N."""
    requirements = project.root / "requirements.txt"
    if not project.is_node and not requirements.is_file():
        raise ProjectError(f"{requirements} is missing; the image installs the function's requirements from it (an empty file will do)")
    if project.scaffolded:
        return scaffolded_dir(project, "build.sh")
    context = scaffolding.claim(project.func_dir / "build")
    try:
        scaffolding.write(project, context)
    except BaseException:
        scaffolding.remove(context)
        raise
    return context


def scaffolded_dir(project: Project, script: str) -> Path:
    if not (project.dist / script).is_file():
        raise ProjectError(
            f"func.yaml says scaffolded: true but {project.dist / script} is missing; run 'funcwsgi scaffold --force' or set scaffolded: false"
        )
    return project.dist


def build_image(project: Project, image: str, *, extra: list[str], keep: bool, runtime_image: str | None) -> int:
    """Run ``build.sh`` for ``project``; its exit status, after removing the context unless ``keep``."""
    engine = find_engine("build", "write the context with --context-only and build it with another builder")
    context = prepare_context(project)
    command = [str(context / "build.sh"), image]
    if runtime_image:
        command += ["--build-arg", f"RUNTIME_IMAGE={runtime_image}"]
    command += [*project.build_args, *extra]
    print(f"Building image {image} with {os.path.basename(engine)} from {context} ...", file=sys.stderr, flush=True)
    try:
        result = subprocess.run(command, env={**os.environ, ENGINE_ENV: engine}, cwd=project.root)
    finally:
        if not keep and not project.scaffolded:
            scaffolding.remove(context)
    if result.returncode != 0:
        print(f"funcwsgi: error: building {image} failed (exit status {result.returncode}); see the builder's output above", file=sys.stderr)
        return 1
    print(f"Built image {image}", file=sys.stderr)
    return 0
