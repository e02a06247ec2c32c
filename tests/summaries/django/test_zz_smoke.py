import pytest
from summaries.services import summary_generate
from summaries.core.sidecar import read_strict
pytestmark = pytest.mark.django_db

def test_smoke(enabled_summaries, make_slot, store):
    slot = make_slot(turns=2)
    out = summary_generate(slot_name="s1")
    print(out)
    print(read_strict(store, slot.session.key))
    assert out.ok
