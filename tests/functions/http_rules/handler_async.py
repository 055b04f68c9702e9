# The http_rules function, async: served on the event-loop path, where the ASGI edge keeps HTTP's rules.
# HANDLER_MODULE_NAME=handler_async; the answers are handler.py's.
from handler import answer


async def main(req, res):
    return answer(req)
