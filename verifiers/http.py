"""One HTTP client policy for OpenAI-compatible endpoints (the judge and the generation backend).

Built on ``httpx`` (a kept library: timeouts per phase, connection pooling, and every transport
failure as one exception family, where ``urllib`` lets ``http.client.IncompleteRead`` and
``BadStatusLine`` escape as unrelated types). What is still decided here, and why:

- **Redirects are not followed across origins.** The request carries ``Authorization: Bearer
  <key>``; following a redirect to another scheme/host/port would hand the key (and trust in the
  answer) to a server the user never named. A same-origin redirect (``/v1`` -> ``/v1/``) is
  followed with the key; any other is an :class:`EndpointError` naming where it pointed.
- **What is retried**: transport failures (refused, reset, timeouts, truncated bodies, garbage
  status lines), 408/425/429 and 5xx, and bodies that are not the expected JSON. Never 401/403
  (a wrong key does not become right) nor other 4xx. ``Retry-After`` (seconds or an HTTP date) is
  honoured, capped by ``max_wait_s``.
- The key never appears in an error message: errors name the URL and the status, not headers.
"""

from __future__ import annotations

import email.utils
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
MAX_REDIRECTS = 3


class EndpointError(RuntimeError):
    """A request to an endpoint failed; ``retryable`` says whether trying again can help."""

    def __init__(self, message: str, *, retryable: bool = True, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


def api_key(env_name: str | None, what: str) -> str | None:
    """The key from the environment variable ``env_name``; a clear ``ValueError`` when it is unset."""
    if not env_name:
        return None
    key = os.environ.get(env_name)
    if not key:
        raise ValueError(f"{what}: environment variable {env_name} (api_key_env) is not set or empty")
    return key


def base_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an endpoint's base URL (``None``: it can), decided before any request.

    A typo (``htp://``, ``localhost:80OO``) would otherwise fail every request, each retried; a
    ``user:password@`` part would be printed in every error message that names the URL.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in 0..65535
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return f"{url!r} is not an http:// or https:// URL"
    if not parts.hostname:
        return f"{url!r} names no host"
    if parts.username or parts.password:
        return "holds a user name or password; give the key through api_key_env (it is never printed)"
    return None


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date relative to now."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


_CLIENTS: dict[tuple[int, float], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(timeout_s: float):
    import httpx

    # One pooled client per process and timeout (httpx clients are thread-safe); redirects are
    # handled by post_json itself, never by httpx.
    key = (os.getpid(), timeout_s)
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=False)
        return _CLIENTS[key]


def post_json(url: str, body: Mapping[str, Any], *, key: str | None, timeout_s: float) -> Any:
    """POST ``body`` as JSON, return the decoded JSON answer; every failure is an :class:`EndpointError`."""
    import httpx

    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body, ensure_ascii=False).encode()
    start_origin = origin(url)
    target = url
    for _ in range(MAX_REDIRECTS + 1):
        try:
            resp = _client(timeout_s).post(target, content=data, headers=headers)
        except httpx.TimeoutException as exc:
            raise EndpointError(f"{target}: timed out after {timeout_s:g}s ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:  # refused, reset, truncated body, bad status line, bad URL...
            raise EndpointError(f"{target}: {type(exc).__name__}: {exc or 'transport error'}") from None
        except (ValueError, OSError) as exc:
            raise EndpointError(f"{target}: {type(exc).__name__}: {exc}") from None
        if resp.is_redirect:
            location = resp.headers.get("location", "")
            nxt = urljoin(target, location)
            if origin(nxt) != start_origin:
                raise EndpointError(
                    f"{target}: HTTP {resp.status_code} redirect to another origin ({nxt}) not followed: "
                    "the API key and the answers stay with the configured endpoint; set base_url to the real one",
                    retryable=False,
                )
            target = nxt
            continue
        status = resp.status_code
        if status >= 400:
            detail = resp.text[:300].replace("\n", " ") if resp.content else ""
            if status in (401, 403):
                raise EndpointError(f"{target}: HTTP {status} (check the API key / permissions): {detail}",
                                    retryable=False)
            raise EndpointError(
                f"{target}: HTTP {status}: {detail}",
                retryable=status in RETRY_STATUS or status >= 500,
                retry_after=retry_after_seconds(resp.headers.get("retry-after")),
            )
        try:
            return resp.json()
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise EndpointError(f"{target}: HTTP {status} with a body that is not JSON: {resp.text[:120]!r}") from None
    raise EndpointError(f"{url}: more than {MAX_REDIRECTS} redirects", retryable=False)


def chat_content(payload: Any, url: str) -> str:
    """The first choice's message text of a chat-completions answer."""
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise EndpointError(f"{url}: unexpected response shape: {str(payload)[:200]}") from None
    if content is not None and not isinstance(content, str):
        raise EndpointError(f"{url}: message content is {type(content).__name__}, expected a string")
    return content or ""


def with_retries(
    call: Callable[[], Any],
    *,
    retries: int,
    backoff_s: float,
    max_wait_s: float = 60.0,
    on_retry: Callable[[], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """``call()`` with up to ``retries`` retries of retryable :class:`EndpointError` s.

    Waits ``backoff_s * 2**n`` (or the server's ``Retry-After`` when longer, capped at
    ``max_wait_s``). The last error is re-raised with the attempt count.
    """
    errors: list[str] = []
    for attempt in range(retries + 1):
        if attempt:
            if on_retry is not None:
                on_retry()
        try:
            return call()
        except EndpointError as exc:
            errors.append(str(exc))
            if not exc.retryable or attempt == retries:
                raise EndpointError(
                    f"failed after {attempt + 1} attempt(s): " + " | ".join(errors[-3:]), retryable=False
                ) from None
            wait = backoff_s * 2 ** attempt
            if exc.retry_after is not None:
                wait = max(wait, exc.retry_after)
            sleep(min(wait, max_wait_s))
    raise AssertionError("unreachable")
