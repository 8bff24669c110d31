"""The HTTP service over the online detector (FastAPI + uvicorn): ``neardup serve``.

Owns routes, authentication, request limits, error responses and metrics; must not decide
duplicates (it calls :class:`neardup.online.detector.Detector`) or know SQL.

Routes (all JSON; every route but ``/health``, ``/openapi.json`` and ``/docs`` needs
``Authorization: Bearer TOKEN`` when a token is set):

* ``POST /documents`` - one object ``{"id", "text", ...metadata}`` or a list of them (one
  transaction, all or nothing). Answers ``{id, status, original_id, matched_id, score, evidence,
  update_of, created, latency_ms}`` (a list for a list). Re-sending an id with the same text returns
  the stored answer (``created: false``); with another text it is 409 and nothing changes.
* ``GET /documents/{id}``, ``DELETE /documents/{id}``, ``GET /clusters/{original_id}``;
* ``GET /health`` (liveness + store counts), ``GET /metrics`` (counts, latency percentiles).

Errors: 400 body is not JSON; 401 missing/wrong token; 404 unknown id; 409 conflicting id;
413 body over ``max_body_bytes`` or more than ``max_batch`` documents; 422 a field missing, of the
wrong type, or holding a lone surrogate (``"\\ud800"``: valid JSON, not text; ``loc`` names the list
index and field); 503 the store failed or is damaged (``/health`` too, with the reason), never 500.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from neardup.config import ConfigError
from neardup.online.detector import (
    DEFAULT_METHOD,
    ConflictError,
    Detector,
    DocumentNotFound,
    InvalidDocument,
    OnlineConfig,
    latency_summary,
)
from neardup.online.store import StoreError, open_store

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_BATCH = 1000
_RESERVED = ("id", "text")

Scope = dict[str, Any]
Message = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]]


class DocumentIn(BaseModel):
    """A document to check: ``id`` and ``text``; any other field is kept as metadata."""

    model_config = ConfigDict(extra="allow")
    id: str | int = Field(description="Unique document id (integers are turned into strings).")
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


def _error(code: int, detail: Any, **extra: Any) -> JSONResponse:
    """A JSON error response ``{"detail": ..., **extra}`` (``extra`` may hold a ``status`` field)."""
    return JSONResponse({"detail": detail, **extra}, status_code=code)


def _shown(name: Any) -> Any:
    """A field name as a response can hold it: a lone surrogate escaped (JSON responses are UTF-8)."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(name, str) else name


def _validation_errors(payload: Any, max_batch: int) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """(documents as detector items, FastAPI-style error list)."""
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
        for name, kinds, kind_name in (("id", (str, int), "a string or integer"), ("text", (str,), "a string")):
            if name not in item or item[name] is None:
                errors.append({"loc": loc + [name], "msg": "field required", "type": "missing"})
            elif isinstance(item[name], bool) or not isinstance(item[name], kinds):
                errors.append({"loc": loc + [name], "msg": f"must be {kind_name}, got {type(item[name]).__name__}",
                               "type": "type_error"})
        if "id" in item and isinstance(item["id"], (str, int)) and not isinstance(item["id"], bool):
            if not str(item["id"]) or len(str(item["id"])) > 1024:
                errors.append({"loc": loc + ["id"], "msg": "must be 1 to 1024 characters", "type": "value_error"})
        docs.append({"id": item.get("id"), "text": item.get("text"),
                     "metadata": {k: v for k, v in item.items() if k not in _RESERVED}})
        if len(errors) >= 50:
            break
    return docs, errors


def create_app(detector: Detector, token: str | None = None, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
               max_batch: int = DEFAULT_MAX_BATCH) -> FastAPI:
    """The FastAPI application over ``detector`` (see the module docstring).

    >>> from neardup.online.store import MemoryStore
    >>> app = create_app(Detector(MemoryStore()), token="secret")
    >>> sorted(r.path for r in app.routes if r.path.startswith("/doc"))[:2]
    ['/docs', '/docs/oauth2-redirect']
    """
    if max_body_bytes < 1 or max_batch < 1:
        raise ConfigError("max_body_bytes and max_batch must be >= 1")
    started = time.time()
    requests: Counter[str] = Counter()
    request_ms: deque[float] = deque(maxlen=10_000)
    lock = threading.Lock()
    bearer = HTTPBearer(auto_error=False, description="The token given to `neardup serve --token`.")

    async def authorised(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials is not None and credentials.scheme.lower() == "bearer" else ""
        if not given or not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(status_code=401, detail="missing or invalid bearer token",
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

    @app.exception_handler(StoreError)
    async def store_failed(_: Request, exc: StoreError) -> JSONResponse:
        return _error(503, str(exc))

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
        raw = await request.body()
        try:
            payload = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            msg = f"{exc.msg} at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) \
                else "not UTF-8"
            return _error(400, f"body is not valid JSON: {msg}")
        if isinstance(payload, list) and len(payload) > max_batch:
            return _error(413, f"too many documents in one request: {len(payload)} (max {max_batch})")
        docs, errors = _validation_errors(payload, max_batch)
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

    @app.get("/documents/{doc_id:path}", dependencies=auth)
    async def get_document(doc_id: str, text: bool = True) -> Any:
        """A stored document, its status and original (``?text=false`` leaves the text out)."""
        rec = await run_in_threadpool(detector.get, doc_id, text)
        if rec is None:
            return _error(404, f"no document with id {doc_id!r}")
        return rec.public(with_text=text)

    @app.delete("/documents/{doc_id:path}", dependencies=auth)
    async def delete_document(doc_id: str) -> Any:
        """Delete a document; deleting an original promotes its earliest duplicate."""
        try:
            result = await run_in_threadpool(detector.delete, doc_id)
        except DocumentNotFound as exc:
            return _error(404, str(exc))
        return result.to_dict()

    @app.get("/clusters/{original_id:path}", dependencies=auth)
    async def get_cluster(original_id: str, text: bool = False) -> Any:
        """An original and its duplicates in arrival order (a duplicate's id gives its original's cluster)."""
        try:
            cluster = await run_in_threadpool(detector.cluster, original_id)
        except DocumentNotFound as exc:
            return _error(404, str(exc))
        return cluster.to_dict(with_text=text)

    @app.get("/health")
    async def health() -> Any:
        """Liveness and store counts (no token needed)."""
        try:
            counts = await run_in_threadpool(detector.counts)
        except StoreError as exc:
            return _error(503, str(exc), status="unavailable")
        return {"status": "ok", "store": detector.store.kind, "method": detector.config.method, **counts}

    @app.get("/metrics", dependencies=auth)
    async def metrics() -> Any:
        """Counts, per-document decision latency and per-request latency (recent 10,000)."""
        counts = await run_in_threadpool(detector.counts)
        with lock:
            by_code = dict(requests)
            req = latency_summary(list(request_ms))
        return {"store": detector.store.kind, "method": detector.config.method, **counts,
                "since_start": dict(detector.stats), "requests": by_code,
                "decision_latency": detector.latency_summary(), "post_latency": req,
                "uptime_s": round(time.time() - started, 1)}

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
          max_batch: int = DEFAULT_MAX_BATCH, log_level: str = "info") -> None:
    """Open the store and run the service until interrupted (one process; writes are serialised).

    Refuses (:class:`~neardup.config.ConfigError`) to listen beyond loopback without a token. Without a
    ``config``: :data:`~neardup.online.detector.DEFAULT_METHOD` (a store that holds settings keeps them).
    """
    import uvicorn

    if not token and not is_loopback(host):
        raise ConfigError(f"refusing to listen on {host} without a token: give --token (or NEARDUP_TOKEN), "
                          "or bind to 127.0.0.1")
    if not 0 <= port <= 65535:
        raise ConfigError(f"port must be in 0..65535, got {port}")
    detector = Detector(open_store(store_url), config or OnlineConfig(method=DEFAULT_METHOD))
    app = create_app(detector, token=token or None, max_body_bytes=max_body_bytes, max_batch=max_batch)
    uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1, access_log=False)
