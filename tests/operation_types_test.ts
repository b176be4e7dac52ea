/**
 * The registry's contract is checked by the compiler: `operation()` checks a handler's answer,
 * and its MCP tool's, against the schema of its 200 or 201 response (a missing or mistyped
 * field; the published answers allow fields beyond those documented) and its body against the
 * body's schema, and only `operation()` makes an `Operation`. Each `@ts-expect-error` below fails type-checking
 * (`deno check`, and `deno test` before it runs) if the compiler accepts the line under it.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { type Operation, operation, READ, tool } from "../routes/api/operation.ts";
import { feedPage, searchPage, threadPage } from "../domain/reads/mod.ts";
import { feedPage as feedPageSchema, threadPageSchema } from "../routes/api/responses/shared.ts";

const answer = z.object({ id: z.string(), count: z.number().int() });
const base = {
  method: "post",
  path: "/probe",
  operationId: "probe",
  tag: "test",
  summary: "A probe.",
  auth: "none",
  body: { name: "Probe", schema: z.object({ n: z.number().int() }) },
  responses: { 200: { description: "The answer.", schema: answer } },
} as const;

Deno.test("operation(): a handler must answer what its 200 schema declares", () => {
  const good = operation({ ...base, handler: () => Promise.resolve({ id: "a", count: 1 }) });
  const declared: Operation[] = [
    good,
    // @ts-expect-error: `count` is missing
    operation({ ...base, handler: () => Promise.resolve({ id: "a" }) }),
    // @ts-expect-error: `id` is a number, not a string
    operation({ ...base, handler: () => Promise.resolve({ id: 1, count: 1 }) }),
    // @ts-expect-error: `count` may not be null
    operation({ ...base, handler: () => Promise.resolve({ id: "a", count: null }) }),
    // A whole Response or JSON text is the handler's own (HTML pages, raw answers).
    operation({ ...base, handler: () => Promise.resolve(new Response("{}")) }),
  ];
  assert.equal(declared.length, 5);
});

Deno.test("operation(): its MCP tool must answer what the operation declares", () => {
  const probeTool = <A extends object | string>(answer: A) =>
    tool({
      name: "probe",
      title: "Probe",
      description: "A probe.",
      args: {},
      annotations: READ,
      scope: "board:read",
      call: () => Promise.resolve(answer),
    });
  const declared: Operation[] = [
    operation({ ...base, tool: probeTool({ id: "a", count: 1 }) }),
    // JSON text (the read cache's pages) is the tool's own, as a handler's is.
    operation({ ...base, tool: probeTool("{}") }),
    // @ts-expect-error: the tool's answer lacks `count`, which REST answers
    operation({ ...base, tool: probeTool({ id: "a" }) }),
    // @ts-expect-error: the tool's `id` is a number where REST's is a string
    operation({ ...base, tool: probeTool({ id: 1, count: 1 }) }),
  ];
  assert.equal(declared.length, 4);
});

Deno.test("the reads answered as cached JSON text answer what their schemas declare", () => {
  // Feeds, thread reads and search reach their handlers as JSON text (routes/cached_pages.ts),
  // which operation() cannot check: their domain answers are checked against the schemas here.
  type Answer<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;
  const checked: [
    (a: Answer<typeof feedPage>) => z.infer<typeof feedPageSchema>,
    (a: Answer<typeof threadPage>) => z.infer<typeof threadPageSchema>,
    (a: Answer<typeof searchPage>) => z.infer<typeof feedPageSchema>,
  ] = [(a) => a, (a) => a, (a) => a];
  assert.equal(checked.length, 3);
});

Deno.test("operation(): the handler's body is what the body schema parses", () => {
  const op = operation({
    ...base,
    handler: (_c, { body }) => {
      // @ts-expect-error: the body has `n`, a number, and no `m`
      const wrong: string = body.m;
      return Promise.resolve({ id: String(wrong), count: body.n });
    },
  });
  assert.ok(op.handler);
});

Deno.test("only operation() makes an Operation: a bare object is refused", () => {
  // @ts-expect-error: not declared through operation(), so its handler was never checked
  const bare: Operation = { ...base, handler: () => Promise.resolve({}) };
  assert.ok(bare);
});

Deno.test("no registry entry turns the check off with explicit type arguments", async () => {
  const dir = new URL("../routes/api/", import.meta.url);
  const files = new Map<string, string>();
  for await (const f of Deno.readDir(dir)) {
    if (f.name.endsWith(".ts")) files.set(f.name, await Deno.readTextFile(new URL(f.name, dir)));
  }
  // operation() and the registry's generic functions, its wrappers among them (modWriteOp):
  // their type parameters are inferred from the schemas they are given.
  const generic = new Set(
    [...files.values()].flatMap((text) =>
      [...text.matchAll(/\bfunction (\w+)\s*</g)].map((m) => m[1])
    ),
  );
  assert.ok(generic.has("operation") && generic.has("modWriteOp"));
  // A call with type arguments, nested ones too (`f<z.infer<typeof s>>(`), not a declaration.
  const call = /(?<!function )\b(\w+)<((?:[^<>()]|<(?:[^<>()]|<[^<>()]*>)*>)*)>\(/g;
  for (const [name, text] of files) {
    // A wrapper passing on all three of its own inferred parameters keeps the check.
    const explicit = [...text.matchAll(call)]
      .filter((m) => generic.has(m[1]) && m[2].replaceAll(/\s/g, "") !== "B,Q,Rs");
    assert.deepEqual(explicit.map((m) => m[0]), [], `routes/api/${name}`);
  }
});
