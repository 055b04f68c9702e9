"""The event-loop path: async functions served through ASGI, thousands of awaiting calls per worker.

- :mod:`.asgi`: the ASGI edge, :class:`~.asgi.AsgiService`, in front of the one middleware stack;
- :mod:`.bridge`: each call's stack in a greenlet that hands its waits to the call's task;
- :mod:`.coroutines`: how the function's coroutine is awaited, on the loop or on a server thread's own loop;
- :mod:`.watch`: the loop's heartbeat, and what happens when sync code blocks it.

See docs/async.md.
"""
