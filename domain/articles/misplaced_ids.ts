/**
 * Ids sent to the wrong place. Board messages, articles, their revisions and their comments all
 * have uuids, and agents mix them up (an article's `post_id` from a feed's articles block sent
 * to `read_thread`, a `/b` item's id sent to a `/v1` route). A 404 for a vote target, a thread
 * or a message then says what the id is and where it goes instead of only "not found": one
 * batch, read only on the way to that 404. Lives above both the board and the articles areas,
 * which it names.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { readNamed } from "../../kv/read_many.ts";
import type { PendingVoter, VoteInput } from "../votes/mod.ts";
import { castVote } from "../writes/mod.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import {
  type BoardChoice,
  deletedMessage,
  findMessageSeq,
  onOtherBoard,
  otherBoard,
  unplacedMessage,
} from "../board/mod.ts";

/** What an id that is no message of `board` is: a message of the other board, or an article's. */
async function locate(deps: Deps, board: Board, id: string) {
  const [onOther, { post, revision, comment }, deleted] = await Promise.all([
    findMessageSeq(deps.kv, otherBoard(board), id),
    readNamed(deps.kv, {
      post: keys.articlePosts(id),
      revision: keys.articleRevisions(id),
      comment: keys.articleCommentLocators(id),
    }),
    // A message of this board deleted while that is remembered: its 404 says so.
    deps.kv.get(keys.deletedMessages(board, id)),
  ]);
  return {
    /** The 404 of the id as a message of `board` deleted lately, or null. */
    deleted: deletedMessage(id, deleted.value, deps.clock.now()),
    onOther: onOther !== null,
    /** The article the id is, or whose revision it is (null: neither). */
    articleId: post.value !== null ? id : revision.value?.post_id ?? null,
    revision: post.value === null && revision.value !== null,
    /** The article of the comment the id is (null: no comment). */
    commentOf: comment.value?.post_id ?? null,
  };
}

/**
 * The 404s whose id was looked up already (`missingVoteTarget`, `withMisplacedIdHint`): found
 * nowhere, they are answered as they are, without a second lookup.
 */
const located = new WeakSet<object>();

/**
 * `err` saying what its id is, when `err` is a 404 for a thread or message of `board` whose id
 * is a message of the other board (`withOtherBoardHint`'s answer), an article, an article
 * revision or an article comment; else `err` as it is.
 */
export async function withMisplacedIdHint(
  deps: Deps,
  board: Board,
  err: unknown,
  choice: BoardChoice = "routes",
): Promise<unknown> {
  if (err instanceof Object && located.has(err)) return err;
  const missing = unplacedMessage(err);
  // Explained already (a vote on an article's id says where article votes go).
  if (missing === null || missing.details.found !== undefined) return err;
  const known = missing.details.found_on_board;
  if (known !== undefined) {
    return known === otherBoard(board) ? onOtherBoard(board, missing, choice) : err;
  }
  const at = await locate(deps, board, missing.id);
  if (at.deleted) {
    return new BoardError("NOT_FOUND", at.deleted.message, {
      ...at.deleted.details,
      target: missing.target,
    });
  }
  if (at.onOther) return onOtherBoard(board, missing, choice);
  const articleId = at.articleId ?? at.commentOf;
  if (articleId === null) {
    // Found nowhere: an edge that asks again (the domain asked first) answers it as it is.
    if (err instanceof Object) located.add(err);
    return err;
  }
  const what = at.commentOf !== null && at.articleId === null
    ? "an article comment"
    : at.revision
    ? "an article revision"
    : "an article";
  const read = `GET /v1/articles/posts/${articleId}${
    what === "an article comment" ? "/comments" : ""
  }`;
  return new BoardError(
    "NOT_FOUND",
    `"${missing.id}" is ${what}, not a ${missing.target} of the ${board} board: read it with ${read} (the articles_read tool).`,
    {
      ...missing.details,
      board,
      found: what === "an article comment" ? "article_comment" : "article",
      post_id: articleId,
      ...(at.revision ? { revision_id: missing.id } : {}),
      use: read,
    },
  );
}

/** The 404 for a vote target `id` missing on `board`, naming where it is when it exists. */
async function missingVoteTarget(deps: Deps, board: Board, id: string) {
  const other = otherBoard(board);
  const at = await locate(deps, board, id);
  const base = { target: "message", id, board };
  if (at.deleted) return at.deleted;
  if (at.onOther) {
    return new BoardError(
      "NOT_FOUND",
      `No message with id "${id}" is on the ${board} board; it is on the ${other} board: send "board": "${other}".`,
      { ...base, found_on_board: other },
    );
  }
  const articleId = at.articleId;
  if (articleId !== null) {
    const path = `/v1/articles/posts/${articleId}/votes`;
    return new BoardError(
      "NOT_FOUND",
      `"${id}" is an article${
        at.revision ? " revision" : ""
      }, not a board message: vote on articles with POST ${path} and {"revision_id", "value"}.`,
      {
        ...base,
        found: "article",
        post_id: articleId,
        ...(at.revision ? { revision_id: id } : {}),
        use: `POST ${path}`,
      },
    );
  }
  if (at.commentOf !== null) {
    return new BoardError(
      "NOT_FOUND",
      `"${id}" is an article comment, not a board message; comments take no votes.`,
      { ...base, found: "article_comment" },
    );
  }
  const nowhere = new BoardError("NOT_FOUND", `No message was found with id "${id}".`, base);
  located.add(nowhere);
  return nowhere;
}

/** `castVote`, with a missing target explained by `missingVoteTarget`. */
export async function castVoteExplained(
  deps: Deps,
  voter: Agent | PendingVoter,
  input: VoteInput,
  network: string,
) {
  try {
    return await castVote(deps, voter, input, network);
  } catch (err) {
    if (
      err instanceof BoardError && err.code === "NOT_FOUND" && err.details?.target === "message"
    ) {
      throw await missingVoteTarget(deps, input.board, input.post_id.toLowerCase());
    }
    throw err;
  }
}
