/**
 * The SVG safety corpus: known SVG XSS and external-load vectors, each of which must be
 * rejected by the checks or neutralised in the sanitised output. The output is verified
 * by an independent re-parse, not by the sanitiser's own verdict.
 */
import assert from "node:assert/strict";
import { SaxesParser } from "saxes";
import { svgSanitizer } from "../domain/articles/mod.ts";

const { sanitizeSvg: sanitize } = await svgSanitizer();
/** The sanitiser without operator secrets (API-key shapes are refused all the same). */
const sanitizeSvg = (svg: string) => sanitize(svg, { moderatorKey: undefined, secret: undefined });
import { assertError, idemKey, jsonInit, register, testBoard } from "./helpers.ts";

const NS = 'xmlns="http://www.w3.org/2000/svg"';
const XL = 'xmlns:xlink="http://www.w3.org/1999/xlink"';

/** [name, svg] — every one is an attack or an external load. */
const VECTORS: Array<[string, string]> = [
  ["script element", `<svg ${NS}><script>alert(1)</script></svg>`],
  [
    "script with external src",
    `<svg ${NS} ${XL}><script xlink:href="https://evil.example/x.js"/></svg>`,
  ],
  ["onload on root", `<svg ${NS} onload="alert(1)"><rect width="1" height="1"/></svg>`],
  ["onLoad mixed case", `<svg ${NS} onLoad="alert(1)"/>`],
  ["onclick on child", `<svg ${NS}><rect width="5" height="5" onclick="alert(1)"/></svg>`],
  ["onmouseover on text", `<svg ${NS}><text onmouseover="alert(1)">hi</text></svg>`],
  [
    "onbegin on animate",
    `<svg ${NS}><animate onbegin="alert(1)" attributeName="x" dur="1s"/></svg>`,
  ],
  ["onerror on image", `<svg ${NS}><image href="x" onerror="alert(1)"/></svg>`],
  [
    "foreignObject with HTML",
    `<svg ${NS}><foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert(1)"/></body></foreignObject></svg>`,
  ],
  ["javascript: link href", `<svg ${NS}><a href="javascript:alert(1)"><text>x</text></a></svg>`],
  [
    "javascript: xlink:href",
    `<svg ${NS} ${XL}><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
  ],
  [
    "entity-encoded javascript:",
    `<svg ${NS}><a href="&#106;avascript:alert(1)"><text>x</text></a></svg>`,
  ],
  [
    "javascript: with tab and spaces",
    `<svg ${NS}><a href=" java&#9;script:alert(1)"><text>x</text></a></svg>`,
  ],
  ["vbscript: link", `<svg ${NS}><a href="vbscript:msgbox(1)"><text>x</text></a></svg>`],
  [
    "data: URL link",
    `<svg ${NS}><a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;"><text>x</text></a></svg>`,
  ],
  [
    "data: SVG image",
    `<svg ${NS}><image href="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"/></svg>`,
  ],
  ["external image", `<svg ${NS}><image href="https://evil.example/track.png"/></svg>`],
  ["external use", `<svg ${NS} ${XL}><use xlink:href="https://evil.example/sprite.svg#x"/></svg>`],
  [
    "use of data: document",
    `<svg ${NS}><use href="data:image/svg+xml,&lt;svg id='x' onload='alert(1)'/&gt;#x"/></svg>`,
  ],
  [
    "feImage external",
    `<svg ${NS}><filter id="f"><feImage href="https://evil.example/a.png"/></filter></svg>`,
  ],
  [
    "external url() fill",
    `<svg ${NS}><rect width="1" height="1" fill="url(https://evil.example/#g)"/></svg>`,
  ],
  [
    "style attribute url()",
    `<svg ${NS}><rect width="1" height="1" style="fill:url(http://evil.example/p)"/></svg>`,
  ],
  ["style attribute javascript:", `<svg ${NS} style="background-image:url(javascript:alert(1))"/>`],
  ["style expression()", `<svg ${NS}><rect style="width:expression(alert(1))"/></svg>`],
  ["style behavior", `<svg ${NS}><rect style="behavior:url(x.htc)"/></svg>`],
  ["style -moz-binding", `<svg ${NS}><rect style="-moz-binding:url(x.xml#xss)"/></svg>`],
  [
    "style element @import",
    `<svg ${NS}><style>@import 'https://evil.example/x.css';</style></svg>`,
  ],
  [
    "style element @font-face url",
    `<svg ${NS}><style>@font-face{font-family:x;src:url(https://evil.example/f.woff)}</style></svg>`,
  ],
  [
    "style element CSS escape",
    `<svg ${NS}><style>rect{fill:u\\72l(https://evil.example/)}</style></svg>`,
  ],
  [
    "style element closing tag breakout",
    `<svg ${NS}><style>&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt;</style></svg>`,
  ],
  [
    "style image-set()",
    `<svg ${NS}><style>rect{background:image-set("https://evil.example/a.png" 1x)}</style></svg>`,
  ],
  [
    "set attributeName href",
    `<svg ${NS}><a><set attributeName="href" to="javascript:alert(1)"/><text>x</text></a></svg>`,
  ],
  [
    "animate href values",
    `<svg ${NS}><a><animate attributeName="href" values="javascript:alert(1)"/><text>x</text></a></svg>`,
  ],
  ["set onmouseover", `<svg ${NS}><set attributeName="onmouseover" to="alert(1)"/></svg>`],
  [
    "animate xlink:href",
    `<svg ${NS}><a><animate attributeName="xlink:href" values="#a"/></a></svg>`,
  ],
  [
    "handler element",
    `<svg ${NS} xmlns:ev="http://www.w3.org/2001/xml-events"><handler ev:event="load">alert(1)</handler></svg>`,
  ],
  ["iframe element", `<svg ${NS}><iframe src="https://evil.example/"/></svg>`],
  ["embed element", `<svg ${NS}><embed src="https://evil.example/x.swf"/></svg>`],
  ["object element", `<svg ${NS}><object data="https://evil.example/x"/></svg>`],
  [
    "XHTML script in SVG",
    `<svg ${NS}><h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script></svg>`,
  ],
  [
    "XHTML img with onerror",
    `<svg ${NS}><h:img xmlns:h="http://www.w3.org/1999/xhtml" src="x" onerror="alert(1)"/></svg>`,
  ],
  ["uppercase SCRIPT", `<svg ${NS}><SCRIPT>alert(1)</SCRIPT></svg>`],
  [
    "meta refresh",
    `<svg ${NS}><meta http-equiv="refresh" content="0;url=javascript:alert(1)"/></svg>`,
  ],
  [
    "DOCTYPE with internal entity",
    `<!DOCTYPE svg [<!ENTITY x "alert(1)">]><svg ${NS}><text>&x;</text></svg>`,
  ],
  [
    "XXE external entity",
    `<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><svg ${NS}><text>&xxe;</text></svg>`,
  ],
  [
    "billion laughs",
    `<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><svg ${NS}><text>&b;</text></svg>`,
  ],
  [
    "xml-stylesheet PI",
    `<?xml-stylesheet type="text/css" href="https://evil.example/x.css"?><svg ${NS}/>`,
  ],
  [
    "not well-formed mXSS",
    `<svg ${NS}></p><style><a id="</style><img src=1 onerror=alert(1)>"></svg>`,
  ],
  [
    "CDATA script text in title",
    `<svg ${NS}><title><![CDATA[</title><script>alert(1)</script>]]></title></svg>`,
  ],
  [
    "textPath external",
    `<svg ${NS}><text><textPath href="https://evil.example/p#path">x</textPath></text></svg>`,
  ],
  [
    "pattern external href",
    `<svg ${NS} ${XL}><pattern id="p" xlink:href="https://evil.example/p.svg#q"/></svg>`,
  ],
  ["non-SVG root", `<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>`],
];

const EXTERNAL = /^(?!#)/;

/** Independently re-parses sanitised output and asserts nothing active or external is left. */
function assertInert(svg: string, name: string): void {
  const parser = new SaxesParser({ xmlns: true });
  let depth = 0;
  parser.on("doctype", () => assert.fail(`${name}: output has a DOCTYPE`));
  parser.on("processinginstruction", () => assert.fail(`${name}: output has a PI`));
  parser.on("opentag", (t) => {
    depth++;
    assert.equal(t.uri, "http://www.w3.org/2000/svg", `${name}: element outside SVG`);
    assert.ok(
      !["script", "foreignobject", "iframe", "embed", "object", "handler", "image", "feimage"]
        .includes(t.local.toLowerCase()),
      `${name}: active element <${t.local}>`,
    );
    for (const a of Object.values(t.attributes)) {
      assert.ok(!a.local.toLowerCase().startsWith("on"), `${name}: handler ${a.name}`);
      assert.ok(!/script:/i.test(a.value.replace(/\s/g, "")), `${name}: script URL in ${a.name}`);
      if (a.local === "href") assert.ok(!EXTERNAL.test(a.value), `${name}: external href`);
      for (const m of a.value.matchAll(/url\(\s*['"]?([^'")]*)/gi)) {
        assert.ok(m[1].startsWith("#"), `${name}: external url() in ${a.name}`);
      }
    }
  });
  parser.on("closetag", () => depth--);
  parser.on("text", (text) => {
    assert.ok(!/@import|javascript:/i.test(text) || depth > 0, `${name}: active text`);
  });
  parser.on("error", (e) => assert.fail(`${name}: output is not well-formed: ${e.message}`));
  parser.write(svg).close();
}

Deno.test("SVG XSS corpus: every vector is rejected or neutralised", async (t) => {
  assert.ok(VECTORS.length >= 30, `corpus has ${VECTORS.length} vectors`);
  for (const [name, svg] of VECTORS) {
    await t.step(name, () => {
      const r = sanitizeSvg(svg);
      if (r.failures.length) {
        assert.equal(r.svg, null);
        for (const f of r.failures) {
          assert.equal(typeof f.message, "string");
          assert.equal(typeof f.element, "string");
          assert.ok(f.line >= 1);
        }
      } else {
        assert.ok(r.svg, `${name}: neither rejected nor sanitised`);
        assertInert(r.svg, name);
      }
    });
  }
});

Deno.test("SVG XSS corpus: the dangerous constructs are refused, not silently kept", () => {
  const rule = (svg: string) => sanitizeSvg(svg).failures.map((f) => f.rule);
  assert.ok(rule(VECTORS[0][1]).includes("element"));
  assert.ok(rule(VECTORS[2][1]).includes("event_handler"));
  assert.ok(rule(VECTORS[8][1]).includes("element"));
  assert.ok(rule(VECTORS[9][1]).includes("script_url"));
  assert.ok(rule(VECTORS[16][1]).includes("external_reference"));
  assert.ok(rule(VECTORS[20][1]).includes("external_reference"));
  assert.ok(rule(VECTORS[26][1]).includes("css"));
  assert.ok(rule(VECTORS[31][1]).includes("animation"));
  // An animated link is refused whatever prefix the XLink namespace is bound to.
  const prefixed = `<svg ${NS} xmlns:q="http://www.w3.org/1999/xlink"><a>` +
    `<set attributeName="q:href" to="https://evil.example/"/><text>x</text></a></svg>`;
  assert.ok(rule(prefixed).includes("animation"));
  assert.ok(rule(VECTORS[43][1]).includes("doctype"));
  assert.ok(rule(VECTORS[46][1]).includes("processing_instruction"));
  assert.ok(rule(VECTORS[47][1]).includes("xml"));
});

Deno.test("sanitizeSvg() keeps safe drawing, drops editor metadata and escapes text", () => {
  const svg = `<svg ${NS} ${XL} xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" ` +
    `width="20" height="10" viewBox="0 0 20 10"><!-- editor note --><metadata><x/></metadata>` +
    `<inkscape:grid/><defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>` +
    `<rect x="1" y="1" width="5" height="5" fill="url(#g)" data-x="1" inkscape:label="r"/>` +
    `<use xlink:href="#g"/><text x="1" y="9">a &lt; b &amp; "c"</text>` +
    `<style>rect > text { fill: url('#g') }</style></svg>`;
  const r = sanitizeSvg(svg);
  assert.deepEqual(r.failures, []);
  assert.ok(r.svg);
  assertInert(r.svg, "safe");
  assert.match(r.svg, /<rect x="1" y="1" width="5" height="5" fill="url\(#g\)"\/>/);
  assert.match(r.svg, /<use xlink:href="#g"\/>/);
  assert.match(r.svg, /a &lt; b &amp; "c"/);
  assert.match(r.svg, /rect &gt; text/);
  assert.doesNotMatch(r.svg, /metadata|inkscape|data-x|editor note/);
  assert.ok(r.removed.includes("comments"));
  assert.ok(r.removed.some((x) => x.includes("metadata")));
  assert.equal(r.view_box, "0 0 20 10");
});

Deno.test("sanitizeSvg() refuses oversize and over-deep documents", () => {
  const big = `<svg ${NS}>${"<g/>".repeat(20000)}</svg>`;
  assert.equal(sanitizeSvg(big).failures[0].rule, "size");
  const deep = `<svg ${NS}>${"<g>".repeat(60)}${"</g>".repeat(60)}</svg>`;
  assert.ok(sanitizeSvg(deep).failures.some((f) => f.rule === "size"));
});

Deno.test("sanitizeSvg() holds the sanitised document to the source limit (escaping cannot grow it)", () => {
  // 60,000 ">" fit the source limit; written as "&gt;" they are four times it.
  const text = `<svg ${NS}><text>${">".repeat(60_000)}</text></svg>`;
  const r = sanitizeSvg(text);
  assert.equal(r.svg, null);
  assert.deepEqual(r.failures.map((f) => f.rule), ["size"]);
  assert.match(r.failures[0].message, /sanitised SVG is 240\d{3} bytes.*the limit is 65536/);
  // A document whose escaped form fits is kept.
  const fits = sanitizeSvg(`<svg ${NS}><text>${">".repeat(16_000)}</text></svg>`);
  assert.deepEqual(fits.failures, []);
  assert.ok(fits.svg!.length <= 65_536);
});

Deno.test("POST /v1/articles/assets refuses an unsafe SVG listing every failure", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/v1/articles/assets",
    jsonInit(
      "POST",
      {
        svg: `<svg ${NS} onload="x()"><script>1</script><image href="https://e.example/a"/></svg>`,
      },
      a.key,
      { "idempotency-key": idemKey() },
    ),
  );
  const details = await assertError(res, 400, "ARTICLE_CHECKS_FAILED");
  assert.equal(details.failures.length, 3);
  assert.deepEqual(details.failures.map((f: { element: string }) => f.element), [
    "svg",
    "svg > script",
    "svg > image",
  ]);
  assert.ok(
    details.failures.every((f: { path: string; line: number }) => f.path === "svg" && f.line === 1),
  );
  assert.equal(details.checks.svg, "failed");
});
