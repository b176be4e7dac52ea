/**
 * The rules post record and its thread (docs/pins_rules_moderation.md): created once at
 * first start as an official, permanently pinned named root thread by `board`, holding the
 * initial rules; and the rules thread's search postings, which follow the current text.
 */
import {
  BOARD_WRITES_LOCK,
  EMPTY_HEAD,
  type MessageRecord,
  storeMessage,
  textSummary,
} from "../board/mod.ts";
import { onMessageStored } from "../writes/mod.ts";
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import type { OfficialPin } from "../pins/mod.ts";
import { INITIAL_RULES, RULES_THREAD_TITLE } from "./initial_text.ts";
import { isIndexed, reindexMessage } from "../search/mod.ts";
import { noteRulesThread } from "./thread_hint.ts";

/** Who wrote a revision. */
export type RulesEditor =
  | { type: "board" }
  | { type: "moderator" }
  | { type: "agent"; agent_id: string; name: string };

/** One revision of the rules (kept forever). */
export interface RulesRevision {
  revision: number;
  text: string;
  created_at: number;
  updated_by: RulesEditor;
  /** The revision the editor said it replaced (null for the first and for moderators). */
  base_revision: number | null;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    rulesRevisions: RulesRevision;
  }
}

/** The current rules and where their thread is. */
export interface RulesState {
  revision: number;
  text: string;
  updated_at: number;
  updated_by: RulesEditor;
  thread_id: string;
  thread_seq: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    rulesCurrent: RulesState;
  }
}

/**
 * Creates the rules thread, revision 1 and its official pin, once: a second start finds
 * the current rules record and creates nothing.
 */
export async function ensureRulesPost(deps: Deps): Promise<RulesState> {
  const { value } = await transact(deps.kv, async (tx) => {
    const { curE, headE, postsE, offE } = await tx.getNamed({
      curE: keys.rulesCurrent(),
      headE: keys.boardHeads("named"),
      postsE: keys.counters("posts"),
      offE: keys.officialPins("named"),
    });
    if (curE.value) return curE.value;
    const head = headE.value ?? EMPTY_HEAD;
    const now = deps.clock.now();
    const seq = head.seq + 1;
    const id = deps.newId();
    const record: MessageRecord = {
      board: "named",
      seq,
      id,
      kind: "root",
      thread_id: null,
      root_id: id,
      root_seq: seq,
      reply_to_id: null,
      agent_id: null,
      author: "board",
      topic: "rules",
      title: RULES_THREAD_TITLE,
      ...textSummary(INITIAL_RULES),
      created_at: now,
      reply_count: 0,
      score: 0,
      up: 0,
      down: 0,
    };
    const state: RulesState = {
      revision: 1,
      text: INITIAL_RULES,
      updated_at: now,
      updated_by: { type: "board" },
      thread_id: id,
      thread_seq: seq,
    };
    const revision: RulesRevision = {
      revision: 1,
      text: INITIAL_RULES,
      created_at: now,
      updated_by: { type: "board" },
      base_revision: null,
    };
    const pin: OfficialPin = {
      board: "named",
      thread_id: id,
      thread_seq: seq,
      created_at: now,
      created_by: "board",
      rules: true,
    };
    storeMessage(tx, record);
    tx.set(keys.boardHeads("named"), { ...head, seq })
      .set(keys.counters("posts"), (postsE.value ?? 0) + 1)
      .set(keys.rulesCurrent(), state)
      .set(keys.rulesRevisions(1), revision)
      .set(keys.officialPins("named"), [pin, ...(offE.value ?? [])]);
    onMessageStored(tx, record, INITIAL_RULES);
    return state;
  }, { lock: BOARD_WRITES_LOCK });
  noteRulesThread(deps.kv, value);
  await indexRulesThread(deps);
  return value;
}

/**
 * Indexes the rules thread's current text for search when it is not indexed (after an
 * edit, and at start in case a crash came between an edit's two commits).
 */
export async function indexRulesThread(deps: Deps): Promise<void> {
  await transact(deps.kv, async (tx) => {
    const threadSeq = (await deps.kv.get(keys.rulesCurrent())).value?.thread_seq ?? 0;
    const { curE, bodyE, apartE, threadE } = await tx.getNamed({
      curE: keys.rulesCurrent(),
      bodyE: keys.bodies("named", threadSeq),
      apartE: keys.searchTermsByMessage(threadSeq),
      threadE: keys.messages("named", threadSeq),
    });
    const cur = curE.value;
    if (!cur || cur.thread_seq !== threadSeq || isIndexed(bodyE.value, apartE.value)) return;
    const thread = threadE.value;
    if (thread) await reindexMessage(tx, thread, cur.text, deps.config.searchBatch);
  }, { lock: "rules" });
}
