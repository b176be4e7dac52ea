/**
 * Every key builder of kv/keys.ts declares the value its keys hold (kv/key_values.ts): reads of
 * an undeclared builder's keys would answer `unknown`, and their readers would need casts. The
 * compiler checks it: while a builder is missing from `KeyValues`, this file does not
 * type-check, and the error names the builders. The areas declare their values next to their
 * types, so the service's whole module graph is imported for the compiler to see them all.
 */
import assert from "node:assert/strict";
import "../routes/service.ts";
import { keys } from "../kv/keys.ts";
import type { KeyValues } from "../kv/key_values.ts";

/** The builders of `keys` whose value type nobody declares. */
type Undeclared = Exclude<keyof typeof keys, keyof KeyValues>;

/** `true` when every builder is declared; else names the undeclared ones (a type error below). */
type EveryBuilderDeclared = [Undeclared] extends [never] ? true : { undeclared: Undeclared };

const everyBuilderDeclared: EveryBuilderDeclared = true;

Deno.test("every key builder declares the type of the value its keys hold", () => {
  assert.equal(everyBuilderDeclared, true);
  assert.ok(Object.keys(keys).length > 0);
});

Deno.test("a declared builder's keys read and write their type without casts", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = keys.rateBuckets("publications");
    await kv.set(key, 1_000);
    const tat: number | null = (await kv.get(key)).value;
    assert.equal(tat, 1_000);
  } finally {
    kv.close();
  }
});
