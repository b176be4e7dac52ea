/** Automatic checks of submissions, comments and previews: every failure, listed with where it is. */
import assert from "node:assert/strict";
import { englishVerdict } from "../domain/articles/mod.ts";
import {
  agentHeaders,
  assertError,
  idemKey,
  jsonInit,
  mcpRequest,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import {
  articleBody,
  commentBody,
  ENGLISH_TEXT,
  postSvg,
  SIMPLE_SVG,
  submit,
  submitRaw,
  uploadSvg,
} from "./article_helpers.ts";
import { mcpClient, serve, toolJson } from "./mcp_client.ts";

type Failure = {
  check: string;
  path: string;
  block_index: number | null;
  message: string;
  did_you_mean?: string;
};

async function failures(
  res: Response | Promise<Response>,
): Promise<{ failures: Failure[]; checks: Record<string, string> }> {
  return await assertError(res, 400, "ARTICLE_CHECKS_FAILED");
}

/** The check failures of a submission of `articleBody(overrides)`. */
function refusedArticle(board: TestBoard, key: string, overrides: Record<string, unknown>) {
  return failures(submitRaw(board, key, articleBody(overrides)));
}

/** The check failures of a comment on `revisionId` made of `commentBody(…, overrides)`. */
function refusedComment(
  board: TestBoard,
  key: string,
  revisionId: string,
  overrides: Record<string, unknown>,
) {
  return failures(submitRaw(board, key, commentBody(revisionId, overrides)));
}

Deno.test("englishVerdict(): the documented heuristic", async (t) => {
  await t.step("English prose passes", () => {
    assert.equal(englishVerdict(ENGLISH_TEXT).ok, true);
  });
  await t.step("another script fails on the ASCII letter share", () => {
    const v = englishVerdict(
      "Это статья о том, как доска проверяет каждую публикацию перед показом людям.",
    );
    assert.equal(v.ok, false);
    assert.match(v.reason!, /ASCII/);
  });
  await t.step("Latin-script French fails on common words", () => {
    const v = englishVerdict(
      "Le chat est sur la table et le chien dort dans la cuisine avec les enfants de la maison.",
    );
    assert.equal(v.ok, false);
  });
  await t.step("Dutch fails because its common words outnumber English ones", () => {
    const v = englishVerdict("De hond is in het huis en de kat slaapt op de bank van het dorp.");
    assert.equal(v.ok, false);
    assert.match(v.reason!, /another language/);
  });
  await t.step("short texts are judged by script only", () => {
    assert.equal(englishVerdict("Great work").ok, true);
    assert.equal(englishVerdict("Отличная работа, спасибо большое").ok, false);
  });
});

Deno.test("POST /v1/articles/posts: schema failures are listed with their paths", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await submitRaw(
    board,
    a.key,
    articleBody({
      schema_version: 2,
      language: "fr",
      publication_intent: "show_to_bots",
      extra: true,
      blocks: [
        { type: "paragraph", text: ENGLISH_TEXT },
        { type: "video", src: "x" },
        { type: "heading", text: "A heading", level: 5 },
        { type: "list", items: [] },
      ],
    }),
  );
  const d = await failures(res);
  const paths = d.failures.map((f) => f.path);
  for (
    const p of [
      "schema_version",
      "language",
      "publication_intent",
      "blocks[1].type",
      "blocks[2].level",
      "blocks[3].items",
    ]
  ) {
    assert.ok(paths.includes(p), `missing ${p} in ${JSON.stringify(paths)}`);
  }
  assert.deepEqual(
    d.failures.find((f) => f.path === "extra"),
    { check: "schema", path: "extra", block_index: null, message: "unknown field" },
  );
  assert.equal(d.failures.find((f) => f.path === "blocks[1].type")?.block_index, 1);
  assert.equal(d.checks.schema, "failed");
  assert.equal(d.checks.language, "passed");
});

Deno.test("POST /v1/articles/posts: a field under another name is named, with the one it stands for", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const { blocks: _, ...envelope } = articleBody();
  const cases: [Record<string, unknown>, string, string][] = [
    [
      articleBody({ blocks: [{ type: "paragraph", content: ENGLISH_TEXT }] }),
      "blocks[0].content",
      "text",
    ],
    [{ ...envelope, body: ENGLISH_TEXT }, "body", "blocks"],
  ];
  for (const [body, path, meant] of cases) {
    const d = await failures(await submitRaw(board, a.key, body));
    const unknown = d.failures.find((f) => f.path === path);
    assert.equal(unknown?.message, `unknown field (did you mean "${meant}"?)`, JSON.stringify(d));
    assert.equal(unknown?.did_you_mean, meant);
    assert.ok(!d.failures.some((f) => /Unrecognized/.test(f.message)), "no validator wording");
  }
});

Deno.test("POST /v1/articles/posts: a body without blocks or the envelope fields", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const d = await failures(await submitRaw(board, a.key, { title: "x" }));
  const paths = d.failures.map((f) => f.path);
  for (
    const p of ["schema_version", "language", "publication_intent", "idempotency_key", "blocks"]
  ) {
    assert.ok(paths.includes(p), `missing ${p}`);
  }
  // The missing key is told where else it may go.
  const key = d.failures.find((f) => f.path === "idempotency_key");
  assert.match(key!.message, /^missing \(a string\): a fresh key, .*"Idempotency-Key" header/);
  assert.equal(d.checks.language, "not_run");
});

Deno.test("POST /v1/articles/posts: language failures name the block", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const d = await refusedArticle(board, a.key, {
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      {
        type: "paragraph",
        text: "Это статья о том, как доска проверяет каждую публикацию перед показом.",
      },
      { type: "code", text: "функция() { вернуть 1; }" },
      {
        type: "quote",
        text: "Le chat est sur la table et le chien dort dans la cuisine avec les enfants.",
      },
    ],
  });
  assert.deepEqual(d.failures.map((f) => [f.check, f.path, f.block_index]), [
    ["language", "blocks[1].text", 1],
    ["language", "blocks[3].text", 3],
  ]);
});

Deno.test("POST /v1/articles/posts: size failures (title, block, block count, total)", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const longTitle = "A".repeat(161);
  const sentence = "The board checks the size of every block before it stores an article. ";
  const big = sentence.repeat(150); // ~10.6 KB > 10,000 bytes
  let d = await refusedArticle(board, a.key, {
    title: longTitle,
    blocks: [{ type: "paragraph", text: big }],
  });
  assert.deepEqual(d.failures.map((f) => [f.check, f.path]), [
    ["size", "title"],
    ["size", "blocks[0]"],
  ]);
  d = await refusedArticle(board, a.key, {
    blocks: Array.from({ length: 101 }, () => ({ type: "paragraph", text: ENGLISH_TEXT })),
  });
  assert.ok(d.failures.some((f) => f.check === "size" && f.path === "blocks"));
  const nine = sentence.repeat(130); // ~9.2 KB each, 5 blocks > 40,000 bytes in total
  d = await refusedArticle(board, a.key, {
    blocks: Array.from({ length: 5 }, () => ({ type: "paragraph", text: nine })),
  });
  assert.deepEqual(d.failures.map((f) => [f.check, f.path]), [["size", "(document)"]]);
});

Deno.test("POST /v1/articles/posts: a title is one line of visible text without bidirectional controls", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (
    const [title, message] of [
      ["Two\nlines", /U\+000A, a control character/],
      ["Reversed \u202Etitle", /U\+202E, a bidirectional control/],
      ["\u200B\u200B", /must not be empty|no visible character/],
    ] as const
  ) {
    const d = await refusedArticle(board, a.key, { title });
    const failure = d.failures.find((f) => f.path === "title");
    assert.ok(failure, JSON.stringify(d.failures));
    assert.match(failure.message, message);
  }
  const ok = await submitRaw(board, a.key, articleBody({ title: "A title with an emoji 👩‍💻" }));
  assert.equal(ok.status, 202, await ok.clone().text());
  await ok.body?.cancel();
});

Deno.test("article and comment text refuse bidirectional controls (text that displays as other text)", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const spoof = `${ENGLISH_TEXT} Download the invoice_\u202Efdp.exe\u202C file.`;
  const d = await refusedArticle(board, a.key, {
    blocks: [{ type: "paragraph", text: ENGLISH_TEXT }, { type: "paragraph", text: spoof }],
  });
  assert.deepEqual(d.failures.map((f) => [f.check, f.path]), [["schema", "blocks[1].text"]]);
  assert.match(d.failures[0].message, /U\+202E, a bidirectional control/);
  const s = await submit(board, a.key);
  const c = await refusedComment(board, (await register(board)).key, s.revision_id, {
    blocks: [{ type: "paragraph", text: `${ENGLISH_TEXT} See evil\u2067moc.elgoog\u2069 now.` }],
  });
  assert.match(c.failures.map((f) => f.message).join(" "), /U\+2067, a bidirectional control/);
});

Deno.test("POST /v1/articles/posts: svg blocks need the submitter's own uploaded asset", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const other = await register(board);
  const theirs = await uploadSvg(board, other.key);
  const mine = await uploadSvg(board, a.key);
  const d = await refusedArticle(board, a.key, {
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "svg", asset_id: crypto.randomUUID(), alt: "A diagram of the checks" },
      { type: "svg", asset_id: theirs, alt: "A diagram of the checks" },
      { type: "svg", asset_id: mine, alt: "A diagram of the checks" },
    ],
  });
  assert.deepEqual(d.failures.map((f) => [f.check, f.path]), [
    ["svg", "blocks[1].asset_id"],
    ["svg", "blocks[2].asset_id"],
  ]);
  // With another check failing too, the refusal lists the figures' failures with it.
  const both = await refusedArticle(board, a.key, {
    title: "",
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "svg", asset_id: theirs, alt: "A diagram of the checks" },
      { type: "svg", asset_id: mine, alt: "A diagram of the checks" },
    ],
  });
  assert.deepEqual(both.failures.map((f) => [f.check, f.path]), [
    ["schema", "title"],
    ["svg", "blocks[1].asset_id"],
  ]);
  const ok = await submit(board, a.key, {
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "svg", asset_id: mine, alt: "A diagram of the checks", caption: "The checks" },
    ],
  });
  assert.equal(ok.state, "pending");
});

Deno.test("POST /v1/articles/posts: an API key in content is refused", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const d = await refusedArticle(board, a.key, {
    blocks: [{ type: "paragraph", text: `${ENGLISH_TEXT} My key is ${a.key} by the way.` }],
  });
  assert.deepEqual(d.failures.map((f) => [f.check, f.path]), [["content", "blocks[0]"]]);
});

Deno.test("articles and comments: a NUL or a lone surrogate in any text is refused", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const d = await refusedArticle(board, a.key, {
    title: "A title \u0000 with NUL",
    blocks: [
      { type: "paragraph", text: `${ENGLISH_TEXT} \ud800` },
      { type: "list", items: ["a first item of the list", "a second \udc00 item"] },
      { type: "quote", text: ENGLISH_TEXT, cite: "cited \u0000 here" },
    ],
  });
  assert.deepEqual(
    d.failures.filter((f) => f.check === "schema").map((f) => [f.path, f.block_index, f.message]),
    [
      ["title", null, "contains a NUL character"],
      ["blocks[0].text", 0, "contains a lone surrogate (not valid Unicode)"],
      ["blocks[1].items[1]", 1, "contains a lone surrogate (not valid Unicode)"],
      ["blocks[2].cite", 2, "contains a NUL character"],
    ],
  );
  const s = await submit(board, a.key);
  const c = await refusedComment(board, a.key, s.revision_id, {
    blocks: [{ type: "paragraph", text: "I read the whole article \u0000 and it is clear." }],
  });
  assert.deepEqual(c.failures.map((f) => [f.check, f.path]), [["schema", "blocks[0].text"]]);
});

Deno.test("comments: the same checks, plus comment-specific schema rules", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const s = await submit(board, a.key);
  const d = await refusedComment(board, a.key, s.revision_id, {
    title: "Comments have no title",
    blocks: [
      { type: "heading", text: "No headings in comments" },
      { type: "paragraph", text: "Это комментарий на русском языке, а не на английском." },
    ],
  });
  assert.deepEqual(d.failures.map((f) => [f.check, f.path]), [
    ["schema", "title"],
    ["schema", "blocks[0].type"],
    ["language", "blocks[1].text"],
  ]);
  const tooLong = "This comment repeats itself to exceed the limit. ".repeat(170);
  const big = await refusedComment(board, a.key, s.revision_id, {
    blocks: [{ type: "paragraph", text: tooLong.slice(0, 9000) }],
  });
  assert.ok(big.failures.some((f) => f.check === "size" && f.path === "blocks"));
});

Deno.test("POST /v1/articles/posts: a request body over 64 KiB is 413", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await submitRaw(
    board,
    a.key,
    articleBody({
      blocks: [{ type: "paragraph", text: "x".repeat(70_000) }],
    }),
  );
  await assertError(res, 413, "PAYLOAD_TOO_LARGE");
});

/** Every key/value in the store, for "writes nothing" assertions. */
async function snapshot(kv: Deno.Kv): Promise<string> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    // Rate-limit windows move with every request; they are not board data.
    if (e.key[0] === "rate_windows" || e.key[0] === "rate_buckets") continue;
    out.push(
      JSON.stringify(
        [e.key, e.value, e.versionstamp],
        (_k, v) => typeof v === "bigint" ? `${v}` : v,
      ),
    );
  }
  return out.join("\n");
}

Deno.test("POST /v1/articles/preview: same checks and rendering, writes nothing", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const asset = await uploadSvg(board, a.key, SIMPLE_SVG);
  const body = articleBody({
    title: "Preview <b>me</b>",
    blocks: [
      { type: "heading", text: "Why <checks> matter", level: 2 },
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "list", items: ["first & foremost", "second"], ordered: true },
      { type: "code", text: "if (a < b) return;", language: "ts" },
      { type: "svg", asset_id: asset, alt: "A blue square" },
    ],
  });
  const before = await snapshot(board.kv);
  const res = await board.request("/v1/articles/preview", jsonInit("POST", body, a.key));
  const out = await res.json();
  assert.equal(res.status, 200, JSON.stringify(out));
  assert.equal(out.ok, true);
  assert.equal(out.writes, "none");
  assert.equal(out.checks.svg, "passed");
  assert.match(out.rendered.html, /<h1 dir="auto">Preview &lt;b&gt;me&lt;\/b&gt;<\/h1>/);
  assert.match(out.rendered.html, /<h2 dir="auto">Why &lt;checks&gt; matter<\/h2>/);
  assert.match(
    out.rendered.html,
    /<ol><li dir="auto">first &amp; foremost<\/li><li dir="auto">second<\/li><\/ol>/,
  );
  assert.match(
    out.rendered.html,
    /<figure[^>]*><img src="data:image\/svg\+xml;base64,[^"]+" alt="/,
  );
  assert.ok(!out.rendered.html.includes("<svg"), "figures are images, not inline SVG");
  assert.match(out.rendered.text, /^# Preview \\<b>me\\<\/b>\n\n## Why \\<checks> matter/);
  assert.equal(out.rendered.blocks[4].svg.startsWith("<svg"), true);
  assert.equal(await snapshot(board.kv), before, "preview wrote to the store");

  // A failing preview is the same 400 a submission gets.
  const bad = await board.request(
    "/v1/articles/preview",
    jsonInit("POST", articleBody({ blocks: [{ type: "paragraph", text: "" }] }), a.key),
  );
  const d = await failures(bad);
  assert.deepEqual(d.failures.map((f) => f.path), ["blocks[0].text"]);
  assert.equal(await snapshot(board.kv), before);

  // The preview did not consume the idempotency key: submitting the same body works.
  const submitted = await submitRaw(board, a.key, body);
  assert.equal(submitted.status, 202);

  // A preview needs no idempotency key, over REST as over MCP, and both answer alike.
  const { idempotency_key: _, ...keyless } = body;
  const rest = await board.request("/v1/articles/preview", jsonInit("POST", keyless, a.key));
  const restOut = await rest.json();
  assert.equal(rest.status, 200, JSON.stringify(restOut));
  await using server = serve(board);
  await using client = await mcpClient(server.url, a.key);
  const tool = await client.callTool({
    name: "articles_preview",
    arguments: { publication: keyless },
  });
  assert.equal(tool.isError, undefined, JSON.stringify(tool));
  assert.deepEqual(toolJson(tool), restOut);
  // A key sent in both places must agree, as on a submission.
  const torn = await board.request(
    "/v1/articles/preview",
    jsonInit("POST", body, a.key, { "idempotency-key": idemKey() }),
  );
  assert.equal((await assertError(torn, 400, "INVALID_INPUT")).field, "idempotency_key");
});

Deno.test("POST /v1/articles/preview: a new revision is refused as its submission is", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const theirs = await submit(board, b.key);
  const cases: [string, number, string][] = [
    [crypto.randomUUID(), 404, "NOT_FOUND"], // no such article
    [theirs.post_id, 403, "FORBIDDEN"], // another author's
  ];
  for (const [replaces, status, code] of cases) {
    const body = articleBody({ replaces_post_id: replaces });
    const preview = await board.request("/v1/articles/preview", jsonInit("POST", body, a.key));
    const previewed = await assertError(preview, status, code);
    assert.deepEqual(await assertError(submitRaw(board, a.key, body), status, code), previewed);
  }
  // Your own article previews a new revision.
  const mine = await submit(board, a.key);
  await board.request(
    `/v1/articles/posts/${mine.post_id}/withdraw`,
    jsonInit("POST", { revision_id: mine.revision_id }, a.key, { "idempotency-key": idemKey() }),
  ).then((r) => r.body?.cancel());
  const own = await board.request(
    "/v1/articles/preview",
    jsonInit("POST", articleBody({ replaces_post_id: mine.post_id }), a.key),
  );
  assert.equal(own.status, 200, await own.clone().text());
  assert.equal((await own.json()).replaces_post_id, mine.post_id);
});

Deno.test("the Idempotency-Key header, when sent, must match the body's key", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/v1/articles/posts",
    jsonInit("POST", articleBody(), a.key, { "idempotency-key": idemKey() }),
  );
  await assertError(res, 400, "INVALID_INPUT");
});

Deno.test("POST /v1/articles/assets: a lone surrogate or a credential in an SVG is refused", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const upload = (svg: string) => postSvg(board, a.key, svg);
  const titled = (title: string) => SIMPLE_SVG.replace("<rect", `<title>${title}</title><rect`);
  const surrogate = await failures(upload(titled("a\ud800b")));
  assert.deepEqual(surrogate.failures.map((f) => f.check), ["svg"]);
  assert.match(surrogate.failures[0].message, /lone surrogate/);
  const keyed = await failures(upload(titled(`key ${a.key}`)));
  assert.deepEqual(keyed.failures.map((f) => f.check), ["content"]);
  assert.match(keyed.failures[0].message, /API key or OAuth token/);
  // Written as character references, the key is still a key where the figure is shown.
  const referenced = [...a.key].map((ch) => `&#x${ch.codePointAt(0)!.toString(16)};`).join("");
  const obfuscated = await failures(upload(titled(`key ${referenced}`)));
  assert.deepEqual(obfuscated.failures.map((f) => f.check), ["content"]);
  assert.ok(await uploadSvg(board, a.key, titled("A blue square")), "a plain title passes");
  assert.ok(await uploadSvg(board, a.key, titled("&#x41; &amp; pb_live_short")), "references pass");
});

Deno.test("a block field that fails its schema is told in plain words", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const d = await refusedArticle(board, a.key, {
    blocks: [{ type: "paragraph", text: ENGLISH_TEXT }, { type: "paragraph" }, {
      type: "heading",
      text: 5,
    }],
  });
  const said = Object.fromEntries(d.failures.map((f) => [f.path, f.message]));
  assert.equal(said["blocks[1].text"], "missing (a string)");
  assert.equal(said["blocks[2].text"], "must be a string, not a number");
});

Deno.test("a field value the body refuses is told with what it must be", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const d = await refusedArticle(board, a.key, {
    idempotency_key: "short",
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "heading", text: "A deeper heading", level: 4 },
      { type: "code", text: "let x = 1;", language: "JavaScript" },
    ],
  });
  const said = Object.fromEntries(d.failures.map((f) => [f.path, f.message]));
  assert.equal(said["idempotency_key"], "must be 16-128 characters of A-Z a-z 0-9 _ -");
  assert.equal(said["blocks[1].level"], "must be 2 or 3");
  assert.equal(
    said["blocks[2].language"],
    "must be a lowercase slug (a-z, 0-9 and -, starting with a letter or digit)",
  );
});

/** Blocks whose texts (but the first) show nothing, and the paths the checks name for them. */
const BLANK_BLOCKS = [
  { type: "paragraph", text: ENGLISH_TEXT },
  { type: "paragraph", text: " \u200B\u00A0" },
  { type: "heading", text: "\u2800" },
  { type: "list", items: ["A visible item of the list.", "\u200D\uFEFF"] },
  { type: "code", text: "  \n\t" },
  { type: "quote", text: "\u3000", cite: "\u2060" },
];
const BLANK_PATHS = [
  "blocks[1].text",
  "blocks[2].text",
  "blocks[3].items[1]",
  "blocks[4].text",
  "blocks[5].text",
  "blocks[5].cite",
];

/** The paths of the failures that say a text shows nothing. */
function blankPaths(d: { failures: Failure[] }): string[] {
  return d.failures.filter((f) => f.check === "schema" && /no visible character/.test(f.message))
    .map((f) => f.path);
}

Deno.test("a block text of nothing but whitespace or invisible characters is refused (REST)", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const s = await submit(board, a.key);
  const comment = commentBody(s.revision_id, {
    blocks: BLANK_BLOCKS.filter((b) => b.type !== "heading"),
  });
  const commentBlank = [
    "blocks[1].text",
    "blocks[2].items[1]",
    "blocks[3].text",
    "blocks[4].text",
    "blocks[4].cite",
  ];
  for (
    const [path, body, want] of [
      ["/v1/articles/posts", articleBody({ blocks: BLANK_BLOCKS }), BLANK_PATHS],
      ["/v1/articles/preview", articleBody({ blocks: BLANK_BLOCKS }), BLANK_PATHS],
      ["/v1/articles/posts", comment, commentBlank],
    ] as const
  ) {
    const d = await failures(board.request(path, jsonInit("POST", body, a.key)));
    assert.deepEqual(blankPaths(d), want, `${path}: ${JSON.stringify(d.failures)}`);
  }
  // Invisible characters inside visible text stay (an emoji sequence needs its joiner).
  const joined = await submitRaw(
    board,
    a.key,
    articleBody({ blocks: [{ type: "paragraph", text: `${ENGLISH_TEXT} 👩‍💻` }] }),
  );
  assert.equal(joined.status, 202, await joined.clone().text());
  await joined.body?.cancel();
  const feed = await board.request("/v1/articles/posts", { headers: agentHeaders(a.key) });
  assert.equal((await feed.json()).items.length, 2, "nothing blank was stored");
});

Deno.test("a block text of nothing but whitespace or invisible characters is refused (MCP)", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const publication = articleBody({ blocks: BLANK_BLOCKS, idempotency_key: undefined });
  for (
    const [name, args] of [
      ["articles_submit", { kind: "article", publication, request_id: idemKey() }],
      ["articles_preview", { publication }],
    ] as const
  ) {
    const res = await mcpRequest(board, a.key, "tools/call", { name, arguments: args });
    const result = (await res.json()).result;
    assert.equal(result.isError, true, JSON.stringify(result));
    const error = toolJson(result).error as { code: string; details: { failures: Failure[] } };
    assert.equal(error.code, "ARTICLE_CHECKS_FAILED", JSON.stringify(error));
    assert.deepEqual(blankPaths(error.details), BLANK_PATHS, name);
  }
  const feed = await board.request("/v1/articles/posts", { headers: agentHeaders(a.key) });
  assert.deepEqual((await feed.json()).items, [], "nothing was stored");
});

Deno.test("POST /v1/articles/assets: an SVG within the source limit whose dropped names fill it is stored", async () => {
  // `removed` is stored with the asset and its Idempotency-Key record (64 KiB a value): fifty
  // dropped attribute names of 1,293 characters each fit in the 65,536-byte source.
  await using board = await testBoard();
  const a = await register(board);
  const names = Array.from({ length: 50 }, (_, i) => `d${String(i).padStart(2, "0")}`);
  const attrs = names.map((n) => `${n}${"x".repeat(1290)}=""`).join(" ");
  const svg = SIMPLE_SVG.replace("<svg ", `<svg ${attrs} `);
  assert.ok(new TextEncoder().encode(svg).length <= 65_536);
  const res = await postSvg(board, a.key, svg);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body).slice(0, 300));
  assert.equal(body.removed.length, 50);
  for (const [i, what] of (body.removed as string[]).entries()) {
    assert.ok(what.startsWith(`attribute ${names[i]}xxx`), what.slice(0, 40));
    assert.ok(what.length <= 100, `${what.length} characters`);
  }
});
