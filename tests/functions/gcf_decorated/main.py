# A Functions Framework function that keeps its decorator: the library must be
# installed next to funcwsgi (it pins cloudevents 1.x).
import functions_framework


@functions_framework.http
def hello_http(request):
    name = (request.get_json(silent=True) or {}).get("name") or request.args.get("name", "World")
    return {"message": f"Hello {name}!", "framework": "functions-framework"}
