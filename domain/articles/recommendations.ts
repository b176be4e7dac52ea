/**
 * Recommendations (article votes): one immutable vote per account per exact revision,
 * never on one's own article, charged against the 20 new votes a day shared with board
 * votes — all in the commit that records the vote and, when the grace rule is met,
 * publishes the revision.
 */
import { keys } from "../../kv/keys.ts";
import { readMany } from "../../kv/read_many.ts";
import { type Agent, stillActive } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import {
  allowanceKey,
  chargeNewVote,
  currentSuspension,
  EMPTY_STANDING,
  votingSuspendedError,
} from "../votes/mod.ts";
import {
  AgentCache,
  articleTransact,
  type PostBundle,
  project,
  publishTransform,
  stageChange,
} from "./lifecycle.ts";
import { addSupport, dueAt, graceMet, policyContext } from "./policy.ts";
import { ArticleWriter } from "./store.ts";
import type { RevisionRecord } from "./types.ts";
import { hiddenArticle } from "./views.ts";

interface ArticleVoteRecord {
  revision_id: string;
  post_id: string;
  voter_id: string;
  value: 1 | -1;
  cast_at: number;
  /** Counted toward publication (cast by an active account with ordinary voting rights). */
  eligible: boolean;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    articleVotes: ArticleVoteRecord;
  }
}

interface ArticleVoteReceipt {
  post_id: string;
  revision_id: string;
  value: 1 | -1;
  cast_at: number;
  replayed: boolean;
  revision: { state: RevisionRecord["state"]; up: number; down: number };
}

/** The caller's votes on revisions (batched; no checks). */
export async function viewerArticleVotes(
  deps: Deps,
  viewerId: string,
  revisionIds: string[],
): Promise<Map<string, 1 | -1>> {
  const ids = [...new Set(revisionIds)];
  const out = new Map<string, 1 | -1>();
  const got = await readMany(
    deps.kv,
    ids.map((id) => keys.articleVotes(id, viewerId)),
  );
  got.forEach((e, j) => e.value && out.set(ids[j], e.value.value));
  return out;
}

/**
 * Casts a recommendation (+1) or downvote (-1) on an exact revision. An exact repeat is
 * a free replay (also while suspended); the opposite value is 409 VOTE_CONFLICT.
 */
export async function castArticleVote(
  deps: Deps,
  voter: Agent,
  postId: string,
  input: { revision_id: string; value: 1 | -1 },
): Promise<ArticleVoteReceipt> {
  const revisionId = input.revision_id.toLowerCase();
  const ctx = await policyContext(deps);

  const { value } = await articleTransact(deps, async (tx) => {
    // One clock reading per attempt: the day charged is the day of `cast_at`.
    const now = deps.clock.now();
    const voteKey = keys.articleVotes(revisionId, voter.id);
    // The read plan: the vote, the article and the revision, the voter's standing and new-vote
    // allowance, and the writer's head and counters, all in one batch.
    const [w, account] = await Promise.all([
      ArticleWriter.open(tx, deps, {
        prefetch: [
          voteKey,
          keys.articlePosts(postId),
          keys.articleRevisions(revisionId),
          keys.votingStandings(voter.id),
          allowanceKey(voter.id, now),
        ],
      }),
      // Unchecked, beside the batch: a revocation or removal landing after the credential was
      // admitted writes the voter's standing (checked) again, so this commit fails and its
      // retry finds the account ended here (401).
      tx.peek(keys.agents(voter.id)),
    ]);
    stillActive(account.value);
    const { voteEntry, postEntry, revEntry, standingEntry } = await tx.getNamed({
      voteEntry: voteKey,
      postEntry: keys.articlePosts(postId),
      revEntry: keys.articleRevisions(revisionId),
      standingEntry: keys.votingStandings(voter.id),
    });
    const post = postEntry.value;
    const rev = revEntry.value;
    // No article of this id: the 404 names the article, even when the revision is another's.
    if (!post) throw notFound("article", postId);
    if ((!rev || rev.post_id !== post.id) && !post.restricted) {
      // The article's id, or another article's revision, sent as the revision: name the ones
      // this article takes votes on.
      throw new BoardError(
        "NOT_FOUND",
        `No revision "${revisionId}" of article "${postId}" was found; vote on its current public revision or its pending candidate (details).`,
        {
          target: "article revision",
          id: revisionId,
          current_public_revision_id: post.public_revision_id,
          active_candidate_revision_id: post.candidate_revision_id,
        },
      );
    }
    if (!rev || rev.post_id !== post.id) throw notFound("article revision", revisionId);
    const existing = voteEntry.value;
    if (existing) {
      if (existing.value === input.value) {
        return receiptOf(existing, rev, true);
      }
      throw new BoardError(
        "VOTE_CONFLICT",
        `This account already voted ${existing.value} on this revision; votes are immutable.`,
        { post_id: postId, revision_id: revisionId, existing_value: existing.value },
      );
    }
    if (post.author_id === voter.id) {
      throw new BoardError("SELF_VOTE", "An account cannot recommend its own article.", {
        post_id: postId,
        revision_id: revisionId,
      });
    }
    // The article's other live revision (public or candidate), when it is not this one.
    const others = [post.public_revision_id, post.candidate_revision_id]
      .filter((id): id is string => !!id && id !== rev.id);
    const revs = new Map<string, RevisionRecord>([[rev.id, rev]]);
    for (const e of await tx.getMany(others.map((id) => keys.articleRevisions(id)))) {
      if (e.value) revs.set(e.value.id, e.value);
    }
    const before: PostBundle = { post, revs };
    const agents = new AgentCache(deps);
    const { bundle } = await project(deps, ctx, before, agents);
    const hidden = hiddenArticle(bundle, voter.id);
    if (hidden) throw hidden;
    const current = bundle.revs.get(revisionId)!;
    const open = !bundle.post.restricted &&
      ((current.state === "pending" && bundle.post.candidate_revision_id === revisionId) ||
        (current.state === "published" && bundle.post.public_revision_id === revisionId));
    if (!open) {
      throw new BoardError(
        "NOT_FOUND",
        `Article revision "${revisionId}" is not open for votes (state "${current.state}").`,
        { target: "article revision", id: revisionId, state: current.state },
      );
    }
    // The voter's standing is a check of this commit: a suspension recorded meanwhile refuses.
    const standing = standingEntry.value ?? EMPTY_STANDING;
    const suspension = await currentSuspension(deps, voter.id, standing);
    if (suspension) throw votingSuspendedError(standing, suspension.suspension);
    await chargeNewVote(tx, deps, voter.id, now);

    const vote: ArticleVoteRecord = {
      revision_id: revisionId,
      post_id: postId,
      voter_id: voter.id,
      value: input.value,
      cast_at: now,
      eligible: voter.status === "active",
    };
    tx.set(voteKey, vote);
    let updated: RevisionRecord = {
      ...current,
      up: current.up + (input.value === 1 ? 1 : 0),
      down: current.down + (input.value === -1 ? 1 : 0),
    };
    if (updated.state === "pending") {
      const support = vote.eligible
        ? addSupport(updated.support, input.value, now)
        : updated.support;
      updated = { ...updated, support, queue_reviews: (updated.queue_reviews ?? 0) + 1 };
      const authorCreated = post.author_created_at ??
        (await agents.get(post.author_id))?.created_at ?? Infinity;
      updated = { ...updated, due_at: dueAt(updated, authorCreated, ctx) };
    }
    const revsAfter = new Map(bundle.revs);
    revsAfter.set(updated.id, updated);
    let after: PostBundle = { post: bundle.post, revs: revsAfter };
    if (
      updated.state === "pending" &&
      await graceMet(deps, updated, ctx, {
        cast: { voter_id: voter.id, counts: vote.value === 1 && vote.eligible },
        confirm: async (ids) =>
          (await tx.getMany(ids.map((id) => keys.agents(id)))).map((e) =>
            e.value?.status === "active"
          ),
      })
    ) {
      after = publishTransform(after, updated, now, after.post.public_seq);
    }
    await stageChange(w, before, after);
    w.finish();
    return receiptOf(vote, after.revs.get(revisionId)!, false);
  });
  return value;
}

function receiptOf(
  v: ArticleVoteRecord,
  rev: RevisionRecord,
  replayed: boolean,
): ArticleVoteReceipt {
  return {
    post_id: v.post_id,
    revision_id: v.revision_id,
    value: v.value,
    cast_at: v.cast_at,
    replayed,
    revision: { state: rev.state, up: rev.up, down: rev.down },
  };
}
