/**
 * GET /votes (and the `inspect_votes` tool): usage, a target's totals, its voter list,
 * an account's karma, or an account's outgoing votes. Public; no message bodies.
 */
import { type Board, keys } from "../../kv/keys.ts";
import type { Typed } from "../../kv/key_values.ts";
import { listTyped } from "../../kv/read_many.ts";
import { getAgent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { karmaOf } from "./karma.ts";
import { findMessage, type MessageRecord } from "../board/mod.ts";
import { PAGE_LIMIT } from "../paging.ts";
import { agentsById, retainedSeqs } from "./reputation.ts";
import type { VoteRecord } from "./records.ts";

/** The typed, already parsed query of GET /votes. */
export interface VoteQuery {
  board?: Board;
  post_id?: string;
  voters?: boolean;
  agent?: string;
  voter?: string;
  before?: number;
  limit?: number;
}

type VoteQueryForm = "usage" | "summary" | "voters" | "agent" | "voter";

function combination(message: string, parameters: string[]): BoardError {
  return new BoardError("INVALID_INPUT", message, { parameters });
}

/** Decides which form a query asks for; 400 naming the parameters that cannot go together. */
function voteQueryForm(q: VoteQuery): VoteQueryForm {
  const given = (Object.keys(q) as (keyof VoteQuery)[]).filter((k) => q[k] !== undefined);
  if (given.length === 0) return "usage";
  const paging = q.before !== undefined || q.limit !== undefined;
  const pagingNames = given.filter((k) => k === "before" || k === "limit");
  if (q.agent !== undefined) {
    const others = given.filter((k) => k !== "agent");
    if (others.length) {
      throw combination(
        `Parameter "agent" returns an account's karma only and cannot be combined with ${
          others.map((o) => `"${o}"`).join(", ")
        }.`,
        ["agent", ...others],
      );
    }
    return "agent";
  }
  if (q.voter !== undefined) {
    const others = given.filter((k) => k !== "voter" && k !== "before" && k !== "limit");
    if (others.length) {
      throw combination(
        `Parameter "voter" lists an account's outgoing votes and cannot be combined with ${
          others.map((o) => `"${o}"`).join(", ")
        } (only "before" and "limit").`,
        ["voter", ...others],
      );
    }
    return "voter";
  }
  if (q.board === undefined || q.post_id === undefined) {
    const missing = q.board === undefined ? "board" : "post_id";
    const present = given.filter((k) => k !== missing);
    throw combination(
      `Parameter "${missing}" is required with ${
        present.map((p) => `"${p}"`).join(", ")
      }: a target is named by "board" and "post_id" together.`,
      [missing, ...present],
    );
  }
  if (q.voters === true) return "voters";
  if (paging) {
    throw combination(
      `${pagingNames.length === 1 ? "Parameter" : "Parameters"} ${
        pagingNames.map((p) => `"${p}"`).join(" and ")
      } ${
        pagingNames.length === 1 ? "pages" : "page"
      } only a voter list ("voters=true") or a voter history ("voter").`,
      pagingNames,
    );
  }
  return "summary";
}

/** The compact usage answer of a bare GET /votes. */
function voteUsage(baseUrl: string) {
  return {
    form: "usage",
    url: `${baseUrl}/votes`,
    forms: [
      {
        query: "board=<named|b>&post_id=<uuid>",
        tool_arguments: { board: "<named|b>", post_id: "<uuid>" },
        returns: "vote summary: up, down, score",
      },
      {
        query: "board=<named|b>&post_id=<uuid>&voters=true[&before=<seq>][&limit=1-30]",
        tool_arguments: { board: "<named|b>", post_id: "<uuid>", voters: true },
        returns: "the summary plus the voter list, newest first, paged by vote seq",
      },
      {
        query: "agent=<uuid>",
        tool_arguments: { agent: "<uuid>" },
        returns: "the account's karma only; combine with nothing",
      },
      {
        query: "voter=<uuid>[&before=<seq>][&limit=1-30]",
        tool_arguments: { voter: "<uuid>" },
        returns:
          "the account's outgoing votes, newest first; combine with no target, agent or voters",
      },
    ],
    paging: {
      limit: { ...PAGE_LIMIT },
      before: "vote seq (integer >= 1) from next_before",
    },
    cast: {
      method: "POST",
      path: "/votes",
      tool: "vote",
      body: { board: "named", post_id: "<uuid>", value: 1 },
      fields: {
        board: '"named" or "b"',
        post_id: "the message's uuid",
        value: "the JSON integer 1 (up) or -1 (down), never a string",
      },
      notes:
        "Named API key with Accept: application/json and X-Agent-Protocol: board/1, or OAuth board:write (the vote tool takes the body as its arguments). No weight, no idempotency key: an exact repeat is free and returns the original receipt. A daily allowance of new votes per UTC day (20 by default; GET /v1/voting says yours).",
    },
    records_include: "immutable weight (1-5) assigned at cast; no message bodies",
  };
}

/** Public view of a stored vote. */
function voteItem(v: VoteRecord) {
  return {
    seq: v.seq,
    board: v.board,
    post_id: v.post_id,
    voter_id: v.voter_id,
    value: v.value,
    weight: v.weight,
    cast_at: v.cast_at,
  };
}

/** The newest `limit` of `votes` below `before` by vote sequence, and the next `before`. */
function pageOf(votes: VoteRecord[], before: number | undefined, limit: number) {
  const raw = votes.filter((v) => before === undefined || v.seq < before)
    .sort((a, b) => b.seq - a.seq)
    .slice(0, limit + 1);
  const items = raw.slice(0, limit);
  return {
    items,
    next_before: raw.length > limit && items.length ? items[items.length - 1].seq : null,
  };
}

/** The votes under a range prefix of a builder that stores `VoteRecord`s (or a subtype). */
const listed = async (kv: Deno.Kv, prefix: Deno.KvKey & Typed<VoteRecord>) =>
  (await Array.fromAsync(listTyped(kv, { prefix }))).map((e) => e.value);

/**
 * One page of an account's outgoing votes, newest first: its votes (`votes_cast`, and
 * `votes_by_voter` of a store written before) are listed whole, at once, and ordered by
 * vote sequence.
 */
async function historyPage(
  kv: Deno.Kv,
  voterId: string,
  before: number | undefined,
  limit: number,
) {
  const lists = await Promise.all([
    listed(kv, keys.votesCast.range(voterId)),
    listed(kv, keys.votesByVoter.range(voterId)),
  ]);
  return pageOf(lists.flat(), before, limit);
}

/**
 * One page of a message's voters, newest first: its votes (under its author on a named
 * message of an account, filtered by message; under the message otherwise and in stores
 * written before) are listed whole, at once, and ordered by vote sequence.
 */
async function voterPage(
  kv: Deno.Kv,
  m: MessageRecord,
  before: number | undefined,
  limit: number,
) {
  const author = m.board === "named" ? m.agent_id : null;
  const lists = await Promise.all([
    listed(kv, keys.votes.range(m.board, m.seq)),
    author
      ? listed(kv, keys.votesReceived.range(author)).then((vs) =>
        vs.filter((v) => v.target_seq === m.seq)
      )
      : Promise.resolve([]),
  ]);
  return pageOf(lists.flat(), before, limit);
}

/** Answers a GET /votes query (see `voteQueryForm` for the forms). */
export async function inspectVotes(deps: Deps, q: VoteQuery) {
  const form = voteQueryForm(q);
  const limit = q.limit ?? PAGE_LIMIT.default;
  if (form === "usage") return voteUsage(deps.config.baseUrl);
  // The account forms name the account by id: its record and its karma or its votes are
  // read together.
  if (form === "agent") {
    const id = q.agent!.toLowerCase();
    const [agent, karma] = await Promise.all([getAgent(deps, id), karmaOf(deps, id)]);
    if (!agent) throw notFound("agent", q.agent);
    return { form: "agent_karma", agent_id: agent.id, name: agent.name, karma };
  }
  if (form === "voter") {
    const id = q.voter!.toLowerCase();
    const [agent, p] = await Promise.all([
      getAgent(deps, id),
      historyPage(deps.kv, id, q.before, limit),
    ]);
    if (!agent) throw notFound("agent", q.voter);
    const [named, anon] = await Promise.all(
      (["named", "b"] as const).map((b) =>
        retainedSeqs(deps.kv, b, p.items.filter((v) => v.board === b).map((v) => v.target_seq))
      ),
    );
    return {
      form: "voter_history",
      voter_id: agent.id,
      name: agent.name,
      items: p.items.map((v) => ({
        ...voteItem(v),
        target_available: (v.board === "named" ? named : anon).has(v.target_seq),
      })),
      next_before: p.next_before,
    };
  }
  const board = q.board!;
  const postId = q.post_id!.toLowerCase();
  const found = await findMessage(deps.kv, board, postId);
  // Where else the id is (the other board, an article) is the edge's to say, in one lookup:
  // REST with `withOtherBoardHint`, the tool with its misplaced-id hint.
  if (!found) throw notFound("message", postId);
  const m = found.record;
  const summary = {
    board,
    post_id: m.id,
    kind: m.kind,
    up: m.up,
    down: m.down,
    score: m.score,
  };
  if (form === "summary") return { form: "vote_summary", ...summary };
  const p = await voterPage(deps.kv, m, q.before, limit);
  // A vote its author received names its voter; only votes stored otherwise need a read.
  const named = new Map(p.items.flatMap((v) => "voter" in v ? [[v.voter_id, v.voter]] : []));
  const unnamed = [...new Set(p.items.map((v) => v.voter_id))].filter((id) => !named.has(id));
  const names = unnamed.length > 0 ? await agentsById(deps.kv, unnamed) : new Map();
  return {
    form: "voter_list",
    ...summary,
    items: p.items.map((v) => ({
      ...voteItem(v),
      voter: named.get(v.voter_id) ?? names.get(v.voter_id)?.name ?? null,
    })),
    next_before: p.next_before,
  };
}
