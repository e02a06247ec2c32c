import json
import pytest
from django.test import Client
from transcripts.services import app_create, session_create

pytestmark = pytest.mark.django_db

def test_explore(kirocrew_home, settings, django_user_model):
    settings.TRANSCRIPT_FSYNC = "never"
    app, token = app_create(name="owner")
    c = Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)
    c.post("/api/chat/slots", data='{"name":"s1"}', content_type="application/json")
    for m, p, b, ct in [
        ("post", "/api/chat/slots/s1/rows", '{"role":"assistant","content":"' + "x"*3_000_000 + '"}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", "[" * 100000, "application/json"),
        ("post", "/api/chat/slots/s1/rows", b'{"role":"assistant","content":"\xff"}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", 'role=assistant&content=x', "application/x-www-form-urlencoded"),
        ("post", "/api/chat/slots/s1/rows", 'null', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '[1]', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"assistant","content":"\\ud800"}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"assistant","content":"x","meta":{"a":NaN}}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"assistant","content":"x","meta":{"a":1e999}}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"assistant","content":"x","meta":{"a":' + "9"*5000 + '}}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"assistant","content":"x","meta":{"\\ud800":1}}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"assistant","content":"a\\u0000b"}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"user","content":"ghp_' + "A"*36 + '", "extra": 1}', "application/json"),
        ("post", "/api/chat/slots/s1/rows", '{"role":"ghp_' + "A"*36 + '","content":"x"}', "application/json"),
        ("post", "/api/chat/slots/s1/rows/nope/revisions", '{"patch":{"ts":"x"}}', "application/json"),
        ("get", "/api/chat/slots/s1/transcript?after=zzz", None, None),
        ("get", "/api/chat/slots/s1/transcript?limit=0", None, None),
        ("get", "/api/chat/slots/", None, None),
        ("options", "/api/chat/slots", None, None),
        ("head", "/api/chat/slots", None, None),
        ("delete", "/api/chat/slots", None, None),
    ]:
        kw = {}
        if b is not None:
            kw = dict(data=b, content_type=ct)
        r = getattr(c, m)(p, **kw)
        print(m, p[:60], r.status_code, r.get("Content-Type"), r.content[:300])
