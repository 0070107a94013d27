"""Traces of a signed-in call (docs/adr/0035-traces.md): the tenant is named, its access token and
TomTom key are not."""

from __future__ import annotations

import pytest
from opentelemetry.trace import SpanKind

from tests.conftest import CANARY_KEY
from tests.support.signing_in import GEOCODE, RESOURCE, post, result_of
from tests.support.traces import everything_recorded, recording

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def spans():
    yield from recording()


async def test_a_signed_in_call_names_its_tenant_and_never_its_token(tenant, issuer, stub, spans):
    token = issuer.token(aud=RESOURCE)
    assert result_of(await post(GEOCODE, token))["results"]
    recorded = spans()
    server = next(span for span in recorded if span.kind is SpanKind.SERVER)
    tool = next(span for span in recorded if span.kind is SpanKind.INTERNAL)
    assert server.attributes["tomtom_mcp.tenant"] == tool.attributes["tomtom_mcp.tenant"] == "Acme"
    assert stub.requests[-1].api_key == CANARY_KEY  # the tenant's key reached TomTom
    text = everything_recorded(recorded)
    assert CANARY_KEY not in text
    assert token not in text and token.split(".")[2] not in text  # nor the signature alone
