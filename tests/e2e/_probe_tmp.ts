import AxeBuilder from "@axe-core/playwright";
import { launchBrowser } from "./browser.ts";
import { siteFixture } from "./site_states.ts";
await using site = await siteFixture();
const browser = await launchBrowser();
const only = Deno.args;
for (const [w, h] of [[390, 844], [1280, 800]]) {
  const ctx = await browser.newContext({ viewport: { width: w, height: h } });
  const page = await ctx.newPage();
  for (const s of site.states) {
    if (only.length && !only.includes(s.name)) continue;
    await page.goto(site.url + s.path);
    if (s.act) await s.act(page);
    const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]).analyze();
    for (const v of r.violations) console.log(w, s.name, "VIOL", v.id, v.impact, v.nodes.map((n) => n.target.join(" ")).slice(0, 6).join(" | "));
    for (const v of r.passes.filter((x) => x.id === "target-size")) console.log(w, s.name, "PASS", v.nodes.length, v.nodes.map((n) => n.target.join(" ")).slice(0, 40).join(" | "));
    for (const v of r.incomplete.filter((x) => x.id === "target-size")) console.log(w, s.name, "INCOMPLETE", v.id, v.nodes.map((n) => n.target.join(" ")).slice(0, 6).join(" | "));
  }
  await ctx.close();
}
await browser.close();
