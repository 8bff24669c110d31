"""The HTTP service over the online detector (FastAPI + uvicorn): ``neardup serve``.

Owns routes, authentication, request limits, error responses and metrics; must not decide
duplicates (it calls :class:`neardup.online.detector.Detector`) or know SQL.

Routes (all JSON but ``/metrics``; every route but ``/health``, ``/openapi.json`` and ``/docs`` needs
``Authorization: Bearer TOKEN`` when a token is set):

* ``POST /documents`` - one object ``{"id", "text", ...metadata}`` or a list of them (one
  transaction, all or nothing). Answers ``{id, status, original_id, matched_id, score, evidence,
  update_of, created, latency_ms}`` (a list for a list). Re-sending an id with the same text returns
  the stored answer (``created: false``); with another text it is 409 and nothing changes. An id is a
  string or an integer (taken as its decimal string: ``7`` and ``"7"`` are one document) of 1 to 1024
  characters; what metadata may hold: :mod:`neardup.online.detector` (finite numbers, no lone
  surrogates, nesting at most 64 levels, no NUL in a PostgreSQL store).
* ``GET /documents/{id}``, ``DELETE /documents/{id}``, ``GET /clusters/{original_id}``;
* ``GET /health`` (reads the store itself, see :meth:`Store.check <neardup.online.store.Store.check>`,
  and its counts); ``GET /metrics``: counts, counters since start and latency percentiles in the Prometheus
  text format (:func:`prometheus_text`, what monitoring scrapes); ``GET /stats`` (or
  ``/metrics?format=json``): the same as JSON.

Without a token the service is for this machine only, and refuses what a web page could make a
browser send it: a request whose ``Host`` is not one of the server's names (``localhost``, loopback
addresses, the address it was reached on, ``host`` and ``allowed_hosts``: ``--allowed-host``) is 421,
which stops DNS rebinding; a ``POST`` (or a ``DELETE`` with a body type) whose ``Content-Type`` is not
``application/json`` is 415, which stops cross-site form and ``text/plain`` posts. With a token the
``Host`` is checked only when ``allowed_hosts`` are given. Wrong tokens are limited per client address
(:class:`FailedTokens`: 10 a minute by default, then 429 with ``Retry-After`` for that address, even
with the right token, until the minute has passed; other addresses are not affected). A token may be any
text without control characters or surrounding spaces; clients send it UTF-8 encoded (curl, browsers),
or Latin-1 encoded where it fits (Python's ``http.client`` and ``requests``).

Errors (every one a JSON object with ``detail``): 400 body is not JSON (or nested too deeply to read);
401 missing/wrong token; 404 unknown id; 409 conflicting id; 413 body over ``max_body_bytes`` or more
than ``max_batch`` documents; 415 not JSON (no token); 421 foreign ``Host``; 422 a field missing, of the
wrong type, or holding what cannot be stored as it came (a lone surrogate ``"\\ud800"``, NaN or
Infinity, an integer of more than 4300 digits, deeper nesting, NUL in PostgreSQL; ``loc`` names the list
index and field); 429 too many wrong tokens; 503 the store failed or is damaged (``/health`` too, with
the reason), never 500. A 503's reason never names the store's location (file path, connection URL or
any part of it): the server's log has the full message.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import math
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.convertors import PathConvertor, register_url_convertor

from neardup.config import ConfigError
from neardup.online.detector import (
    DEFAULT_METHOD,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    ConflictError,
    Detector,
    DocumentNotFound,
    InvalidDocument,
    OnlineConfig,
    id_problem,
    latency_summary,
    value_problem,
)
from neardup.online.store import StoreError, open_store

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_BATCH = 1000
DEFAULT_AUTH_FAILURES = 10  # wrong tokens per client address and window before 429
DEFAULT_AUTH_WINDOW_S = 60.0
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
_RESERVED = ("id", "text")
_TOO_LONG = 10 ** MAX_INT_DIGITS  # stands for a JSON integer too long to convert (refused by validation)
_log = logging.getLogger(__name__)


class _IdConvertor(PathConvertor):
    """A document id in a route path: the rest of the path, newlines included. Starlette's ``path`` (``.*``
    before ``$``) stops at a newline, so an id with one in it reached no route (404) and one ending in it
    reached the document without it: ``DELETE /documents/x%0A`` deleted ``x`` (issue 55, a hostile-id test)."""

    regex = "(?s:.*)"


register_url_convertor("doc_id", _IdConvertor())

Scope = dict[str, Any]
Message = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]


class DocumentIn(BaseModel):
    """A document to check: ``id`` and ``text``; any other field is kept as metadata."""

    model_config = ConfigDict(extra="allow")
    id: str | int = Field(description="Unique document id, 1 to 1024 characters (an integer is taken as its "
                                      "decimal string: 7 and \"7\" are one document).")
    text: str = Field(description="The document text.")


class AnswerOut(BaseModel):
    """The answer for one document."""

    id: str
    status: str = Field(description="original | duplicate")
    original_id: str = Field(description="The canonical original (the document itself when original).")
    matched_id: str | None = Field(None, description="The stored document whose n-grams matched.")
    score: float | None = Field(None, description="Overlap coefficient of the verified n-grams.")
    evidence: list[str] = Field(default_factory=list, description="Matching passages (normalized words).")
    update_of: str | None = Field(None, description="An earlier document this one updates (new numbers/sentences).")
    created: bool = Field(True, description="False when the id was already stored with the same text.")
    latency_ms: float = 0.0


class _BodyTooLarge(HTTPException):
    """Raised while reading a streamed body past the limit (answered 413 by FastAPI)."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(status_code=413, detail=f"request body over the limit of {max_bytes} bytes")


class BodyLimit:
    """ASGI middleware: 413 for a body over ``max_bytes`` (by Content-Length, or while streaming);
    reports every response's status, method and duration to ``observe``."""

    def __init__(self, app: ASGIApp, max_bytes: int,
                 observe: Callable[[str, int, float], None] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = 500
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started = True
                status = int(message["status"])
            await send(message)

        try:
            await self._limited(scope, receive, tracking_send)
        except _BodyTooLarge as exc:
            if not started:
                await _send_json(tracking_send, 413, {"detail": exc.detail})
        finally:
            if self.observe is not None:
                self.observe(scope.get("method", ""), status, (time.perf_counter() - t0) * 1000)

    async def _limited(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max_bytes
            except ValueError:
                await _send_json(send, 400, {"detail": "invalid Content-Length header"})
                return
            if too_big:
                await _send_json(send, 413, {"detail": f"request body over the limit of {self.max_bytes} bytes"})
                return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, limited_receive, send)


async def _send_json(send: Callable[[Message], Awaitable[None]], status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def host_name(header: str) -> str:
    """The host of a ``Host`` header: lower case, without the port, brackets or a final dot.

    >>> host_name("LocalHost:8000"), host_name("[::1]:8000"), host_name("example.com."), host_name("::1")
    ('localhost', '::1', 'example.com', '::1')
    """
    value = header.strip().lower()
    if value.startswith("["):
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


class LocalGuard:
    """ASGI middleware: 421 for a ``Host`` that is not one of ``names`` (nor a loopback address, nor the
    address the request reached); with ``json_only``, 415 for a ``POST``/``PUT``/``PATCH`` that is not
    ``application/json``, and for a ``DELETE`` that names another type (see the module docstring)."""

    def __init__(self, app: ASGIApp, names: Iterable[str] | None, json_only: bool) -> None:
        self.app = app
        self.names = None if names is None else frozenset(host_name(n) for n in names)
        self.json_only = json_only

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if (problem := self._foreign_host(scope, headers)) is not None:
                await _send_json(send, 421, {"detail": problem})
                return
            if self.json_only and (problem := _not_json(scope.get("method", ""), headers)) is not None:
                await _send_json(send, 415, {"detail": problem})
                return
        await self.app(scope, receive, send)

    def _foreign_host(self, scope: Scope, headers: dict[bytes, bytes]) -> str | None:
        raw = headers.get(b"host")
        if self.names is None or raw is None:  # no Host at all: HTTP/1.0, never a browser
            return None
        name = host_name(raw.decode("latin-1"))
        server = scope.get("server") or ("",)
        if name in self.names or is_loopback(name) or name == str(server[0]).lower():
            return None
        allowed = ", ".join(sorted(self.names))
        return (f"host {name!r} is not a name of this server (allowed: {allowed}; a loopback address also "
                f"works): if it is one, start the server with --allowed-host {name}")


def _not_json(method: str, headers: dict[bytes, bytes]) -> str | None:
    """Why a request must be refused as not JSON (POST, PUT and PATCH must say application/json; a DELETE,
    which has no body, may say nothing), or None."""
    if method not in ("POST", "PUT", "PATCH", "DELETE"):
        return None
    given = headers.get(b"content-type")
    if given is None and method == "DELETE":
        return None
    media = (given or b"").decode("latin-1").partition(";")[0].strip().lower()
    if media == "application/json":
        return None
    shown = f"got {media!r}" if media else "none given"
    return (f"Content-Type must be application/json ({shown}): without a token the service refuses other "
            "types, which a web page on another site could make a browser send")


class FailedTokens:
    """Wrong tokens per client address: after ``limit`` of them within ``window_s`` seconds the address
    is refused (429) until the oldest of those is ``window_s`` old. In memory, per process; at most
    ``max_clients`` addresses are remembered (the least recently failed forgotten first).

    >>> now = [0.0]
    >>> f = FailedTokens(limit=2, window_s=10, clock=lambda: now[0])
    >>> f.failed("a"); f.wait("a"), f.wait("b")
    (0.0, 0.0)
    >>> f.failed("a"); f.wait("a")
    10.0
    >>> now[0] = 10.5; f.wait("a")
    0.0
    """

    def __init__(self, limit: int = DEFAULT_AUTH_FAILURES, window_s: float = DEFAULT_AUTH_WINDOW_S,
                 max_clients: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        if limit < 1 or not window_s > 0:
            raise ConfigError(f"the wrong-token limit needs limit >= 1 and window_s > 0, got {limit}, {window_s}")
        self.limit, self.window_s, self.max_clients, self.clock = limit, window_s, max_clients, clock
        self._times: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds until ``client`` may try a token again (0.0: now)."""
        with self._lock:
            times = self._times.get(client)
            if times is None or len(times) < self.limit:
                return 0.0
            return max(times[0] + self.window_s - self.clock(), 0.0)

    def failed(self, client: str) -> None:
        """Count a wrong token from ``client``."""
        with self._lock:
            times = self._times.pop(client, None) or deque(maxlen=self.limit)
            times.append(self.clock())
            self._times[client] = times
            while len(self._times) > self.max_clients:
                self._times.popitem(last=False)


def check_token(token: str) -> None:
    """Refuse (:class:`ConfigError`) a token no HTTP client could send intact: control characters, or
    spaces at either end (servers strip them from header values).

    >>> check_token("sécret-ünïcode 1")
    >>> check_token(" x")
    Traceback (most recent call last):
    ...
    neardup.config.ConfigError: the token must not begin or end with a space or hold control characters (an HTTP header cannot carry them)
    """
    if token != token.strip() or any(ord(c) < 32 or 127 <= ord(c) < 160 for c in token):
        raise ConfigError("the token must not begin or end with a space or hold control characters "
                          "(an HTTP header cannot carry them)")


def _token_forms(token: str) -> tuple[bytes, ...]:
    """The bytes a client may send for ``token``: UTF-8, and Latin-1 where it differs and fits."""
    forms = [token.encode("utf-8")]
    try:
        forms.append(token.encode("latin-1"))
    except UnicodeEncodeError:
        pass
    return tuple(dict.fromkeys(forms))


def _token_matches(given: str, forms: tuple[bytes, ...]) -> bool:
    """Whether a header's token is one of ``forms``, compared as bytes in constant time (the server
    decoded the header's bytes as Latin-1, so encoding it so gives them back)."""
    try:
        raw = given.encode("latin-1")
    except UnicodeEncodeError:
        return False
    matched = False
    for form in forms:
        matched |= hmac.compare_digest(raw, form)
    return matched


def _json_int(digits: str) -> int:
    """A JSON integer; one too long for Python to turn into a number (over 4300 digits) becomes a
    stand-in that validation refuses naming the field (``int`` would fail the whole request, unnamed)."""
    if len(digits) > MAX_INT_DIGITS + 1:
        return _TOO_LONG
    try:
        return int(digits)
    except ValueError:
        return _TOO_LONG


def _parse_body(raw: bytes) -> tuple[Any, str | None]:
    """(the JSON value, None) or (None, why the body is not JSON that can be read)."""
    try:
        return json.loads(raw, parse_int=_json_int), None
    except json.JSONDecodeError as exc:
        return None, f"body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
    except UnicodeDecodeError:
        return None, "body is not valid JSON: not UTF-8"
    except RecursionError:
        return None, (f"body is not valid JSON that can be read: lists and objects nested too deeply "
                      f"(at most {MAX_DEPTH} levels inside a field)")
    except ValueError as exc:
        return None, f"body is not valid JSON that can be read: {exc}"


def _error(code: int, detail: Any, **extra: Any) -> JSONResponse:
    """A JSON error response ``{"detail": ..., **extra}`` (``extra`` may hold a ``status`` field)."""
    return JSONResponse({"detail": detail, **extra}, status_code=code)


def _shown(name: Any) -> Any:
    """A field name as a response can hold it: a lone surrogate escaped (JSON responses are UTF-8)."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(name, str) else name


def _validation_errors(payload: Any,
                       holds_nul: bool = True) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """(documents as detector items, FastAPI-style error list); ``holds_nul``: whether the store can hold U+0000."""
    single = isinstance(payload, dict)
    items = [payload] if single else payload
    if not isinstance(items, list):
        return None, [{"loc": ["body"], "msg": "expected a JSON object or a list of objects",
                       "type": "type_error"}]
    if not items:
        return None, [{"loc": ["body"], "msg": "the list is empty", "type": "value_error"}]
    errors: list[dict[str, Any]] = []
    docs: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        loc: list[Any] = ["body"] if single else ["body", i]
        if not isinstance(item, dict):
            errors.append({"loc": loc, "msg": f"expected an object, got {type(item).__name__}", "type": "type_error"})
            continue
        errors += _item_errors(item, loc, holds_nul)
        docs.append({"id": item.get("id"), "text": item.get("text"),
                     "metadata": {k: v for k, v in item.items() if k not in _RESERVED}})
        if len(errors) >= 50:
            break
    return docs, errors


def _item_errors(item: dict[str, Any], loc: list[Any], holds_nul: bool) -> list[dict[str, Any]]:
    """The errors of one posted object: id and text present and of the right type, each field storable."""
    errors = []
    for name, kinds, kind_name in (("id", (str, int), "a string or integer"), ("text", (str,), "a string")):
        if name not in item or item[name] is None:
            errors.append({"loc": loc + [name], "msg": "field required", "type": "missing"})
        elif isinstance(item[name], bool) or not isinstance(item[name], kinds):
            errors.append({"loc": loc + [name], "msg": f"must be {kind_name}, got {type(item[name]).__name__}",
                           "type": "type_error"})
        elif name == "id" and (problem := id_problem(item["id"])):
            errors.append({"loc": loc + ["id"], "msg": problem, "type": "value_error"})
    for name, value in item.items():
        if name in _RESERVED and any(e["loc"][-1] == name for e in errors):
            continue
        if problem := value_problem(name, holds_nul) or value_problem(value, holds_nul):
            errors.append({"loc": loc + [_shown(name)], "msg": problem, "type": "value_error"})
    return errors


#: The content type of the Prometheus text exposition format.
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _label(value: Any) -> str:
    """A Prometheus label value, escaped (backslash, double quote, line feed)."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(stats: dict[str, Any]) -> str:
    """The service's figures (``/stats``: counts, counters since start, latencies) in the Prometheus text
    exposition format 0.0.4: ``# HELP`` and ``# TYPE`` lines, then samples named ``neardup_...``; latencies in
    seconds, as gauges of the recent 10,000 (labelled by quantile).

    >>> text = prometheus_text({"store": "sqlite", "method": "auto", "documents": 3, "originals": 2, "duplicates": 1,
    ...                         "since_start": {"added": 3}, "requests": {"200": 4},
    ...                         "decision_latency": {"count": 3, "mean_ms": 2.0, "p50_ms": 1.0, "p95_ms": 5.0,
    ...                                              "p99_ms": 5.0, "max_ms": 5.0},
    ...                         "post_latency": {"count": 0}, "uptime_s": 1.5})
    >>> [line for line in text.splitlines() if line.startswith(("neardup_documents ", "neardup_http_requests_total"))]
    ['neardup_documents 3', 'neardup_http_requests_total{code="200"} 4']
    """
    out: list[str] = []

    def metric(name: str, kind: str, help: str, samples: list[tuple[str, Any]]) -> None:
        out.append(f"# HELP neardup_{name} {help}")
        out.append(f"# TYPE neardup_{name} {kind}")
        for labels, value in samples:
            out.append(f"neardup_{name}{labels} {float(value) if isinstance(value, float) else int(value)}")

    metric("info", "gauge", "The service's store kind and method (always 1).",
           [(f'{{store="{_label(stats.get("store"))}",method="{_label(stats.get("method"))}"}}', 1)])
    for key, help in (("documents", "Documents in the store."), ("originals", "Originals in the store."),
                      ("duplicates", "Duplicates in the store.")):
        if key in stats:
            metric(key, "gauge", help, [("", stats[key])])
    for key, value in (stats.get("since_start") or {}).items():
        metric(f"{key}_total", "counter", f"Documents {key} since the server started.", [("", value)])
    metric("http_requests_total", "counter", "HTTP requests answered since the server started, by status code.",
           [(f'{{code="{_label(code)}"}}', n) for code, n in sorted((stats.get("requests") or {}).items())])
    for key, help in (("decision_latency", "Per-document decision time"), ("post_latency", "POST /documents time")):
        summary = stats.get(key) or {}
        samples = [(f'{{quantile="{q}"}}', float(summary.get(field, 0.0)) / 1000) for q, field in
                   (("0.5", "p50_ms"), ("0.95", "p95_ms"), ("0.99", "p99_ms"), ("1", "max_ms"))]
        metric(f"{key}_seconds", "gauge", f"{help} over the recent 10,000, by quantile (seconds).", samples)
        metric(f"{key}_observed", "gauge", f"{help}: how many of the recent 10,000 the quantiles are of.",
               [("", summary.get("count", 0))])
    metric("uptime_seconds", "gauge", "Seconds since the server started.", [("", float(stats.get("uptime_s", 0.0)))])
    return "\n".join(out) + "\n"


def create_app(detector: Detector, token: str | None = None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
               max_batch: int = DEFAULT_MAX_BATCH, host: str | None = None, allowed_hosts: Sequence[str] = (),
               failed_tokens: FailedTokens | None = None) -> FastAPI:
    """The FastAPI application over ``detector`` (see the module docstring).

    ``host``: the address the server binds (one of its names); ``allowed_hosts``: more names clients may
    use in ``Host`` (without a token the ``Host`` is always checked, with one only when these are given);
    ``failed_tokens``: the wrong-token limit (default :class:`FailedTokens`).

    >>> from neardup.online.store import MemoryStore
    >>> app = create_app(Detector(MemoryStore()), token="secret")
    >>> sorted(r.path for r in app.routes if r.path.startswith("/doc"))[:2]
    ['/docs', '/docs/oauth2-redirect']
    """
    if max_body_bytes < 1 or max_batch < 1:
        raise ConfigError("max_body_bytes and max_batch must be >= 1")
    if token is not None:
        check_token(token)
    if any(not host_name(h) for h in allowed_hosts):
        raise ConfigError(f"an allowed host must be a host name or address, got {list(allowed_hosts)!r}")
    token_forms = _token_forms(token) if token is not None else ()
    failures = failed_tokens or FailedTokens()
    started = time.time()
    requests: Counter[str] = Counter()
    request_ms: deque[float] = deque(maxlen=10_000)
    lock = threading.Lock()
    bearer = HTTPBearer(auto_error=False, description="The token given to `neardup serve --token`.")

    async def authorised(request: Request,
                         credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if token is None:
            return
        client = request.client.host if request.client is not None else ""
        if (wait := failures.wait(client)) > 0:
            seconds = max(math.ceil(wait), 1)
            raise HTTPException(status_code=429, headers={"Retry-After": str(seconds)},
                                detail=f"too many wrong tokens from this address: try again in {seconds} s")
        given = credentials.credentials if credentials is not None and credentials.scheme.lower() == "bearer" else ""
        if not given or not _token_matches(given, token_forms):
            if given:  # a guess; a request without a token is not one
                failures.failed(client)
            raise HTTPException(status_code=401, detail=f"{'invalid' if given else 'missing'} bearer token",
                                headers={"WWW-Authenticate": "Bearer"})

    @asynccontextmanager
    async def lifespan(_: FastAPI):  # type: ignore[no-untyped-def]
        yield
        await run_in_threadpool(detector.close)

    app = FastAPI(title="neardup online", version="1", lifespan=lifespan,
                  description="Online near-duplicate detection: post a document, learn at once whether it "
                              "duplicates an earlier one.")
    auth = [Depends(authorised)]

    def observe(method: str, status: int, ms: float) -> None:
        with lock:
            requests[str(status)] += 1
            if method == "POST":
                request_ms.append(ms)

    def unavailable(exc: Exception, **extra: Any) -> JSONResponse:
        """503 with the store's reason, without its location (the log has all of it)."""
        _log.warning("store unavailable: %s", exc)
        return _error(503, detector.store.public(str(exc)), **extra)

    @app.exception_handler(StoreError)
    async def store_failed(_: Request, exc: StoreError) -> JSONResponse:
        return unavailable(exc)

    @app.exception_handler(ConfigError)  # e.g. the store's settings changed under a calibrating detector
    async def settings_failed(_: Request, exc: ConfigError) -> JSONResponse:
        return unavailable(exc)

    @app.exception_handler(Exception)
    async def failed(_: Request, exc: Exception) -> JSONResponse:  # a bug: JSON, no traceback (it is logged)
        return _error(500, "internal error (the server's log has the details)")

    doc_schema = DocumentIn.model_json_schema()
    post_schema = {
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "oneOf": [doc_schema, {"type": "array", "items": doc_schema, "maxItems": max_batch}]}}}},
    }

    @app.post("/documents", dependencies=auth, openapi_extra=post_schema,
              response_model=AnswerOut | list[AnswerOut],
              responses={400: {"description": "body is not JSON"}, 409: {"description": "id stored with another text"},
                         413: {"description": "body or batch too large"}, 422: {"description": "missing/bad field"}})
    async def post_documents(request: Request) -> Any:
        """Check one document (an object) or several (a list, stored all or nothing)."""
        payload, problem = _parse_body(await request.body())
        if problem is not None:
            return _error(400, problem)
        if isinstance(payload, list) and len(payload) > max_batch:
            return _error(413, f"too many documents in one request: {len(payload)} (max {max_batch})")
        docs, errors = _validation_errors(payload, detector.store.holds_nul)
        if errors or docs is None:
            return _error(422, errors)
        try:
            answers = await run_in_threadpool(detector.add_many, docs)
        except ConflictError as exc:
            return _error(409, str(exc), id=exc.doc_id, index=exc.index)
        except InvalidDocument as exc:
            loc: list[Any] = ["body"] + ([] if isinstance(payload, dict) else [exc.index]) + [_shown(exc.field)]
            return _error(422, [{"loc": loc, "msg": exc.reason, "type": "value_error"}])
        out = [a.to_dict() for a in answers]
        return out[0] if isinstance(payload, dict) else out

    @app.get("/documents/{doc_id:doc_id}", dependencies=auth)
    async def get_document(doc_id: str, text: bool = True) -> Any:
        """A stored document, its status and original (``?text=false`` leaves the text out)."""
        rec = await run_in_threadpool(detector.get, doc_id, text)
        if rec is None:
            return _error(404, f"no document with id {doc_id!r}")
        return rec.public(with_text=text)

    @app.delete("/documents/{doc_id:doc_id}", dependencies=auth)
    async def delete_document(doc_id: str) -> Any:
        """Delete a document; deleting an original promotes its earliest duplicate."""
        try:
            result = await run_in_threadpool(detector.delete, doc_id)
        except DocumentNotFound as exc:
            return _error(404, str(exc))
        return result.to_dict()

    @app.get("/clusters/{original_id:doc_id}", dependencies=auth)
    async def get_cluster(original_id: str, text: bool = False) -> Any:
        """An original and its duplicates in arrival order (a duplicate's id gives its original's cluster)."""
        try:
            cluster = await run_in_threadpool(detector.cluster, original_id)
        except DocumentNotFound as exc:
            return _error(404, str(exc))
        return cluster.to_dict(with_text=text)

    @app.get("/health")
    async def health() -> Any:
        """Reads the store (a few index reads from storage, past any cache) and its counts (no token needed)."""
        try:
            await run_in_threadpool(detector.check)
            counts = await run_in_threadpool(detector.counts)
        except StoreError as exc:
            return unavailable(exc, status="unavailable")
        return {"status": "ok", "store": detector.store.kind, "method": detector.config.method, **counts}

    async def stats() -> dict[str, Any]:
        counts = await run_in_threadpool(detector.counts)
        with lock:
            by_code = dict(requests)
            req = latency_summary(list(request_ms))
        return {"store": detector.store.kind, "method": detector.config.method, **counts,
                "since_start": dict(detector.stats), "requests": by_code,
                "decision_latency": detector.latency_summary(), "post_latency": req,
                "uptime_s": round(time.time() - started, 1)}

    @app.get("/stats", dependencies=auth)
    async def stats_json() -> Any:
        """Counts, per-document decision latency and per-request latency (recent 10,000), as JSON."""
        return await stats()

    @app.get("/metrics", dependencies=auth, response_class=PlainTextResponse,
             responses={200: {"content": {PROMETHEUS_CONTENT_TYPE: {}, "application/json": {}}}})
    async def metrics(format: str = "prometheus") -> Any:
        """What ``/stats`` says, in the Prometheus text format (``?format=json``: as JSON)."""
        if format not in ("prometheus", "json"):
            return _error(422, f"format must be prometheus or json, got {format!r}")
        figures = await stats()
        if format == "json":
            return JSONResponse(figures)
        return PlainTextResponse(prometheus_text(figures), media_type=PROMETHEUS_CONTENT_TYPE)

    names = None if token is not None and not allowed_hosts else [*LOCAL_HOSTS, *([host] if host else []),
                                                                    *allowed_hosts]
    app.add_middleware(LocalGuard, names=names, json_only=token is None)  # type: ignore[arg-type]
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, observe=observe)  # type: ignore[arg-type]
    return app


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1).

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("0.0.0.0"), is_loopback("localhost")
    (True, True, False, True)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(store_url: str, host: str = "127.0.0.1", port: int = 8000, token: str | None = None,
          config: OnlineConfig | None = None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
          max_batch: int = DEFAULT_MAX_BATCH, log_level: str = "info", allowed_hosts: Sequence[str] = ()) -> None:
    """Open the store and run the service until interrupted (one process; writes are serialised).

    Refuses (:class:`~neardup.config.ConfigError`) to listen beyond loopback without a token, and a token
    no client could send (:func:`check_token`). Without a ``config``:
    :data:`~neardup.online.detector.DEFAULT_METHOD` (a store that holds settings keeps them).
    ``allowed_hosts``: more names clients may reach the server by (see :func:`create_app`).
    """
    import uvicorn

    if token:
        check_token(token)
    if not token and not is_loopback(host):
        raise ConfigError(f"refusing to listen on {host} without a token: give --token (or NEARDUP_TOKEN), "
                          "or bind to 127.0.0.1")
    if not 0 <= port <= 65535:
        raise ConfigError(f"port must be in 0..65535, got {port}")
    detector = Detector(open_store(store_url), config or OnlineConfig(method=DEFAULT_METHOD))
    app = create_app(detector, token=token or None, max_body_bytes=max_body_bytes, max_batch=max_batch, host=host,
                     allowed_hosts=allowed_hosts)
    uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1, access_log=False)
