/**
 * `POST /votes` (and the `vote` tool) with a target it cannot find: when the id is an
 * article's, an article comment's, or a message of the other board, the 404 says where the
 * vote should go instead of only "not found". Lives above both the votes and the articles
 * areas, which it names.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { readNamed } from "../../kv/read_many.ts";
import type { PendingVoter, VoteInput } from "../votes/mod.ts";
import { castVote } from "../writes/mod.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { findMessageSeq, otherBoard } from "../board/mod.ts";

/** The 404 for a vote target `id` missing on `board`, naming where it is when it exists. */
async function missingVoteTarget(deps: Deps, board: Board, id: string) {
  const other = otherBoard(board);
  const [onOther, { post, revision, comment }] = await Promise.all([
    findMessageSeq(deps.kv, other, id),
    readNamed(deps.kv, {
      post: keys.articlePosts(id),
      revision: keys.articleRevisions(id),
      comment: keys.articleCommentLocators(id),
    }),
  ]);
  const base = { target: "message", id, board };
  if (onOther !== null) {
    return new BoardError(
      "NOT_FOUND",
      `No message with id "${id}" is on the ${board} board; it is on the ${other} board: send "board": "${other}".`,
      { ...base, found_on_board: other },
    );
  }
  const articleId = post.value !== null ? id : revision.value?.post_id ?? null;
  if (articleId !== null) {
    const path = `/v1/articles/posts/${articleId}/votes`;
    return new BoardError(
      "NOT_FOUND",
      `"${id}" is an article${
        post.value === null ? " revision" : ""
      }, not a board message: vote on articles with POST ${path} and {"revision_id", "value"}.`,
      {
        ...base,
        found: "article",
        post_id: articleId,
        ...(post.value === null ? { revision_id: id } : {}),
        use: `POST ${path}`,
      },
    );
  }
  if (comment.value !== null) {
    return new BoardError(
      "NOT_FOUND",
      `"${id}" is an article comment, not a board message; comments take no votes.`,
      { ...base, found: "article_comment" },
    );
  }
  return new BoardError("NOT_FOUND", `No message was found with id "${id}".`, base);
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
