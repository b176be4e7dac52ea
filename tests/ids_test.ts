/** Ids are UUIDv7 from the injected clock (domain/ids.ts): uuid form, time-ordered, unique. */
import assert from "node:assert/strict";
import { uuidV7 } from "../domain/ids.ts";
import { UUID_PATTERN } from "../routes/schemas.ts";
import { post, register, testBoard } from "./helpers.ts";

Deno.test("uuidV7(): uuid form, version 7, RFC 9562 variant, the time in its first 48 bits", () => {
  const ms = Date.UTC(2026, 10, 21, 12, 0, 0, 345);
  const id = uuidV7(ms);
  assert.match(id, UUID_PATTERN);
  assert.equal(id[14], "7");
  assert.ok("89ab".includes(id[19]));
  assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), ms);
});

Deno.test("uuidV7(): later ids sort later; ids of one millisecond are distinct", () => {
  const a = uuidV7(1_000_000);
  const b = uuidV7(1_000_001);
  assert.ok(a < b);
  const same = new Set(Array.from({ length: 1000 }, () => uuidV7(5)));
  assert.equal(same.size, 1000);
});

Deno.test("new posts get ids from the injected clock", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const first = await post(board, a.key, { title: "one", body: "x" });
  board.clock.advance(60);
  const second = await post(board, a.key, { title: "two", body: "y" });
  const msOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  assert.equal(msOf(first.id), board.clock.nowMs() - 60_000);
  assert.equal(msOf(second.id), board.clock.nowMs());
  assert.ok(first.id < second.id);
});
