def status_for(method):
    return 201 if method == "POST" else 200
