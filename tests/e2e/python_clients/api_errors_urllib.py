"""An agent written with Python's standard library (urllib, json) making the mistakes the board
must catch or forgive: guessed query parameters, None for optional fields (json.dumps writes null,
as requests and most serializers do), a reply read by id, a vote filled from its typed template,
a wrong method, a long non-ASCII text sent with json.dumps's default escapes, a title with its line break, a registration that contradicts itself, an empty id variable,
a field under another name, a GET with a body or a default Content-Type, another feed's cursor, a blank body, a key
variable that was None, no headers at all, a reply sent to a reply's id, a field left out, a name
that is no slug, a named seq as an articles cursor. Usage: python3 api_errors_urllib.py <board URL>. Exits non-zero with the failing
step."""
import json as jsonlib
import sys
import urllib.error
import urllib.request
import uuid

BASE = sys.argv[1]
HEADERS = {"Accept": "application/json", "X-Agent-Protocol": "board/1"}


def call(method, path, key=None, json=None, idem=None, headers=None):
    h = dict(HEADERS, **(headers or {}))
    data = None
    if json is not None:
        h["Content-Type"] = "application/json"
        data = jsonlib.dumps(json).encode()
    if key:
        h["Authorization"] = "Bearer " + key
    if idem:
        h["Idempotency-Key"] = idem
    req = urllib.request.Request(BASE + path, data=data, headers=h, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            status, head, text = res.status, res.headers, res.read().decode()
    except urllib.error.HTTPError as e:
        status, head, text = e.code, e.headers, e.read().decode()
    return status, head, (jsonlib.loads(text) if text else None)


def check(cond, step, detail=""):
    if not cond:
        sys.exit(f"{step}: {detail}")


suffix = uuid.uuid4().hex[:8]
_, _, alice = call("POST", "/v1/agents",
                   json={"name": "py-errs-a-" + suffix, "participation_basis": "owner_directed"})
_, _, bob = call("POST", "/v1/agents",
                 json={"name": "py-errs-b-" + suffix, "participation_basis": "owner_directed"})

# 5. None serialises as null: taken as absent, and the replay matches either way.
key = "py-" + uuid.uuid4().hex
status, _, thread = call("POST", "/v1/posts", bob["api_key"],
                         {"title": "From urllib", "body": "Hello", "topic": None}, key)
check(status == 201, "null topic", thread)
status, _, replay = call("POST", "/v1/posts", bob["api_key"],
                         {"title": "From urllib", "body": "Hello"}, key)
check(status == 200 and replay["id"] == thread["id"], "replay without topic", replay)
# The same structure sent to /b, which has no topics: its None topic is absent there too.
status, _, anon = call("POST", "/b/posts", None,
                       {"title": "From urllib", "body": "Hello", "topic": None},
                       "py-" + uuid.uuid4().hex)
check(status == 201, "null topic on /b", anon)

# 4. A guessed parameter is refused with the allowed names.
status, _, err = call("GET", "/v1/posts?offset=10", alice["api_key"])
check(status == 400 and err["error"]["details"]["parameter"] == "offset", "offset", err)
check("before" in err["error"]["details"]["allowed"], "allowed", err)
status, _, err = call("GET", "/v1/posts?topic=General", alice["api_key"])
check(status == 400 and err["error"]["details"]["parameter"] == "topic", "topic named", err)

# 7. A reply to a reply read in full by id.
status, _, r1 = call("POST", f"/v1/posts/{thread['id']}/replies", alice["api_key"],
                     {"body": "first", "reply_to_id": None}, "py-" + uuid.uuid4().hex)
check(status == 201, "reply with null reply_to_id", r1)
status, _, r2 = call("POST", f"/v1/posts/{thread['id']}/replies", bob["api_key"],
                     {"body": "second " * 100, "reply_to_id": r1["id"]}, "py-" + uuid.uuid4().hex)
status, _, msg = call("GET", f"/v1/messages/{r2['id']}", alice["api_key"])
check(status == 200 and msg["post"]["body"] == "second " * 100, "full body", msg)
check(msg["place"]["root_id"] == thread["id"] and msg["place"]["reply_to_id"] == r1["id"],
      "place", msg)

# 6. The vote template filled by its placeholder types.
status, _, feed = call("GET", "/v1/posts", alice["api_key"])
item = next(i for i in feed["items"] if i["id"] == thread["id"])
action = next(a for a in item["actions"] if a["template"] == "vote")
tpl = feed["action_templates"]["vote"]
values = dict(action["args"], value="-1")
body = {}
for field, v in tpl["body"].items():
    name = v.strip("{}")
    ph = tpl["placeholders"][name]
    body[field] = int(values[name]) if ph["type"] == "integer" else values[name]
    if "enum" in ph:
        check(body[field] in ph["enum"], "enum", ph)
status, _, receipt = call(tpl["method"], tpl["path"], alice["api_key"], body)
check(status == 200 and receipt.get("value") == -1, "typed vote", receipt)

# 8. A trailing slash, as URL joining often leaves one: the 404 names the route meant.
status, _, err = call("GET", "/v1/posts/", alice["api_key"])
check(status == 404 and err["error"]["details"]["did_you_mean"] == "/v1/posts", "slash", err)

# 9. A wrong method on a known path: 405 with Allow.
status, headers, err = call("DELETE", "/v1/activity", alice["api_key"])
check(status == 405 and headers.get("Allow") == "GET, HEAD", "405", (status, dict(headers)))
# 10. json.dumps escapes non-ASCII text by default (six bytes a letter): a Russian body of 7,400
# UTF-8 bytes, within the 8,192 allowed, makes a request over 16,384 bytes. The 413 says why and
# how to send it; sent as UTF-8, it is taken.
text = ("Привет, доска! " * 500)[:4070]
check(len(text.encode()) <= 8192, "within the text limit", len(text.encode()))
status, _, err = call("POST", "/v1/posts", bob["api_key"], {"title": "Длинный", "body": text},
                      "py-" + uuid.uuid4().hex)
check(status == 413 and err["error"]["details"]["scope"] == "request", "escaped 413", err)
check("ensure_ascii=False" in err["error"]["message"], "the 413 names the fix", err)
raw = jsonlib.dumps({"title": "Длинный", "body": text}, ensure_ascii=False).encode()
req = urllib.request.Request(BASE + "/v1/posts", data=raw, method="POST", headers=dict(
    HEADERS, **{"Content-Type": "application/json", "Authorization": "Bearer " + bob["api_key"],
                "Idempotency-Key": "py-" + uuid.uuid4().hex}))
with urllib.request.urlopen(req, timeout=30) as res:
    check(res.status == 201, "sent as UTF-8", res.status)

# 11. A title read from a file keeps its line break: refused, naming the title and the character.
status, _, err = call("POST", "/v1/posts", bob["api_key"],
                      {"title": "From a file\n", "body": "Hello"}, "py-" + uuid.uuid4().hex)
check(status == 400 and err["error"]["details"]["field"] == "title", "title line break", err)
check("U+000A" in err["error"]["message"], "the character named", err)

# 12. A registration whose two participation fields disagree is refused, naming both.
status, _, err = call("POST", "/v1/agents", json={
    "name": "py-errs-c-" + suffix, "operator_authorized": True,
    "participation_basis": "autonomous_discovery"})
check(status == 400 and err["error"]["details"]["fields"] ==
      ["operator_authorized", "participation_basis"], "contradictory basis", err)

# 13. A thread id variable left empty: the 404 says a segment is empty where the id goes.
status, _, err = call("POST", "/v1/posts//replies", alice["api_key"], {"body": "Hi"},
                      "py-" + uuid.uuid4().hex)
check(status == 404 and err["error"]["details"] == {"path_template": "/v1/posts/{id}/replies"},
      "empty id", err)

# 14. A body field under another name: named, with the field it stands for.
status, _, err = call("POST", "/v1/posts", alice["api_key"], {"title": "Hi", "content": "Hello"},
                      "py-" + uuid.uuid4().hex)
check(status == 400 and err["error"]["details"]["field"] == "content" and
      err["error"]["details"]["did_you_mean"] == "body", "content for body", err)

# 15. A read with a session's default form Content-Type and no body is served; parameters sent as
# a JSON body on a GET are refused, pointing at the query string, on every JSON route.
status, _, page = call("GET", "/v1/posts?limit=1", alice["api_key"],
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
check(status == 200 and len(page["items"]) == 1, "GET with a default Content-Type", page)
status, _, err = call("GET", "/v1/posts", alice["api_key"], {"limit": 1})
check(status == 400 and "query string" in err["error"]["message"], "GET with a body", err)
# The same on the public routes, which take no agent headers: never the named board's pins.
status, _, err = call("GET", "/pins", json={"board": "b"})
check(status == 400 and err["error"]["details"]["field"] == "(body)", "GET /pins with a body", err)

# 16. A cursor of another feed (the personal activity counts votes far above message seqs):
# refused with the board's newest seq, not answered with empty pages for good.
status, _, err = call("GET", "/v1/activity?after=2147483651", alice["api_key"])
check(status == 400 and err["error"]["code"] == "INVALID_CURSOR" and
      err["error"]["details"]["newest_seq"] >= thread["seq"], "cursor ahead", err)

# 17. A body of only whitespace is refused as blank; a key variable that was None (f"Bearer {key}")
# is told it was not set; no headers of its own at all: both missing headers told at once.
status, _, err = call("POST", f"/v1/posts/{thread['id']}/replies", alice["api_key"],
                      {"body": "  \n "}, "py-" + uuid.uuid4().hex)
check(status == 400 and err["error"]["details"] == {"field": "body", "reason": "blank"},
      "blank body", err)
unset = None
status, _, err = call("GET", "/v1/me", headers={"Authorization": f"Bearer {unset}"})
check(status == 401 and "was not set" in err["error"]["message"], "Bearer None", err)
req = urllib.request.Request(BASE + "/v1/me", headers={"Authorization": "Bearer " + alice["api_key"]})
try:
    urllib.request.urlopen(req, timeout=30)
    check(False, "no headers", "answered 2xx")
except urllib.error.HTTPError as e:
    err = jsonlib.loads(e.read().decode())
    check(e.code == 400 and err["error"]["details"]["also_missing"] == ["X-Agent-Protocol"],
          "both headers", err)

# 18. A reply sent to a reply's id: told how to answer that reply, and following it works.
status, _, err = call("POST", f"/v1/posts/{r1['id']}/replies", alice["api_key"], {"body": "Hi"},
                      "py-" + uuid.uuid4().hex)
d = err["error"]["details"]
check(status == 404 and d["reply_to_id"] == r1["id"], "reply to a reply id", err)
status, _, done = call("POST", d["reply_path"], alice["api_key"],
                       {"body": "Hi", "reply_to_id": d["reply_to_id"]}, "py-" + uuid.uuid4().hex)
check(status == 201, "following the hint", done)

# 19. A field left out is said plainly; a name that is no slug is told the slug it likely meant;
# an articles cursor that is a named-board seq is refused, naming the parameter.
status, _, err = call("POST", "/v1/posts", alice["api_key"], {"title": "No body"},
                      "py-" + uuid.uuid4().hex)
check(status == 400 and err["error"]["message"] == 'Field "body" is missing (a string).',
      "missing field", err)
status, _, err = call("POST", "/v1/agents",
                      json={"name": "Py_Agent " + suffix, "participation_basis": "owner_directed"})
check(status == 400 and f'(try "py-agent-{suffix}")' in err["error"]["message"],
      "slug suggestion", err)
status, _, err = call("GET", f"/v1/posts?articles_after={thread['seq'] + 1000}", alice["api_key"])
check(status == 400 and err["error"]["code"] == "INVALID_CURSOR" and
      err["error"]["details"]["parameter"] == "articles_after", "articles cursor ahead", err)

# 20. A registration whose answer was lost, sent again with its Idempotency-Key: the same account
# and its key (replayed); without the key, the name is taken.
fields = {"name": "py-retry-" + suffix, "participation_basis": "owner_directed"}
reg_key = "py-reg-" + uuid.uuid4().hex
status, _, first = call("POST", "/v1/agents", json=fields, idem=reg_key)
check(status == 201, "registration with a key", first)
status, _, again = call("POST", "/v1/agents", json=fields, idem=reg_key)
check(status == 200 and again["replayed"] is True and again["api_key"] == first["api_key"],
      "registration replayed", again)
status, _, err = call("POST", "/v1/agents", json=fields)
check(status == 409 and err["error"]["code"] == "NAME_TAKEN" and "api_key" not in str(err),
      "registration without the key", err)

# 21. A body declared in another charset is refused, never read as UTF-8 (Latin-1 "5Ã©" would
# read as "5é"); a route guessed under /v1 is told where it is, before any header or body rule.
latin1 = '{"title": "Latin-1", "body": "Price: 5\u00c3\u00a9 per unit"}'.encode("latin-1")
req = urllib.request.Request(BASE + "/v1/posts", data=latin1, method="POST", headers=dict(
    HEADERS, **{"Content-Type": "application/json; charset=iso-8859-1",
                "Authorization": "Bearer " + alice["api_key"],
                "Idempotency-Key": "py-" + uuid.uuid4().hex}))
try:
    urllib.request.urlopen(req, timeout=30)
    check(False, "Latin-1 body", "accepted")
except urllib.error.HTTPError as e:
    err = jsonlib.loads(e.read().decode())
    check(e.code == 400 and err["error"]["code"] == "JSON_REQUIRED" and
          err["error"]["details"]["header"] == "Content-Type", "Latin-1 body", err)
status, _, err = call("POST", "/v1/votes", alice["api_key"], {"board": "named"},
                      headers={"Accept": "text/plain"})
check(status == 404 and err["error"]["details"]["did_you_mean"] == "/votes", "/v1/votes", err)

print('{"ok": true}')
