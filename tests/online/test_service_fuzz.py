"""The service fuzzed from its own OpenAPI schema (schemathesis; issue 20): no generated request, fitting
the schema or not, gets a 500. Bounded to a few dozen requests per operation and mode (seconds)."""

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode

from neardup.online.detector import Detector, OnlineConfig
from neardup.online.service import create_app
from neardup.online.store import open_store

EXAMPLES = 30


@pytest.fixture
def api_schema(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    detector = Detector(store, OnlineConfig.ours())
    detector.add_many([{"id": "seed", "text": "a stored document the fuzzer may look up by id", "metadata": {}}])
    yield schemathesis.openapi.from_asgi("/openapi.json", create_app(detector, max_batch=20))
    detector.close()


def _operations(schema):
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_generated_request_gets_a_500(api_schema, mode):
    operations = _operations(api_schema)
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /documents", "GET /documents/{doc_id}", "DELETE /documents/{doc_id}", "GET /health"}
    for op in operations:

        @given(case=op.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case):
            response = case.call()
            assert response.status_code < 500, (f"{case.method} {case.formatted_path} {case.body!r:.200} -> "
                                                f"{response.status_code}: {response.text[:300]}")

        try:
            check()
        except Unsatisfiable:  # nothing of this operation can be made invalid (e.g. /health takes no input)
            assert mode == GenerationMode.NEGATIVE
