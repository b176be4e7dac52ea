/**
 * Read plans of the agent reads (docs/read_plans.md): once the posts are known,
 * everything a view of them needs is read in one batch — the revisions a projection and a row
 * show (public, candidate, latest), the accounts of authors whose post keeps no copy of their
 * creation time, and the caller's own keys (its votes, an exact revision) — and a revision's
 * blocks and figures are listed by prefix in the same round trip as the keys that name them.
 */
import { keys } from "../../kv/keys.ts";
import type { NamedEntry, NamedRead } from "../../kv/key_values.ts";
import { listTyped, readMany, readNamed } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { AgentCache, type PostBundle, project } from "./lifecycle.ts";
import type { PolicyContext } from "./policy.ts";
import type { ArticlePost, Block, RevisionRecord } from "./types.ts";

/**
 * The caller of a read: known, or a promise of it to take once the read's first batch is out
 * (the credential resolves meanwhile: routes/authentication.ts `callerOf`, MCP `callerReady`).
 * Taken only when needed, so a read refused before it needs the caller leaves it alone.
 */
export type ViewerRef = Agent | (() => Promise<Agent>);

/** The caller a `ViewerRef` names. */
export function viewerOf(viewer: ViewerRef): Promise<Agent> {
  return typeof viewer === "function" ? viewer() : Promise.resolve(viewer);
}

/** The revisions of a post that its views and its projection use. */
export function liveRevisionIds(post: ArticlePost): string[] {
  return [post.public_revision_id, post.candidate_revision_id, post.latest_revision_id]
    .filter((id): id is string => !!id);
}

/** The caller's vote keys on the live revisions of `posts` (for `your_vote`). */
export function voteKeysOf(
  posts: ArticlePost[],
  viewerId: string,
): ReturnType<typeof keys.articleVotes>[] {
  const ids = [...new Set(posts.flatMap(liveRevisionIds))];
  return ids.map((id) => keys.articleVotes(id, viewerId));
}

/** The caller's votes read by a plan, by revision id. */
export function votesFrom(
  entries: readonly Deno.KvEntryMaybe<{ revision_id: string; value: 1 | -1 }>[],
): Map<string, 1 | -1> {
  const out = new Map<string, 1 | -1>();
  for (const e of entries) if (e.value) out.set(e.value.revision_id, e.value.value);
  return out;
}

/**
 * Reads, in one batch, the live revisions of `posts` and `extraRevisions` (but those in
 * `known`, read before), the authors a projection needs, and the caller's keys `also`.
 * Answers the bundles (every revision read or known is in each bundle), an agent cache
 * holding the authors read, and `also`'s entries by name.
 */
export async function readBundles<const R extends Record<string, NamedRead>>(
  deps: Deps,
  posts: ArticlePost[],
  also: R,
  extraRevisions: string[] = [],
  known: ReadonlyMap<string, RevisionRecord> = new Map(),
): Promise<{
  bundles: PostBundle[];
  agents: AgentCache;
  got: { -readonly [N in keyof R]: NamedEntry<R[N]> };
}> {
  const revIds = [...new Set([...posts.flatMap(liveRevisionIds), ...extraRevisions])]
    .filter((id) => !known.has(id));
  const authorIds = [
    ...new Set(
      posts.filter((p) => p.author_created_at === undefined && p.candidate_revision_id)
        .map((p) => p.author_id),
    ),
  ];
  // Issued together: one round trip.
  const [got, revisions, authors] = await Promise.all([
    readNamed(deps.kv, also),
    readMany(deps.kv, revIds.map((id) => keys.articleRevisions(id))),
    readMany(deps.kv, authorIds.map((id) => keys.agents(id))),
  ]);
  const revs = new Map<string, RevisionRecord>(known);
  for (const e of revisions) if (e.value) revs.set(e.value.id, e.value);
  const agents = new AgentCache(deps, authors.map((e, i) => [authorIds[i], e.value]));
  return { bundles: posts.map((post) => ({ post, revs })), agents, got };
}

/** Bundles projected to now (`slots`: see `project`). */
export function projectAll(
  deps: Deps,
  ctx: PolicyContext,
  bundles: PostBundle[],
  agents: AgentCache,
  slots?: ReadonlyMap<string, number>,
): Promise<PostBundle[]> {
  return Promise.all(
    bundles.map(async (b) => (await project(deps, ctx, b, agents, slots)).bundle),
  );
}

/** Lists a revision's block parts (one round trip, issued with other reads). */
export async function listBlockParts(kv: Deno.Kv, revisionId: string): Promise<string[]> {
  const parts: string[] = [];
  const prefix = keys.articleRevisionParts.range(revisionId);
  for await (const e of listTyped(kv, { prefix }, { batchSize: 100 })) parts.push(e.value);
  return parts;
}

/** A revision's blocks from its listed parts. */
export function blocksFromParts(rev: RevisionRecord, parts: string[]): Block[] {
  if (parts.length !== rev.parts) throw new Error(`revision ${rev.id} content is incomplete`);
  return JSON.parse(parts.join(""));
}

/**
 * The sanitised SVG sources of assets, every asset's parts listed at once (one round trip;
 * an asset and its parts are stored by one commit and never removed, so the listing is
 * whole). Missing assets are left out.
 */
export async function listSvgSources(
  kv: Deno.Kv,
  assetIds: string[],
): Promise<Map<string, string>> {
  const ids = [...new Set(assetIds)];
  const sources = await Promise.all(ids.map(async (id) => {
    const parts: string[] = [];
    const prefix = keys.articleAssetParts.range(id);
    for await (const e of listTyped(kv, { prefix }, { batchSize: 100 })) parts.push(e.value);
    return parts;
  }));
  const out = new Map<string, string>();
  ids.forEach((id, i) => sources[i].length && out.set(id, sources[i].join("")));
  return out;
}
