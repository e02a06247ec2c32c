"""Schemathesis, in process: the OpenAPI document the NinjaAPI serves, driven through the
Django WSGI application (whole middleware stack, no server, no network).

Every operation is called with generated (valid and invalid) inputs as an app; the
checks are: never a 5xx, every status documented, bodies match the documented schema,
content types match. Once with generated slot names (almost always missing: the 404
path) and once on a slot the app owns (the handlers' real work).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from transcripts.models import Slot

from .conftest import Persona

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())
schema.config.generation.update(with_security_parameters=False)  # a real token instead

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]
BUDGET = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture
def contract(owner: Persona, make_slot: Callable[..., Slot], enabled_summaries: Path) -> Persona:
    make_slot("contract", app=owner.app, turns=2)
    return owner


def call_and_check(case: Any, token: str) -> None:
    response = case.call(headers={"Authorization": f"Bearer {token}"})
    case.validate_response(response, checks=CHECKS)


@schema.parametrize()
@BUDGET
def test_every_operation_conforms(case: Any, contract: Persona) -> None:
    assert contract.token
    call_and_check(case, contract.token)


@schema.include(path_regex=r"\{slot\}").parametrize()
@BUDGET
def test_every_operation_conforms_on_an_owned_slot(case: Any, contract: Persona) -> None:
    assert contract.token
    if not Slot.objects.filter(name="contract").exists():  # an earlier example deleted it
        make = Slot.objects  # recreate through the API: same path the example takes
        contract.call("POST", "/api/chat/slots", {"name": "contract"})
        assert make.filter(name="contract").exists()
    case.path_parameters["slot"] = "contract"
    call_and_check(case, contract.token)
