def handle(req):
    """python3-flask's handle(req): req is the request body, as text unless RAW_BODY=true."""
    return f"{type(req).__name__}:{req!r}"
