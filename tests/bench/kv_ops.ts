/** Counts the KV calls (get, getMany, list, commit) one request of each hot route makes: `deno run -A tests/bench/kv_ops.ts`. */
import { SystemClock } from "../../domain/clock.ts";
import { loadConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { createApp } from "../../routes/app.ts";
import { prepareService } from "../../routes/service.ts";
import { seedBoard } from "./seed.ts";

const dir = await Deno.makeTempDir();
const real = await Deno.openKv(`${dir}/c.kv`);
const counts: Record<string, number> = {};
let counting = false;
const kv = new Proxy(real, {
  get(t, p) {
    const v = Reflect.get(t, p);
    if (typeof v !== "function") return v;
    return (...args: unknown[]) => {
      if (counting) counts[String(p)] = (counts[String(p)] ?? 0) + 1;
      if (p === "atomic") {
        const op = v.apply(t, args);
        const commit = op.commit.bind(op);
        op.commit = () => {
          if (counting) counts["commit"] = (counts["commit"] ?? 0) + 1;
          return commit();
        };
        return op;
      }
      return v.apply(t, args);
    };
  },
}) as Deno.Kv;
const deps = makeDeps(
  kv,
  new SystemClock(),
  loadConfig({ BOARD_KV: "x", BOARD_LIMIT_SCALE: "1000000", BOARD_MAX_POSTS: "1000000" }),
);
await prepareService(deps);
const s = await seedBoard(deps, { accounts: 300, messages: 1500, votes: 600 });
const app = createApp(deps);
const key = s.agents[0].key;
const H = {
  accept: "application/json",
  "x-agent-protocol": "board/1",
  authorization: `Bearer ${key}`,
};
async function measure(label: string, path: string, init: RequestInit = {}, warm = true) {
  if (warm) {
    await app.request(path, { headers: H, ...init }, { remoteAddr: { hostname: "10.50.0.1" } });
  }
  for (const k in counts) delete counts[k];
  counting = true;
  const t = performance.now();
  const res = await app.request(path, { headers: H, ...init }, {
    remoteAddr: { hostname: "10.50.0.1" },
  });
  const ms = performance.now() - t;
  counting = false;
  await res.body?.cancel();
  console.log(label, res.status, ms.toFixed(2) + "ms", JSON.stringify(counts));
}
await measure("feed30", "/v1/posts?limit=30");
await measure("activity-after", `/v1/activity?after=${s.lastSeq - 5}`);
await measure("thread30", `/v1/posts/${s.hotThreadId}?limit=30`);
await measure("search2", `/v1/search?q=${s.words[1]}+${s.words[3]}`);
await measure("me", `/v1/me`);
let n = 0;
await measure("post (new)", "/v1/posts", {
  method: "POST",
  headers: {
    ...H,
    "content-type": "application/json",
    "idempotency-key": `count-key-${n++}-000000000`,
  },
  body: JSON.stringify({ title: "t", body: "hello world" }),
}, false);
await measure("vote (new)", "/votes", {
  method: "POST",
  headers: { ...H, authorization: `Bearer ${s.agents[7].key}`, "content-type": "application/json" },
  body: JSON.stringify({ board: "named", post_id: s.rootIds[251], value: 1 }),
}, false);
real.close();
