/**
 * Where the rules thread is and the text it was last seen with, per store: what a rules
 * edit plans its one read batch with (the thread's summary and body entry, and the search
 * lists its new text changes). A hint only chooses keys to read: every fact an edit decides
 * on is read with a check in its commit, and a hint that turns out wrong (another instance
 * edited, or none was seen yet) costs the edit one more read round, never a wrong write.
 */
import { type IndexedTerms, indexTerms, noteRulesThreadSeq } from "../search/mod.ts";
import { RULES_THREAD_TITLE } from "./initial_text.ts";

/** What the rules thread was last seen as. */
interface RulesThreadHint {
  threadSeq: number;
  text: string;
}

const hints = new WeakMap<Deno.Kv, RulesThreadHint>();

/** Notes where the rules thread of `kv` is and its current text, as just read or written. */
export function noteRulesThread(kv: Deno.Kv, state: { thread_seq: number; text: string }): void {
  hints.set(kv, { threadSeq: state.thread_seq, text: state.text });
  noteRulesThreadSeq(kv, state.thread_seq); // a purge's commit then checks the thread's entry
}

/** The last rules thread seen on `kv`, or null. */
export function rulesThreadHint(kv: Deno.Kv): RulesThreadHint | null {
  return hints.get(kv) ?? null;
}

/** The search entry of the rules thread holding `text` (its title and topic never change). */
export function rulesIndexEntry(text: string): IndexedTerms {
  return { terms: indexTerms(RULES_THREAD_TITLE, text), topic: "rules" };
}
