/**
 * Captures the exact request headers that real HTTP clients and Chromium send, and stores
 * them as the fixtures in this folder (replayed by tests/client_headers_test.ts).
 *
 *   deno run -A tests/client_headers/capture.ts
 *
 * A raw TCP server records each request head byte for byte (header names, case and order
 * as sent). Agent clients (Node's fetch, Deno's fetch, Python urllib and requests, curl, Go's
 * net/http) send the board's documented agent request; Chromium (Debian's, via playwright-core) is
 * driven through the ways a page can reach a message route: navigation, a link click,
 * same-origin and cross-site fetch, form posts, no-cors fetch, sendBeacon and an image.
 * Clients that are not installed are skipped with a message (their fixtures, if any, stay).
 * Fixture file names as arguments capture only those (`… capture.ts go_net_http.json`).
 */
import { launchBrowser } from "../e2e/browser.ts";
import {
  AGENT_BODY,
  AGENT_HEADERS,
  AGENT_READ_HEADERS,
  type CapturedRequest,
  type ClientFixture,
  FIXTURE_DIR,
} from "./fixtures.ts";

const PAGE_WRITE_HEADERS = JSON.stringify(AGENT_HEADERS);
const PAGE_READ_HEADERS = JSON.stringify(AGENT_READ_HEADERS);

/** Pages Chromium loads from the capture server (no CSP, nothing else). */
function pageHtml(name: string, target: string): string {
  const forms: Record<string, string> = {
    link: `<a id="go" href="${target}/v1/me">go</a>`,
    "form-urlencoded": `<form method="post" action="${target}/v1/posts">` +
      `<input name="title" value="t"><input name="body" value="b">` +
      `<button id="go" type="submit">send</button></form>`,
    "form-text-plain": `<form method="post" enctype="text/plain" action="${target}/v1/posts">` +
      `<input name='{"title":"t","body":"b","x":"' value='"}'>` +
      `<button id="go" type="submit">send</button></form>`,
  };
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${name}</title></head>` +
    `<body>${forms[name] ?? ""}</body></html>`;
}

type Recorded = Omit<CapturedRequest, "label"> & { seq: number };

/** A minimal HTTP/1.1 server that records every request head it receives. */
function captureServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const recorded: Recorded[] = [];
  let seq = 0;
  const enc = new TextEncoder();
  const dec = new TextDecoder();

  async function handle(conn: Deno.Conn) {
    try {
      let buf = new Uint8Array(0);
      const chunk = new Uint8Array(65536);
      let headEnd = -1;
      while (headEnd < 0) {
        const n = await conn.read(chunk);
        if (n === null) return;
        const next = new Uint8Array(buf.length + n);
        next.set(buf);
        next.set(chunk.subarray(0, n), buf.length);
        buf = next;
        headEnd = dec.decode(buf).indexOf("\r\n\r\n");
      }
      const head = dec.decode(buf).slice(0, headEnd);
      const [requestLine, ...lines] = head.split("\r\n");
      const [method, target] = requestLine.split(" ");
      const headers = lines.map((l) => {
        const i = l.indexOf(":");
        return [l.slice(0, i), l.slice(i + 1).trim()] as [string, string];
      });
      const length = Number(
        headers.find(([k]) => k.toLowerCase() === "content-length")?.[1] ?? "0",
      );
      let body = buf.subarray(enc.encode(head).length + 4);
      while (body.length < length) {
        const n = await conn.read(chunk);
        if (n === null) break;
        const next = new Uint8Array(body.length + n);
        next.set(body);
        next.set(chunk.subarray(0, n), body.length);
        body = next;
      }
      const path = new URL(target, "http://capture").pathname;
      let status = "200 OK";
      let type = "application/json";
      let payload = "{}";
      const extra: string[] = [];
      if (path.startsWith("/page/")) {
        type = "text/html; charset=utf-8";
        const url = new URL(target, "http://capture");
        payload = pageHtml(path.slice(6), url.searchParams.get("target") ?? "");
      } else if (method === "OPTIONS") {
        status = "204 No Content";
        payload = "";
        const asked = headers.find(([k]) => k.toLowerCase() === "access-control-request-headers");
        extra.push(
          "Access-Control-Allow-Methods: GET, POST",
          `Access-Control-Allow-Headers: ${asked?.[1] ?? ""}`,
        );
      } else if (path.startsWith("/v1/")) {
        recorded.push({ seq: seq++, method, path, headers, body: dec.decode(body) });
      }
      const bytes = enc.encode(payload);
      await conn.write(enc.encode(
        [
          `HTTP/1.1 ${status}`,
          `Content-Type: ${type}`,
          `Content-Length: ${bytes.length}`,
          "Access-Control-Allow-Origin: *",
          "Connection: close",
          ...extra,
          "",
          "",
        ].join("\r\n"),
      ));
      await conn.write(bytes);
    } catch (e) {
      console.warn("capture connection:", e instanceof Error ? e.message : e);
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  }

  const serving = (async () => {
    for await (const conn of listener) handle(conn);
  })().catch(() => {});

  return {
    port,
    recorded,
    /** Waits for the next recorded /v1 request after `from`, or fails after 10 s. */
    async next(from: number): Promise<Recorded> {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const hit = recorded.find((r) => r.seq >= from);
        if (hit) return hit;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("no request reached the capture server within 10 s");
    },
    async close() {
      listener.close();
      await serving;
    },
  };
}

async function run(cmd: string[]): Promise<string | null> {
  try {
    const out = await new Deno.Command(cmd[0], {
      args: cmd.slice(1),
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    if (!out.success) {
      console.warn(`${cmd[0]} failed: ${new TextDecoder().decode(out.stderr).slice(0, 300)}`);
      return null;
    }
    return new TextDecoder().decode(out.stdout).trim();
  } catch (e) {
    console.warn(`${cmd[0]}: ${e instanceof Error ? e.message : e} (skipped)`);
    return null;
  }
}

/** Per agent client: its version command and how it sends a GET and a POST. */
function agentClients(base: string): {
  file: string;
  client: string;
  version: string[];
  send: (method: "GET" | "POST", path: string) => string[];
}[] {
  const headers = (method: string) => method === "POST" ? AGENT_HEADERS : AGENT_READ_HEADERS;
  const b = JSON.stringify(AGENT_BODY);
  const js = (method: string, path: string) =>
    `await fetch(${JSON.stringify(base + path)}, { method: ${JSON.stringify(method)}, headers: ${
      JSON.stringify(headers(method))
    }` +
    (method === "POST" ? `, body: JSON.stringify(${b})` : "") + ` }).then((r) => r.text());`;
  const py = (lib: string) => (method: string, path: string) => {
    const data = method === "POST" ? `json.dumps(${b}).encode()` : "None";
    const call = lib === "urllib"
      ? `urllib.request.urlopen(urllib.request.Request(${
        JSON.stringify(base + path)
      }, data=${data}, headers=${JSON.stringify(headers(method))}, method=${
        JSON.stringify(method)
      })).read()`
      : `requests.request(${JSON.stringify(method)}, ${
        JSON.stringify(base + path)
      }, data=${data}, headers=${JSON.stringify(headers(method))}).content`;
    return [
      "python3",
      "-c",
      `import json, urllib.request${lib === "requests" ? ", requests" : ""}
${call}`,
    ];
  };
  const go = (method: string, path: string) => {
    const file = Deno.makeTempFileSync({ suffix: ".go" });
    const set = Object.entries(headers(method))
      .map(([k, v]) => `\treq.Header.Set(${JSON.stringify(k)}, ${JSON.stringify(v)})\n`)
      .join("");
    Deno.writeTextFileSync(
      file,
      `package main

import (
\t"io"
\t"net/http"
\t"strings"
)

var _ = strings.NewReader // the GET sends no body

func main() {
\treq, err := http.NewRequest(${JSON.stringify(method)}, ${JSON.stringify(base + path)}, ${
        method === "POST"
          ? `strings.NewReader(${JSON.stringify(JSON.stringify(AGENT_BODY))})`
          : "nil"
      })
\tif err != nil {
\t\tpanic(err)
\t}
${set}\tres, err := http.DefaultClient.Do(req)
\tif err != nil {
\t\tpanic(err)
\t}
\tio.ReadAll(res.Body)
}
`,
    );
    return ["go", "run", file];
  };
  return [
    {
      file: "node_fetch.json",
      client: "Node.js built-in fetch (undici)",
      version: ["node", "--version"],
      send: (m, p) => ["node", "-e", `(async () => { ${js(m, p)} })()`],
    },
    {
      file: "deno_fetch.json",
      client: "Deno fetch",
      version: [Deno.execPath(), "--version"],
      send: (m, p) => [Deno.execPath(), "eval", js(m, p)],
    },
    {
      file: "python_urllib.json",
      client: "Python urllib.request",
      version: ["python3", "--version"],
      send: py("urllib"),
    },
    {
      file: "python_requests.json",
      client: "Python requests",
      version: ["python3", "-c", "import requests; print('requests', requests.__version__)"],
      send: py("requests"),
    },
    {
      file: "curl.json",
      client: "curl",
      version: ["curl", "--version"],
      send: (m, p) => [
        "curl",
        "-s",
        "-X",
        m,
        ...Object.entries(headers(m)).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
        ...(m === "POST" ? ["--data", JSON.stringify(AGENT_BODY)] : []),
        base + p,
      ],
    },
    {
      file: "go_net_http.json",
      client: "Go net/http",
      version: ["go", "version"],
      send: go,
    },
  ];
}

type PageLike = {
  goto(url: string): Promise<unknown>;
  click(selector: string): Promise<void>;
  evaluate<T>(fn: ((arg: T) => unknown) | string, arg?: T): Promise<unknown>;
};

/** Chromium scenarios: how a page on `origin` reaches the message routes of `target`. */
const CHROMIUM_SCENARIOS: {
  label: string;
  origin: "same" | "cross";
  act: (page: PageLike, target: string) => Promise<unknown>;
}[] = [
  { label: "navigation (address bar)", origin: "same", act: (p, t) => p.goto(`${t}/v1/me`) },
  {
    label: "link click (user-activated navigation)",
    origin: "same",
    act: async (p, t) => {
      await p.goto(`${t}/page/link?target=${encodeURIComponent(t)}`);
      await p.click("#go");
    },
  },
  {
    label: "link click from another site",
    origin: "cross",
    act: (p) => p.click("#go"),
  },
  {
    label: "fetch GET, same origin",
    origin: "same",
    act: (p, t) =>
      p.evaluate(
        ([url, h]) => fetch(url, { headers: JSON.parse(h) }).then((r) => r.text()),
        [`${t}/v1/me`, PAGE_READ_HEADERS],
      ),
  },
  {
    label: "fetch POST, same origin",
    origin: "same",
    act: (p, t) =>
      p.evaluate(
        ([url, h, b]) =>
          fetch(url, { method: "POST", headers: JSON.parse(h), body: b }).then((r) => r.text()),
        [`${t}/v1/posts`, PAGE_WRITE_HEADERS, JSON.stringify(AGENT_BODY)],
      ),
  },
  {
    label: "fetch POST, cross-site (after CORS preflight)",
    origin: "cross",
    act: (p, t) =>
      p.evaluate(
        ([url, h, b]) =>
          fetch(url, { method: "POST", headers: JSON.parse(h), body: b }).then((r) => r.text()),
        [`${t}/v1/posts`, PAGE_WRITE_HEADERS, JSON.stringify(AGENT_BODY)],
      ),
  },
  {
    label: "form post, same origin (urlencoded)",
    origin: "same",
    act: async (p, t) => {
      await p.goto(`${t}/page/form-urlencoded?target=${encodeURIComponent(t)}`);
      await p.click("#go");
    },
  },
  {
    label: "form post, cross-site (text/plain shaped as JSON)",
    origin: "cross",
    act: (p) => p.click("#go"),
  },
  {
    label: "no-cors fetch POST, cross-site",
    origin: "cross",
    act: (p, t) =>
      p.evaluate(
        ([url, b]) =>
          fetch(url, {
            method: "POST",
            mode: "no-cors",
            headers: { "content-type": "text/plain" },
            body: b,
          }).then(() => "sent"),
        [`${t}/v1/posts`, JSON.stringify(AGENT_BODY)],
      ),
  },
  {
    label: "sendBeacon, cross-site",
    origin: "cross",
    act: (p, t) =>
      p.evaluate(
        `navigator.sendBeacon(${JSON.stringify(`${t}/v1/posts`)}, ${
          JSON.stringify(JSON.stringify(AGENT_BODY))
        })`,
      ),
  },
  {
    label: "image, cross-site",
    origin: "cross",
    act: (p, t) =>
      p.evaluate(
        `document.body.append(Object.assign(document.createElement("img"), { src: ${
          JSON.stringify(`${t}/v1/me`)
        } }))`,
      ),
  },
];

/** The page a cross-site scenario starts on (served from the other site). */
function crossPage(label: string): string {
  if (label.startsWith("link click")) return "link";
  if (label.startsWith("form post")) return "form-text-plain";
  return "blank";
}

async function captureChromium(
  server: ReturnType<typeof captureServer>,
): Promise<ClientFixture | null> {
  let browser;
  try {
    browser = await launchBrowser();
  } catch (e) {
    console.warn(`Chromium skipped: ${e instanceof Error ? e.message : e}`);
    return null;
  }
  const same = `http://127.0.0.1:${server.port}`;
  const cross = `http://localhost:${server.port}`;
  const requests: CapturedRequest[] = [];
  try {
    for (const s of CHROMIUM_SCENARIOS) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const start = server.recorded.length;
      if (s.origin === "cross") {
        await page.goto(`${cross}/page/${crossPage(s.label)}?target=${encodeURIComponent(same)}`);
      } else {
        await page.goto(`${same}/page/blank`);
      }
      await s.act(page as unknown as PageLike, same);
      const hit = await server.next(start);
      const { seq: _seq, ...req } = hit;
      requests.push({ ...req, label: s.label });
      await context.close();
    }
    return {
      client: "Chromium (Debian), headless, driven by playwright-core",
      version: browser.version(),
      source: "captured",
      note: "Pages on http://127.0.0.1:{port} (same origin as the target) and " +
        "http://localhost:{port} (another site).",
      requests,
    };
  } finally {
    await browser.close();
  }
}

async function main() {
  const server = captureServer();
  const base = `http://127.0.0.1:${server.port}`;
  try {
    const only = Deno.args;
    for (const c of agentClients(base).filter((c) => !only.length || only.includes(c.file))) {
      const version = await run(c.version);
      if (version === null) continue;
      const requests: CapturedRequest[] = [];
      for (const [method, path] of [["GET", "/v1/me"], ["POST", "/v1/posts"]] as const) {
        const start = server.recorded.length;
        if ((await run(c.send(method, path))) === null) break;
        const { seq: _seq, ...req } = await server.next(start);
        requests.push({ ...req, label: `${method} ${path}` });
      }
      if (requests.length < 2) continue;
      await write(c.file, {
        client: c.client,
        version: version.split("\n")[0],
        source: "captured",
        requests,
      });
    }
    if (!only.length || only.includes("chromium.json")) {
      const chromium = await captureChromium(server);
      if (chromium) await write("chromium.json", chromium);
    }
  } finally {
    await server.close();
  }
}

async function write(file: string, fixture: ClientFixture) {
  const path = new URL(file, FIXTURE_DIR);
  await Deno.writeTextFile(path, JSON.stringify(fixture, null, 2) + "\n");
  console.log(`wrote ${path.pathname} (${fixture.requests.length} requests)`);
}

if (import.meta.main) await main();
