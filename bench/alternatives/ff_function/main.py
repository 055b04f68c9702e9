"""The same hello world for Google's Functions Framework (``--target hello``)."""


def hello(request):
    return "Hello, world!"
