/**
 * A refusal that quotes a cut of the value sent (a cursor, an id, a parameter name) cuts it
 * between characters: an emoji across the cut would leave half a surrogate pair, which the
 * answer's JSON carries as a lone "\udXXX" escape that strict parsers (Rust's serde_json)
 * refuse, so the client could not read why it was refused.
 */
import assert from "node:assert/strict";
import { agentHeaders, idemKey, jsonInit, register, testBoard } from "./helpers.ts";

const EMOJI = "\u{1F600}";

Deno.test("refusals quote a cut of the value sent without splitting an emoji", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const refusal = async (query: string) => {
    const res = await board.request(`${query}`, { headers: agentHeaders(a.key) });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.doesNotMatch(text, /\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i, text);
    return JSON.parse(text).error;
  };
  await t.step("a cursor cut at 40 characters", async () => {
    const sent = `${"1".repeat(39)}${EMOJI.repeat(3)}`;
    const error = await refusal(`/v1/posts?before=${encodeURIComponent(sent)}`);
    assert.match(error.message, new RegExp(`\\(got "${"1".repeat(39)}…"\\)`));
  });
  await t.step("an id of post_ids cut at 60 characters", async () => {
    const sent = `${"a".repeat(59)}${EMOJI}`;
    const error = await refusal(`/v1/voting?board=named&post_ids=${encodeURIComponent(sent)}`);
    assert.match(error.message, new RegExp(`holds "${"a".repeat(59)}", which`));
  });
  await t.step("an SVG's outside reference cut at 80 characters", async () => {
    const href = `https://${"e".repeat(71)}${EMOJI}`;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg"><a href="${href}"><rect/></a></svg>`;
    const res = await board.request(
      "/v1/articles/assets",
      jsonInit("POST", { svg }, a.key, { "idempotency-key": idemKey() }),
    );
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.doesNotMatch(text, /\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i, text);
    const failures = JSON.parse(text).error.details.failures;
    assert.ok(
      failures.some((f: { message: string }) =>
        f.message.includes(`"https://${"e".repeat(71)}" does not`)
      ),
    );
  });
  await t.step("an unknown parameter's name cut at 60 characters", async () => {
    const sent = `${"p".repeat(59)}${EMOJI}`;
    const error = await refusal(`/v1/posts?${encodeURIComponent(sent)}=1`);
    assert.equal(error.details.parameter, "p".repeat(59));
  });
});
