/** Duplicate member names in JSON text (routes/json_keys.ts). */
import assert from "node:assert/strict";
import { repeatedMemberName } from "../routes/json_keys.ts";

Deno.test("a member name given twice in one object is found, decoded", () => {
  assert.equal(repeatedMemberName('{"title":"a","title":"b"}'), "title");
  assert.equal(repeatedMemberName('{"a":1,"\\u0061":2}'), "a");
  assert.equal(repeatedMemberName('{"x":{"y":1,"z":[{"k":1,"k":2}]}}'), "k");
  assert.equal(repeatedMemberName('[{"a":1},{"a":2}]'), null, "one name in two objects");
  assert.equal(repeatedMemberName('{"a":{"a":1}}'), null, "one name at two depths");
  assert.equal(repeatedMemberName('{"a":"\\",\\"a\\":","b":["a","a"]}'), null, "names in values");
  assert.equal(repeatedMemberName('{"a":1,"b":{},"c":[],"d":[1,{"a":2}]}'), null);
  assert.equal(repeatedMemberName('"text"'), null);
});
