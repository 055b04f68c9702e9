def main(request):
    data = request.get_json(silent=True) or {}
    return {"method": request.method, "name": data.get("name", request.args.get("name", "world"))}
