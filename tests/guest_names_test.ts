/**
 * Guest names that pose as someone (domain/articles/guest_names.ts): the skeleton that makes case,
 * width, accents, invisible characters, separators and look-alike letters and digits
 * irrelevant, and the refusal of the article's author, registered agents and staff words.
 */
import assert from "node:assert/strict";
import { BoardError } from "../domain/errors.ts";
import { indexAgentNameSkeletons, nameSkeleton, wordRunSkeletons } from "../domain/accounts/mod.ts";
import { agentNamed, refuseGuestName, RESERVED_GUEST_NAMES } from "../domain/articles/mod.ts";
import type { Deps } from "../domain/deps.ts";
import { keys } from "../kv/keys.ts";
import { register, testBoard } from "./helpers.ts";

/**
 * Checks a guest name as a guest comment does: the agent it reads as (`agentNamed`), then the
 * refusal (`refuseGuestName`).
 */
async function checkName(deps: Deps, name: string | null, author: string): Promise<void> {
  refuseGuestName(name, author, await agentNamed(deps, name));
}

/** The refusal's reason, or null when the name is allowed. */
async function refusal(
  deps: Deps,
  name: string | null,
  author = "seed-kit",
): Promise<string | null> {
  try {
    await checkName(deps, name, author);
    return null;
  } catch (e) {
    assert.ok(e instanceof BoardError, String(e));
    assert.equal(e.code, "INVALID_INPUT");
    assert.equal(e.details?.field, "name");
    return String(e.details?.reason);
  }
}

Deno.test("nameSkeleton() folds what a reader cannot tell apart", async (t) => {
  await t.step("case, width, accents, separators, invisible characters", () => {
    const seedKit = nameSkeleton("seed-kit");
    for (
      const variant of [
        "Seed-Kit",
        "SEED KIT",
        "seed_kit",
        "seed.kit",
        "seedkit",
        " seed - kit ",
        "ｓｅｅｄ－ｋｉｔ", // fullwidth
        "séed-kït",
        "seed\u200B-kit", // zero-width space
        "seed\u00AD-kit", // soft hyphen
        "\u202Eseed-kit", // right-to-left override
        "seed\u115Fkit", // Hangul choseong filler: a letter that shows nothing
        "seed-\u3164kit", // Hangul filler
        "seed\uFFA0-kit", // halfwidth Hangul filler
        "𝐬𝐞𝐞𝐝-𝐤𝐢𝐭", // mathematical bold
      ]
    ) assert.equal(nameSkeleton(variant), seedKit, JSON.stringify(variant));
  });
  await t.step("Cyrillic and Greek look-alikes", () => {
    assert.equal(nameSkeleton("ѕееd-kіt"), nameSkeleton("seed-kit")); // Cyrillic ѕ е е і
    assert.equal(nameSkeleton("Моdеrаtоr"), nameSkeleton("moderator")); // Cyrillic М о е а о
    assert.equal(nameSkeleton("ΑDΜΙΝ"), nameSkeleton("admin")); // Greek Α Μ Ι Ν
    assert.equal(nameSkeleton("ΒΟΑRD"), nameSkeleton("board")); // Greek Β Ο Α
    assert.equal(nameSkeleton("ореrаtоr"), nameSkeleton("operator")); // Cyrillic о р е а о
  });
  await t.step("letters in boxes: negative circled, negative squared, regional indicators", () => {
    for (const boxed of ["🅜🅞🅓🅔🅡🅐🅣🅞🅡", "🅼🅾🅳🅴🆁🅰🆃🅾🆁", "🇲 🇴 🇩 🇪 🇷 🇦 🇹 🇴 🇷"]) {
      assert.equal(nameSkeleton(boxed), nameSkeleton("moderator"), boxed);
    }
    assert.ok(wordRunSkeletons("🅼🅾🅳 team").has(nameSkeleton("mod")), "a boxed word is a word");
  });
  await t.step("small capitals", () => {
    for (
      const [small, plain] of [["ᴍᴏᴅᴇʀᴀᴛᴏʀ", "moderator"], ["ᴀᴅᴍɪɴ", "admin"], ["ʙᴏᴀʀᴅ", "board"]]
    ) {
      assert.equal(nameSkeleton(small), nameSkeleton(plain), small);
    }
    assert.equal(nameSkeleton("ꜱᴛᴀꜰꜰ"), nameSkeleton("staff"));
    assert.equal(nameSkeleton("ꞯᴜɪᴇᴛ ᴊᴀᴢᴢ ᴘʟᴀʏᴇʀ"), nameSkeleton("quiet jazz player"));
  });
  await t.step("digit and letter swaps: 0/o, 1/l/i/I", () => {
    assert.equal(nameSkeleton("M0derator"), nameSkeleton("moderator"));
    assert.equal(nameSkeleton("adm1n"), nameSkeleton("admin"));
    assert.equal(nameSkeleton("AdmIn"), nameSkeleton("admln"));
    assert.equal(nameSkeleton("b0ard"), nameSkeleton("board"));
  });
  await t.step("different names stay different; other scripts are kept", () => {
    assert.notEqual(nameSkeleton("seed-kits"), nameSkeleton("seed-kit"));
    assert.notEqual(nameSkeleton("Anna"), nameSkeleton("Anne"));
    assert.ok(nameSkeleton("ليلى").length > 0);
    assert.equal(nameSkeleton("王小明"), "王小明");
    assert.notEqual(nameSkeleton("ليلى"), nameSkeleton("王小明"));
    assert.equal(nameSkeleton("-- ** --"), "");
  });
});

Deno.test("a guest name that reads as the author, a registered agent or a staff word is refused", async (t) => {
  await using board = await testBoard();
  const deps = board.deps;
  const agent = await register(board, "lola-bot");
  assert.equal(agent.name, "lola-bot");
  await register(board, "0xide-9");

  await t.step("the article's author, however written", async () => {
    for (const name of ["seed-kit", "Seed Kit", "SEED-K1T", "ѕееd-kіt", "seed\u200Bkit"]) {
      assert.equal(await refusal(deps, name), "author", name);
    }
  });
  await t.step("a registered agent that is not the author", async () => {
    for (
      const name of [
        "lola-bot",
        "Lola Bot",
        "L0LA-B0T",
        "1ola_bot",
        "IoIa-bot",
        "Ⅼola-bot",
        "Oxide 9",
        "OXIDE-9",
      ]
    ) {
      assert.equal(await refusal(deps, name), "agent", name);
    }
  });
  await t.step("the staff words", async () => {
    for (const word of RESERVED_GUEST_NAMES) {
      assert.equal(await refusal(deps, word, "someone-else"), "reserved", word);
    }
    for (
      const name of [
        "Moderator",
        "MODERATOR",
        "M0derator",
        "Моdеrаtоr",
        "ΑDΜΙΝ",
        "Posting-Board",
        "ᴍᴏᴅᴇʀᴀᴛᴏʀ ᴛᴇᴀᴍ",
        "ᴏᴘᴇʀᴀᴛᴏʀ",
        "🅜🅞🅓🅔🅡🅐🅣🅞🅡",
        "🅼🅾🅳",
        "🇲 🇴 🇩",
        "🅼🅾🅳 team",
      ]
    ) {
      assert.equal(await refusal(deps, name, "someone-else"), "reserved", name);
    }
  });
  await t.step("ordinary names, empty names and other scripts pass", async () => {
    for (
      const name of [
        "Anna",
        "lola",
        "Jane from Leeds",
        "ليلى",
        "王小明",
        "guest",
        "anonymous",
        "...",
      ]
    ) assert.equal(await refusal(deps, name), null, name);
    assert.equal(await refusal(deps, null), null);
  });
  await t.step("the message says why, and names the agent", async () => {
    await assert.rejects(
      () => checkName(deps, "LOLA-BOT", "seed-kit"),
      /reads as "lola-bot", an agent registered on this board/,
    );
    await assert.rejects(
      () => checkName(deps, "Seed Kit", "seed-kit"),
      /reads as "seed-kit", the agent who wrote this article/,
    );
  });
});

Deno.test("guest names: Unicode confusables, multi-letter look-alikes, and names contained as words", async (t) => {
  await using board = await testBoard();
  const deps = board.deps;
  await register(board, "veteran-kit");
  await t.step(
    "Unicode's confusables data: Greek ν is v, Armenian օ is o, Latin ɑ is a",
    async () => {
      assert.equal(await refusal(deps, "νeteran-kit", "someone-else"), "agent"); // Greek nu
      assert.equal(await refusal(deps, "օperator", "someone-else"), "reserved"); // Armenian oh
      assert.equal(await refusal(deps, "ɑdmin", "someone-else"), "reserved"); // Latin alpha
    },
  );
  await t.step("multi-letter look-alikes: rn reads as m, vv as w, cl as d", async () => {
    assert.equal(await refusal(deps, "rnoderator", "someone-else"), "reserved");
    assert.equal(await refusal(deps, "ADMlN", "someone-else"), "reserved");
    assert.equal(nameSkeleton("vvilma"), nameSkeleton("wilma"));
    assert.equal(nameSkeleton("clelta"), nameSkeleton("delta"));
  });
  await t.step("a reserved word or an agent's name contained as words", async () => {
    for (
      const name of [
        "Moderator team",
        "Moderator Jane",
        "ModeratorTeam",
        "Posting Board staff",
        "the admins",
        "Board",
        "system (official)",
        // A filler shows as a space: the words it separates are words.
        "Jane\u3164Moderator",
        "the\u115Fadmins",
      ]
    ) assert.equal(await refusal(deps, name, "someone-else"), "reserved", JSON.stringify(name));
    assert.equal(await refusal(deps, "a fan of\u3164veteran-kit", "someone-else"), "agent");
    assert.equal(await refusal(deps, "seed-kit (author)"), "author");
    assert.equal(await refusal(deps, "Seed Kit fan"), "author");
    assert.equal(await refusal(deps, "a fan of veteran-kit", "someone-else"), "agent");
    assert.equal(await refusal(deps, "Veteran Kit here", "someone-else"), "agent");
  });
  await t.step("words that only share letters with a name pass", async () => {
    for (const name of ["Seedling", "Kitty", "Veterans of Leeds", "Moderate reader", "Boardwalk"]) {
      assert.equal(await refusal(deps, name, "seed-kit"), null, name);
    }
  });
});

Deno.test("agents registered before the name index are found once start-up builds it", async () => {
  await using board = await testBoard();
  // An agent stored without its index entry, as before the index existed.
  const id = crypto.randomUUID();
  await board.kv.set(keys.agentIdByName("quiet-owl"), id);
  assert.equal(await refusal(board.deps, "Quiet Owl", "someone-else"), null, "not indexed yet");
  await board.kv.delete(keys.metaNameIndexVersion());
  assert.ok((await indexAgentNameSkeletons(board.deps)) >= 1);
  assert.equal(await refusal(board.deps, "Quiet Owl", "someone-else"), "agent");
  assert.equal(await indexAgentNameSkeletons(board.deps), 0, "built once per skeleton version");
});
