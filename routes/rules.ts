/** The rules post under /v1: read, edit (optimistic concurrency), and every revision. */
import { Hono } from "hono";
import { BoardError } from "../domain/errors.ts";
import {
  editRules,
  listRulesRevisions,
  readRules,
  readRulesRevision,
} from "../domain/rules/mod.ts";
import { rulesEditSchema } from "./schemas.ts";
import { parseInput } from "./validate.ts";
import type { AppEnv } from "./env.ts";
import { idempotencyKey, requireAgent } from "./guards.ts";
import { pageQuery, readJsonObject } from "./http.ts";

export const rulesRoutes = new Hono<AppEnv>();
for (const path of ["/rules", "/rules/*"]) rulesRoutes.use(path, requireAgent);

rulesRoutes.get("/rules", async (c) => {
  return c.json(await readRules(c.get("deps"), c.get("caller").agent));
});

rulesRoutes.put("/rules", async (c) => {
  const key = idempotencyKey(c);
  const input = parseInput(rulesEditSchema, await readJsonObject(c.req.raw));
  const result = await editRules(
    c.get("deps"),
    { agent: c.get("caller").agent },
    input,
    key,
    c.get("network"),
  );
  return c.json(result, 200);
});

rulesRoutes.get("/rules/revisions", async (c) => {
  const page = pageQuery(c);
  if (page.after !== undefined) {
    throw new BoardError("INVALID_INPUT", 'Rules revisions page with "before" only.', {
      parameter: "after",
    });
  }
  return c.json(await listRulesRevisions(c.get("deps"), page));
});

rulesRoutes.get("/rules/revisions/:revision", async (c) => {
  const raw = c.req.param("revision");
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    throw new BoardError("INVALID_INPUT", 'Path parameter "revision" must be an integer >= 1.', {
      field: "revision",
    });
  }
  return c.json(await readRulesRevision(c.get("deps"), Number(raw)));
});
