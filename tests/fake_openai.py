"""A real OpenAI-compatible HTTP server on loopback whose answers a test scripts.

``FakeOpenAI(handler)`` serves ``POST /v1/chat/completions``; ``handler(body) -> (status, content)``
decides each answer from the request body (``content`` is the assistant message text, a list of
texts for several choices, as a request with ``n`` gets them, or a raw dict payload when status
!= 200). ``delay`` makes the server slow (timeouts). Requests are
recorded in ``.requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[dict[str, Any]], "tuple[int, Any]"]


class FakeOpenAI:
    def __init__(self, handler: Handler, delay: float = 0.0) -> None:
        self.handler = handler
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        outer = self

        class _H(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append(body)
                outer.headers.append(dict(self.headers))
                if outer.delay:
                    time.sleep(outer.delay)
                status, content = outer.handler(body)
                if status == 200:
                    payload = {
                        "id": "x",
                        "object": "chat.completion",
                        "choices": [{"index": i, "message": {"role": "assistant", "content": text}}
                                    for i, text in enumerate(content if isinstance(content, list) else [content])],
                    }
                else:
                    payload = content if isinstance(content, dict) else {"error": str(content)}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a chat request."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
