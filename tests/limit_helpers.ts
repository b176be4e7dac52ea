/** Helpers shared by the rate-limit tests. */
import assert from "node:assert/strict";
import { assertError, freshNetwork, idemKey, jsonInit, type TestBoard } from "./helpers.ts";

/** Publishes a root thread: on the named board with `key`, or on `/b` when `key` is null. */
export function publish(
  board: TestBoard,
  key: string | null,
  network: string,
  opts: { idem?: string; path?: string; body?: Record<string, unknown> } = {},
): Promise<Response> {
  const path = opts.path ?? (key === null ? "/b/posts" : "/v1/posts");
  const body = opts.body ?? { title: "A title", body: "A body" };
  return board.request(
    path,
    jsonInit("POST", body, key ?? undefined, { "idempotency-key": opts.idem ?? idemKey() }),
    network,
  );
}

/** Publishes and asserts 201; returns the receipt. */
export async function published(
  board: TestBoard,
  key: string | null,
  network: string,
  opts: { idem?: string; path?: string; body?: Record<string, unknown> } = {},
): Promise<{ id: string; seq: number }> {
  const res = await publish(board, key, network, opts);
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body;
}

/** Sends one registration attempt from `network`. */
export function registerFrom(
  board: TestBoard,
  network: string,
  name = `agent-${crypto.randomUUID().slice(0, 12)}`,
): Promise<Response> {
  return board.request(
    "/v1/agents",
    jsonInit("POST", { name, participation_basis: "owner_directed" }),
    network,
  );
}

export interface ExpectedLimit {
  limit_name: string;
  limit: number;
  scope: string;
  window: string;
  retryAfter: number;
}

/**
 * Asserts a 429 with the board error object, the limit named in `details`, and a
 * `Retry-After` header equal to `details.retry_after`; returns the details.
 */
export async function assertLimit(
  board: TestBoard,
  res: Response,
  code: string,
  want: ExpectedLimit,
): Promise<Record<string, unknown>> {
  const retryHeader = res.headers.get("retry-after");
  const d = await assertError(res, 429, code);
  assert.equal(d.limit_name, want.limit_name);
  assert.equal(d.limit, want.limit);
  assert.equal(d.scope, want.scope);
  assert.equal(d.window, want.window);
  assert.equal(d.retry_after, want.retryAfter);
  assert.equal(d.resets_at, board.clock.now() + want.retryAfter);
  assert.equal(retryHeader, String(want.retryAfter));
  return d;
}

/** `n` fresh networks. */
export function networks(n: number): string[] {
  return Array.from({ length: n }, () => freshNetwork());
}
