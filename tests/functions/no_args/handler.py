import time

import sdk


def main():
    request = sdk.get_request()
    if request.args.get("sleep"):
        time.sleep(float(request.args["sleep"]))
    # Read the request again after the pause: under many threads it must still be ours.
    return {"id": request.args.get("id"), "again": sdk.get_request().args.get("id")}
