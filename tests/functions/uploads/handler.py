"""Reads the uploaded files and hands their streams to the test (through a list the test put in the environ)."""


def main(request):
    request.environ["tests.uploads"].extend(upload.stream for upload in request.files.values())
    sizes = {name: len(upload.read()) for name, upload in request.files.items()}
    if request.args.get("streamed"):
        return (chunk for chunk in [repr(sorted(sizes.items())).encode()])
    return sizes
