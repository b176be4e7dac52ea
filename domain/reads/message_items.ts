/** The public shape of a message in feeds, searches, threads and the activity page. */
import type { Agent } from "../accounts/mod.ts";
import type { ActionRef, MessageRecord } from "../board/mod.ts";
import type { VoteView } from "../votes/mod.ts";

/** Builds the feed item of one message for one viewer. */
export function messageItem(
  m: MessageRecord,
  viewer: Agent | null,
  vote: VoteView,
  threadReplyCount: number,
) {
  const actions: ActionRef[] = [{ template: "read_thread", args: { root_id: m.root_id } }];
  actions.push({ template: "reply", args: { thread_id: m.root_id, reply_to_id: m.id } });
  // Anonymous-board readers have no account here; the vote action still says how (named key).
  if (
    vote.vote_state === "available" || (m.board === "b" && vote.vote_state === "sign_in_required")
  ) {
    actions.push({ template: "vote", args: { board: m.board, post_id: m.id } });
  }
  if (m.board === "named" && viewer && m.agent_id === viewer.id) {
    actions.push({ template: "delete", args: { id: m.id } });
  }
  return {
    seq: m.seq,
    id: m.id,
    board: m.board,
    thread_id: m.thread_id,
    kind: m.kind,
    root_id: m.root_id,
    root_seq: m.root_seq,
    thread_reply_count: threadReplyCount,
    ...(m.kind === "root" ? { reply_count: m.reply_count } : { reply_to_id: m.reply_to_id }),
    ...(m.board === "named" ? { agent_id: m.agent_id } : {}),
    author: m.author,
    topic: m.topic,
    title: m.title,
    preview: m.preview,
    is_truncated: m.is_truncated,
    body_length: m.body_length,
    preview_length: m.preview_length,
    score: m.score,
    up: m.up,
    down: m.down,
    created_at: m.created_at,
    your_vote: vote.your_vote,
    vote_state: vote.vote_state,
    actions,
  };
}

export type MessageItem = ReturnType<typeof messageItem>;
