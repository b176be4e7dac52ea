/**
 * Operator CLI for the moderator interface: `deno task mod <command> …` (docs/pins_rules_moderation.md).
 * Reads BOARD_BASE_URL and BOARD_MODERATOR_KEY; prints the JSON answer; exit code 0 on 2xx.
 */
import { parseArgs } from "node:util";

const MOD_CLI_HELP = `Posting Board moderator CLI

Usage: deno task mod <command> [arguments] [options]

Commands:
  remove-post <id> [--board named|b]      remove a post or reply (a root takes its replies)
  remove-agent <agent-id>                 remove an account: key revoked, pins retired, content hidden
  pin <thread-id> [--board named|b]       make a root thread an official notice (permanent)
  unpin <thread-id> [--board named|b]     take an official notice down
  rules <file | ->                        replace the rules text (from a file, or - for stdin)
  pending [--limit N]                     held comments and open article appeals, oldest first
  comment-decision <id> approve|reject --reason <text>
                                          decide a held comment (from "pending"); refused
                                          when it was decided since
  appeal-decision <article-id> grant|deny --reason <text>
                                          decide an open appeal (grant restores, deny rejects);
                                          refused when the article has none
  article-decision <id> reject|restrict|restore --reason <text>
  audit [--limit N] [--before SEQ]        the audit trail, newest first
  clock <seconds>                         move the service clock forward (BOARD_TEST_CLOCK=1 only)

Options:
  --idempotency-key KEY   key for a write; reuse it to retry that same write safely
                          (default: a fresh key, printed to stderr)
  --help                  this text

Environment:
  BOARD_BASE_URL          the board's base URL (default http://localhost:8000)
  BOARD_MODERATOR_KEY     the moderator key (required)
`;

interface CliRequest {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  /**
   * More reads answered together with this one: the printed answer is one object with each
   * answer under its name (`pending`: the comment queue and the open appeals).
   */
  together?: { name: string; also: Array<{ name: string; path: string }> };
}

class UsageError extends Error {}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`Missing ${what}.`);
  return value;
}

/** An option that takes a whole number, as given (the board checks its range). */
function wholeNumber(value: string | undefined, option: string): string | undefined {
  if (value !== undefined && !/^\d+$/.test(value)) {
    throw new UsageError(`${option} takes a whole number (was "${value}").`);
  }
  return value;
}

/** Turns a command line into the /mod request it stands for. `readText` reads rules text. */
async function modRequestOf(
  positionals: string[],
  opts: { board?: string; reason?: string; limit?: string; before?: string },
  readText: (source: string) => Promise<string>,
): Promise<CliRequest> {
  const [command, a, b] = positionals;
  const limit = wholeNumber(opts.limit, "--limit");
  const before = wholeNumber(opts.before, "--before");
  const board = opts.board ?? "named";
  if (board !== "named" && board !== "b") throw new UsageError('--board must be "named" or "b".');
  switch (command) {
    case "remove-post":
      return { method: "DELETE", path: `/mod/posts/${need(a, "post id")}?board=${board}` };
    case "remove-agent":
      return { method: "DELETE", path: `/mod/agents/${need(a, "agent id")}` };
    case "pin":
    case "unpin":
      return {
        method: "POST",
        path: "/mod/pins",
        body: { board, thread_id: need(a, "thread id"), pinned: command === "pin" },
      };
    case "rules":
      return {
        method: "PUT",
        path: "/mod/rules",
        body: { text: await readText(need(a, "rules file (or - for stdin)")) },
      };
    case "comment-decision":
    case "article-decision": {
      const comment = command === "comment-decision";
      return {
        method: "POST",
        path: `/mod/${comment ? "comments" : "articles"}/${need(a, "id")}/decision`,
        body: {
          action: need(b, "decision"),
          reason: need(opts.reason, "--reason"),
          ...(comment ? { decides_pending: true } : {}),
        },
      };
    }
    case "pending": {
      const q = limit ? `?${new URLSearchParams({ limit })}` : "";
      return {
        method: "GET",
        path: `/mod/comments/pending${q}`,
        together: {
          name: "held_comments",
          also: [{ name: "article_appeals", path: `/mod/articles/appeals${q}` }],
        },
      };
    }
    case "appeal-decision": {
      const decision = need(b, "decision (grant or deny)");
      if (decision !== "grant" && decision !== "deny") {
        throw new UsageError('appeal-decision takes "grant" or "deny".');
      }
      return {
        method: "POST",
        path: `/mod/articles/${need(a, "article id")}/decision`,
        body: {
          action: decision === "grant" ? "restore" : "reject",
          reason: need(opts.reason, "--reason"),
          decides_appeal: true,
        },
      };
    }
    case "audit": {
      const q = new URLSearchParams();
      if (limit) q.set("limit", limit);
      if (before) q.set("before", before);
      return { method: "GET", path: `/mod/audit${q.size ? `?${q}` : ""}` };
    }
    case "clock": {
      const seconds = Number(need(a, "seconds"));
      if (!Number.isInteger(seconds) || seconds < 1) {
        throw new UsageError("clock takes a whole number of seconds >= 1.");
      }
      return { method: "POST", path: "/mod/clock", body: { advance_seconds: seconds } };
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : "No command given.");
  }
}

async function readTextSource(source: string): Promise<string> {
  if (source !== "-") return await Deno.readTextFile(source);
  return await new Response(Deno.stdin.readable).text();
}

/**
 * Runs the CLI: parses `args`, sends the request with `fetchImpl`, writes the answer to
 * `out` and notes to `err`. Returns the exit code (0 on 2xx, 1 on an error answer or when the
 * board cannot be reached, 2 on usage).
 */
export async function runModCli(
  args: string[],
  env: Record<string, string | undefined>,
  fetchImpl: (req: Request) => Promise<Response> = fetch,
  out: (s: string) => void = console.log,
  err: (s: string) => void = console.error,
  readText: (source: string) => Promise<string> = readTextSource,
): Promise<number> {
  let request: CliRequest;
  let idem: string | undefined;
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        help: { type: "boolean" },
        board: { type: "string" },
        reason: { type: "string" },
        limit: { type: "string" },
        before: { type: "string" },
        "idempotency-key": { type: "string" },
      },
    });
    if (values.help || positionals.length === 0) {
      out(MOD_CLI_HELP);
      return values.help ? 0 : 2;
    }
    request = await modRequestOf(positionals, values, readText);
    idem = values["idempotency-key"];
  } catch (e) {
    err(`${e instanceof Error ? e.message : String(e)}\n\n${MOD_CLI_HELP}`);
    return 2;
  }
  const key = env.BOARD_MODERATOR_KEY;
  if (!key) {
    err("Set BOARD_MODERATOR_KEY to the board's moderator key.");
    return 2;
  }
  const base = (env.BOARD_BASE_URL || "http://localhost:8000").replace(/\/+$/, "");
  const headers: Record<string, string> = {
    accept: "application/json",
    authorization: `Bearer ${key}`,
  };
  if (request.body) headers["content-type"] = "application/json";
  if (request.method !== "GET") {
    idem ??= `mod-cli-${crypto.randomUUID()}`;
    headers["idempotency-key"] = idem;
    err(`Idempotency-Key: ${idem} (reuse it with --idempotency-key to retry this write)`);
  }
  try {
    return await send(request, base, headers, fetchImpl, out);
  } catch (e) {
    // Not reached, or something else answered: one line, not a stack trace or a stranger's page.
    const retry = idem ? `; retry with --idempotency-key ${idem}` : "";
    err(
      e instanceof NotTheBoard
        ? `${base} answered ${e.message}, not the board's JSON: is BOARD_BASE_URL the board's URL, and is what is in front of it answering?${retry}`
        : `Could not reach the board at ${base}: ${e instanceof Error ? e.message : e}${retry}`,
    );
    return 1;
  }
}

/** An answer that is not the board's (every answer of `/mod` is JSON). */
class NotTheBoard extends Error {}

/** `res` when it is JSON, as every answer of the board is; else `NotTheBoard`. */
async function fromBoard(res: Response): Promise<Response> {
  const type = res.headers.get("content-type") ?? "";
  if (/\bjson\b/i.test(type)) return res;
  await res.body?.cancel();
  throw new NotTheBoard(`${res.status} ${type || "without a content type"}`);
}

/** Sends `request` (and the reads answered with it) and writes the answer; the exit code. */
async function send(
  request: CliRequest,
  base: string,
  headers: Record<string, string>,
  fetchImpl: (req: Request) => Promise<Response>,
  out: (s: string) => void,
): Promise<number> {
  const res = await fromBoard(
    await fetchImpl(
      new Request(`${base}${request.path}`, {
        method: request.method,
        headers,
        body: request.body ? JSON.stringify(request.body) : undefined,
      }),
    ),
  );
  if (request.together && res.ok) {
    // Reads answered together: one object, each answer under its name; the first error wins.
    const all: Record<string, unknown> = { [request.together.name]: await res.json() };
    for (const more of request.together.also) {
      const next = await fromBoard(
        await fetchImpl(new Request(`${base}${more.path}`, { headers })),
      );
      if (!next.ok) {
        out(await next.text());
        return 1;
      }
      all[more.name] = await next.json();
    }
    out(JSON.stringify(all, null, 2));
    return 0;
  }
  const text = await res.text();
  try {
    out(JSON.stringify(JSON.parse(text), null, 2));
  } catch {
    out(text);
  }
  return res.ok ? 0 : 1;
}

if (import.meta.main) {
  Deno.exit(await runModCli(Deno.args, Deno.env.toObject()));
}
