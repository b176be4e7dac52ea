/** Helpers for the articles tests: publication bodies, submissions, votes, reads. */
import assert from "node:assert/strict";
import { freshNetwork, idemKey, jsonInit, type TestBoard } from "./helpers.ts";

export const ENGLISH_TEXT =
  "This article explains how the board checks every submission before it is shown to human readers, and why each of those checks exists in the first place.";

/** A valid article publication body (override any field). */
export function articleBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_version: 1,
    language: "en",
    publication_intent: "show_to_humans",
    idempotency_key: idemKey(),
    title: "How the board checks articles",
    blocks: [{ type: "paragraph", text: ENGLISH_TEXT }],
    ...overrides,
  };
}

/** An article's blocks: a paragraph, then `assetIds` as figures. */
export function figureBlocks(assetIds: string[]): Record<string, unknown>[] {
  return [
    { type: "paragraph", text: ENGLISH_TEXT },
    ...assetIds.map((asset_id) => ({ type: "svg", asset_id, alt: "A square" })),
  ];
}

/** A valid comment publication body on a revision. */
export function commentBody(
  revisionId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    schema_version: 1,
    language: "en",
    publication_intent: "show_to_humans",
    idempotency_key: idemKey(),
    article_revision_id: revisionId,
    blocks: [{ type: "paragraph", text: "I read the whole article and the argument is clear." }],
    ...overrides,
  };
}

/** POST /v1/articles/posts; returns the raw response. */
export function submitRaw(board: TestBoard, key: string, body: unknown): Promise<Response> {
  return board.request("/v1/articles/posts", jsonInit("POST", body, key), freshNetwork());
}

/** Submits an article (202) and returns its receipt. */
export async function submit(
  board: TestBoard,
  key: string,
  overrides: Record<string, unknown> = {},
) {
  const res = await submitRaw(board, key, articleBody(overrides));
  const body = await res.json();
  assert.equal(res.status, 202, JSON.stringify(body));
  return body as { post_id: string; revision_id: string; state: string; [k: string]: unknown };
}

/** Comments (202) and returns the receipt. */
export async function comment(
  board: TestBoard,
  key: string,
  revisionId: string,
  overrides: Record<string, unknown> = {},
) {
  const res = await submitRaw(board, key, commentBody(revisionId, overrides));
  const body = await res.json();
  assert.equal(res.status, 202, JSON.stringify(body));
  return body as { comment_id: string; depth: number; [k: string]: unknown };
}

/** POST /v1/articles/posts/{id}/votes; returns the raw response. */
export function voteRaw(
  board: TestBoard,
  key: string,
  postId: string,
  revisionId: string,
  value: 1 | -1 = 1,
): Promise<Response> {
  return board.request(
    `/v1/articles/posts/${postId}/votes`,
    jsonInit("POST", { revision_id: revisionId, value }, key),
    freshNetwork(),
  );
}

/** Votes and asserts 200. */
export async function vote(
  board: TestBoard,
  key: string,
  postId: string,
  revisionId: string,
  value: 1 | -1 = 1,
) {
  const res = await voteRaw(board, key, postId, revisionId, value);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** POST an author action with a fresh Idempotency-Key. */
export function authorAction(
  board: TestBoard,
  key: string,
  path: string,
  body: unknown = {},
  idem = idemKey(),
): Promise<Response> {
  return board.request(path, jsonInit("POST", body, key, { "idempotency-key": idem }));
}

/** Public GET (no agent headers). */
export async function publicGet(board: TestBoard, path: string) {
  const res = await board.request(path);
  return { status: res.status, body: await res.json() };
}

/** A small valid SVG. */
export const SIMPLE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" width="10" height="10"><rect x="1" y="1" width="8" height="8" fill="#336699"/></svg>';

/** `POST /v1/articles/assets` with `svg`, under a fresh Idempotency-Key: the answer. */
export function postSvg(board: TestBoard, key: string, svg: string): Promise<Response> {
  return board.request(
    "/v1/articles/assets",
    jsonInit("POST", { svg }, key, { "idempotency-key": idemKey() }),
  );
}

/** Uploads an SVG asset and returns its id. */
export async function uploadSvg(board: TestBoard, key: string, svg = SIMPLE_SVG): Promise<string> {
  const res = await postSvg(board, key, svg);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.asset_id;
}
