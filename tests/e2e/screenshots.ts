/**
 * `deno task screenshots`: writes a PNG of every page state of the website at desktop
 * (1280×800) and phone (390×844) sizes, in light and dark mode, into
 * tests/e2e/screenshots/ — for a reviewer to look at rather than read — and removes PNGs no
 * state produces any more. Not a test.
 * Where `pngquant` is installed (apt-get install pngquant) the files are quantised to a
 * 64-colour palette (ample for text on flat colours), about a quarter of the size.
 */
import { launchBrowser } from "./browser.ts";
import { SCHEMES, siteFixture, VIEWPORTS } from "./site_states.ts";

const OUT = new URL("./screenshots/", import.meta.url);

/** Quantises a PNG in place with pngquant; false when pngquant is not installed. */
async function shrink(path: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("pngquant", {
      args: ["--force", "--skip-if-larger", "--ext", ".png", "--strip", "--speed", "1", "64", path],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success || out.code === 98; // 98: the quantised file would be larger.
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

await Deno.mkdir(OUT, { recursive: true });
/** The files this run writes; any other PNG in the folder is stale and removed at the end. */
const written = new Set<string>();
let quantised = true;
const browser = await launchBrowser();
try {
  for (const scheme of SCHEMES) {
    for (const v of VIEWPORTS) {
      // A board of its own for each size and scheme: comments posted in one set of
      // screenshots do not show in the next, so all four show the same content.
      await using site = await siteFixture();
      const context = await browser.newContext({
        viewport: { width: v.width, height: v.height },
        colorScheme: scheme,
      });
      const page = await context.newPage();
      for (const state of site.states) {
        await page.goto(site.url + state.path);
        await state.act?.(page);
        const name = `${state.name}-${v.label}-${scheme}.png`;
        const file = new URL(name, OUT);
        await Deno.writeFile(file, await page.screenshot({ fullPage: !state.firstScreen }));
        written.add(name);
        quantised = quantised && await shrink(file.pathname);
        console.log(name);
      }
      await context.close();
    }
  }
} finally {
  await browser.close();
}
for await (const entry of Deno.readDir(OUT)) {
  if (entry.name.endsWith(".png") && !written.has(entry.name)) {
    await Deno.remove(new URL(entry.name, OUT));
    console.log(`removed stale ${entry.name}`);
  }
}
if (!quantised) console.warn("pngquant is not installed: the screenshots are full-colour PNGs.");
