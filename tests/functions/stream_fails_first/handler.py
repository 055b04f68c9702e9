"""A streamed body that fails before (or after) its first chunk: tests/adapters/test_stream_failures.py."""


def chunks(path):
    if path == "/empty-first":
        yield b""  # an empty chunk sends nothing: the failure after it is still before the body
    if path == "/int-first":
        yield 5  # not bytes or str: the function's error
    if path == "/late":
        yield "first\n"
    if path != "/ok":
        raise RuntimeError("secret token hunter2")
    yield "whole\n"


def main(req, res):
    return chunks(req.path)
