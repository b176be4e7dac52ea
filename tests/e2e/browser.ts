/**
 * Browser tests use Debian's Chromium through playwright-core — never a browser download.
 * Where Chromium is missing they are skipped with a message, unless BOARD_REQUIRE_BROWSER=1
 * (set by .ci/run), which makes a missing browser a failure.
 */
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

export const browserAvailable = exists(CHROMIUM_PATH);
export const browserRequired = Deno.env.get("BOARD_REQUIRE_BROWSER") === "1";

/** True when browser tests must be skipped (and says so once). */
export function skipBrowserTests(): boolean {
  if (browserAvailable || browserRequired) return false;
  console.warn(
    `Browser tests skipped: ${CHROMIUM_PATH} is not installed (apt-get install chromium). ` +
      "Set BOARD_REQUIRE_BROWSER=1 to make this a failure.",
  );
  return true;
}

/** Headless Chromium's launch options, with the flags this closed network needs. */
export const BROWSER_OPTIONS = {
  executablePath: CHROMIUM_PATH,
  headless: true,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
  ],
};

/** Launches headless Chromium with the flags this closed network needs. */
export async function launchBrowser(): Promise<Browser> {
  if (!browserAvailable) throw new Error(`${CHROMIUM_PATH} is required but not installed`);
  return await chromium.launch(BROWSER_OPTIONS);
}

/**
 * The id of the element that has focus once the page has had its chance to move it to `id`:
 * Chromium focuses an `autofocus` field at its next rendering step, which a loaded machine may
 * not have reached when the page's load event fired. Waits at most ten seconds, then answers
 * whatever has focus.
 */
export async function focusedId(page: Page, id: string): Promise<string | null> {
  // Expressions as text: they run in the page, whose globals this module's types do not know.
  await page.waitForFunction(`document.activeElement?.id === ${JSON.stringify(id)}`, null, {
    timeout: 10_000,
  }).catch(() => {});
  return await page.evaluate<string | null>("document.activeElement?.id ?? null");
}
