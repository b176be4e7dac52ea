/**
 * The links rule of guest comment moderation: `countLinks` counts the matches of
 * LINK_PATTERN (URLs with a scheme, `www.`, `mailto:`, bare domains with a common
 * top-level domain) and its work grows linearly with the text, up to the 8,000 code
 * points of a guest comment and past them.
 */
import assert from "node:assert/strict";
import { countLinks, LINK_PATTERN } from "../domain/articles/mod.ts";
import { assertLinearGrowth } from "./growth_helpers.ts";

/** The count the regex itself gives. */
const regexCount = (text: string) => text.match(LINK_PATTERN)?.length ?? 0;

const ORDINARY: [string, number][] = [
  ["Plain words, Node.js and README.md, e.g. this.", 0],
  ["See https://x.example/a?b, www.example.org and shop.xyz", 3],
  ["mailto:someone@example.com", 1],
  ["someone@example.com", 1],
  ["(see example.com)", 1],
  ["Read example.com.", 1],
  ["a.com,b.com", 2],
  ["https://a.com/x,https://b.com", 1],
  ["HTTPS://EXAMPLE.COM", 1],
  ["Visit WWW.Example.NET today", 1],
  ["bücher.de/katalog?x=1", 1],
  // `\b` is ASCII-only: a domain starting with another script is not seen.
  ["пример.com", 0],
  ["пример.рф", 0],
  ["例子.中国", 0],
  ["sub.domain.co.uk", 1],
  ["x.comedy", 0],
  ["x.company.com", 1],
  ["foo.com.bar", 1],
  ["ftp://files.example", 1],
  ["a-b.io", 1],
  ["v1.2.3 and 1.2.3.4", 0],
  ["e.g. i.e. etc.", 0],
  ["http://a.b http://c.d", 2],
  ["link.me/x my.app", 2],
  ["tel:123", 0],
  ["abc://", 0],
  ["x://y", 1],
  ["<https://example.com>", 1],
  ["[text](https://example.com)", 1],
  ["example.com/path and example.org", 2],
  ["git+ssh://host/repo", 1],
  ["the ſite x.ſite and K.\u212Ak", 1],
];

Deno.test("countLinks(): the matches of LINK_PATTERN", async (t) => {
  await t.step("ordinary texts", () => {
    for (const [text, links] of ORDINARY) {
      assert.equal(countLinks(text), links, text);
      assert.equal(regexCount(text), links, text);
    }
  });
  await t.step("the repository's documentation, whole and line by line", async () => {
    for await (const e of Deno.readDir(new URL("../docs/", import.meta.url))) {
      if (!e.name.endsWith(".md")) continue;
      const doc = await Deno.readTextFile(new URL(`../docs/${e.name}`, import.meta.url));
      assert.equal(countLinks(doc), regexCount(doc), e.name);
      for (const line of doc.split("\n")) assert.equal(countLinks(line), regexCount(line), line);
    }
  });
  await t.step("short texts drawn from the pieces links are made of", () => {
    const pieces = [
      ..."abwxW.-/:_+19 \n(),?@é😀\u00a0\u0345\uD800Ⅻü",
      ...["www", "://", "com", "co", "io", "tk", "de", "online", "ſite", "\u212Ak", "日本"],
      ...["http", "mailto:", "MAILTO", "..", "a.", ".com"],
    ];
    let seed = 1;
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    let withLinks = 0;
    for (let k = 0; k < 20_000; k++) {
      let text = "";
      for (let j = 1 + Math.floor(random() * 12); j > 0; j--) {
        text += pieces[Math.floor(random() * pieces.length)];
      }
      const links = regexCount(text);
      assert.equal(countLinks(text), links, JSON.stringify(text));
      if (links > 0) withLinks++;
    }
    assert.ok(withLinks > 2_000, `${withLinks} texts with links`);
  });
});

Deno.test("countLinks(): linear time (1,000 characters against 8,000)", async (t) => {
  // Each was quadratic with the regex: every word boundary scanned to the end of the word.
  for (const unit of ["a.", "a-", "a+", "a.b-", "é.a"]) {
    await t.step(JSON.stringify(unit), () => {
      const times = Math.round(1_000 / unit.length);
      const small = unit.repeat(times);
      const large = unit.repeat(8 * times);
      assertLinearGrowth(unit, countLinks, small, large);
    });
  }
});
